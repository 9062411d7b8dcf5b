"""Dask users' habits (issue 14 §6, issue 15) with real CPU clusters: await, client.close(), scaling outside
the kit, a Client(...) of one's own, and computing after session.close()."""

from __future__ import annotations

import asyncio
import warnings

import dask
import dask.array as da
import psutil
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import KitWarning, OptionError, registry
from gpu_dask_kit.clients import SessionClosedError

from .conftest import wait_for_no_new_children

SMALL = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def _worker_pids(session):
    return sorted(w.pid for w in session.memory().workers)


# --- await ---------------------------------------------------------------------------------------------


def test_asynchronous_start_is_awaited_and_its_client_awaits(no_leaks, capsys):
    async def main():
        session = await kit.start_cluster(asynchronous=True, **SMALL)
        assert session.asynchronous and session.client.asynchronous
        assert await session.client.submit(sum, [1, 2, 3]) == 6  # `await future`, the async notebooks' habit
        total = await session.client.compute(da.arange(1000, chunks=100).sum())
        assert session.n_workers == 2 and len(_worker_pids(session)) == 2
        assert kit.current_session() is session
        await session.close()
        return session, total

    session, total = asyncio.run(main())
    assert total == 499500 and session.closed
    assert capsys.readouterr().out.startswith("Started a CPU cluster with 2 worker(s).")
    assert not wait_for_no_new_children(no_leaks) and registry.list_sessions() == []


def test_asynchronous_start_as_a_context_manager(no_leaks):
    async def main():
        async with kit.start_cluster(asynchronous=True, verbose=False, n_workers=1, memory_limit="1GiB") as session:
            assert await session.client.submit(lambda: 40 + 2) == 42
        return session

    session = asyncio.run(main())
    assert session.closed and kit.current_session() is None
    assert not wait_for_no_new_children(no_leaks)


def test_asynchronous_session_reused_by_synchronous_code_and_back(no_leaks, capsys):
    async def main():
        session = await kit.start_cluster(asynchronous=True, verbose=False, n_workers=1, memory_limit="1GiB")
        async_client = session.client
        again = await asyncio.to_thread(kit.start_cluster, n_workers=1, memory_limit="1GiB")  # synchronous code
        assert again is session and not again.asynchronous and not again.client.asynchronous
        assert await asyncio.to_thread(lambda: da.arange(10, chunks=5).sum().compute()) == 45  # a synchronous default client
        back = await kit.start_cluster(asynchronous=True, verbose=False, n_workers=1, memory_limit="1GiB")
        assert back is session and back.client is async_client and await back.client.submit(sum, [2, 3]) == 5
        await back.close()
        return session

    session = asyncio.run(main())
    assert capsys.readouterr().out.startswith("Reusing the running CPU cluster (same options)")
    assert session.closed and not wait_for_no_new_children(no_leaks)


def test_asynchronous_must_be_a_bool():
    with pytest.raises(OptionError, match="asynchronous='yes' is not accepted: expected True or False"):
        kit.start_cluster(asynchronous="yes")


def test_synchronous_default_is_unchanged(no_leaks):
    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    assert not session.asynchronous and not session.client.asynchronous
    assert session.close() is None and session.closed


# --- client.close() ------------------------------------------------------------------------------------


def test_client_close_then_rerun_reuses_the_running_cluster(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    pids = _worker_pids(session)
    session.client.close()  # how dask-tutorial's notebooks end: the cluster keeps running
    capsys.readouterr()
    again = kit.start_cluster(**SMALL)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Reusing the running CPU cluster (same options): its client had been closed"), first
    assert again is session and again.client.status == "running"
    assert _worker_pids(again) == pids  # the same two workers, not two more beside them
    assert again.client.submit(sum, [1, 2]).result() == 3
    assert len(registry.list_sessions()) == 1
    again.close()
    assert not wait_for_no_new_children(no_leaks)


def test_client_close_then_other_options_close_the_old_cluster(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    pids = _worker_pids(session)
    session.client.close()
    capsys.readouterr()
    other = kit.start_cluster(**{**SMALL, "n_workers": 1})
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "Closing the running CPU cluster first, because options changed (n_workers: 2 -> 1). "
        "Its client had been closed (client.close() leaves a cluster running)."
    )
    assert session.closed and other is not session and other.n_workers == 1
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    assert len(registry.list_sessions()) == 1
    other.close()


def test_cluster_closed_by_hand_is_replaced(no_leaks, capsys):
    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    session.client.cluster.close()
    fresh = kit.start_cluster(n_workers=1, memory_limit="1GiB")
    assert fresh is not session and session.closed and fresh.is_alive()
    assert capsys.readouterr().out.startswith("Started a CPU cluster with 1 worker(s).")
    fresh.close()


# --- scaled outside the kit ----------------------------------------------------------------------------


def test_rerun_after_scaling_outside_says_what_runs_and_scales_back(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    session.client.cluster.scale(3)  # not session.scale(): the kit's options still say 2
    session.client.wait_for_workers(3, timeout=120)
    capsys.readouterr()
    again = kit.start_cluster(**SMALL)
    first = capsys.readouterr().out.splitlines()[0]
    assert again is session
    assert first == (
        "Reusing the running CPU cluster (same options), which had been scaled to 3 worker(s) outside the kit "
        "(3 running): scaled it back to the 2 this call asks for. session.close() to start afresh."
    )
    assert again.n_workers == 2 and len(again.client.cluster.worker_spec) == 2
    # and a plain re-run now really is "same options"
    kit.start_cluster(**SMALL)
    assert capsys.readouterr().out.splitlines()[0] == "Reusing the running CPU cluster (same options); session.close() to start afresh."
    again.close()


def test_rerun_leaves_an_adaptive_cluster_as_it_is_and_says_so(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    session.client.cluster.adapt(minimum=3, maximum=3)
    session.client.wait_for_workers(3, timeout=120)
    capsys.readouterr()
    assert kit.start_cluster(**SMALL) is session
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Reusing the running CPU cluster (same options); it is adaptive and has 3 worker(s) now (asked for 3), left as it is."), first
    assert session.n_workers == 3
    session.close()


# --- a Client(...) of one's own ------------------------------------------------------------------------


def test_own_client_after_start_cluster_is_said(no_leaks):
    from distributed import Client, LocalCluster

    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = Client(session.scheduler_address, security=session.cluster.security)  # another client of the kit's own cluster (TLS): nothing to say
        assert kit.current_session() is session
        same.close()
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    other = Client(cluster)  # the notebook's own cluster: computations go there from now on
    try:
        with pytest.warns(KitWarning, match="Dask's default client is now .* run on its cluster, while current_session"):
            assert kit.current_session() is session
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # said once per client, not at every call
            session.memory()
        assert da.arange(10, chunks=5).sum().compute() == 45
    finally:
        other.close()
        cluster.close()
    session.close()


def test_own_client_warning_names_both_clusters(no_leaks):
    from distributed import Client, LocalCluster

    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    other = Client(cluster)
    try:
        with pytest.warns(KitWarning) as record:
            session.memory()
        text = str(record[0].message)
        assert other.id in text and cluster.scheduler_address in text and session.scheduler_address in text
        assert "session.memory() and the kit's hints describe the kit's cluster" in text
        from gpu_dask_kit.notebook.hints import explain

        hint = explain(MemoryError("out of memory"))  # the out-of-memory hint does not quote the kit's limits
        assert "not on the kit's: the kit's limits do not apply" in hint and "may use" not in hint
    finally:
        other.close()
        cluster.close()
    session.close()


# --- after session.close() -----------------------------------------------------------------------------


def test_compute_after_close_says_the_cluster_is_closed(no_leaks):
    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    x = da.arange(100, chunks=10).sum()
    assert x.compute() == 4950
    session.close()
    with pytest.raises(SessionClosedError, match=r"cluster was closed \(session.close\(\)\).*start_cluster\(\)"):
        x.compute()
    assert dask.compute(x, scheduler="threads")[0] == 4950  # computing locally on purpose still works
    with dask.config.set(scheduler="threads"):
        assert x.compute() == 4950
    again = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")  # a new cluster takes over
    assert x.compute() == 4950 and dask.config.get("scheduler", None) == "dask.distributed"
    again.close()


def test_own_client_after_close_is_used(no_leaks):
    from distributed import Client, LocalCluster

    kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB").close()
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    client = Client(cluster)
    try:
        assert da.arange(10, chunks=5).sum().compute() == 45
    finally:
        client.close()
        cluster.close()


def test_notebook_cell_that_makes_its_own_client_is_told(runtime_dir, tmp_path):
    """In a real Jupyter kernel: the cell that makes another default Client gets the warning itself."""
    from .conftest import kit_children
    from .reliability.kernels import Kernel, end, tree

    async def main():
        kernel = Kernel(runtime_dir, tmp_path / "kernel.log", tmp_path)
        await kernel.start()
        procs = []
        try:
            await kernel.execute('import gpu_dask_kit as kit\nsession = kit.start_cluster(n_workers=1, memory_limit="1GiB")', timeout=180)
            own = await kernel.execute(
                "from distributed import Client, LocalCluster\n"
                "cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=None)\n"
                "client = Client(cluster)"
            )
            quiet = await kernel.execute("x = 1 + 1")  # said once, in the cell that made the client
            await kernel.execute("client.close(); cluster.close(); session.close()", timeout=120)
            return own, quiet
        finally:
            procs = tree(kernel.pid)
            await kernel.shutdown(now=False)
            end(procs[1:])

    before = kit_children()
    own, quiet = asyncio.run(main())
    assert "KitWarning: Dask's default client is now" in own.stderr, own.streams
    assert "describe the kit's cluster" in own.stderr and "KitWarning" not in quiet.stderr
    assert not wait_for_no_new_children(before)


def test_async_example_script(runtime_dir, tmp_path):
    from .test_script_guard import ROOT, run_script

    argv = [str(ROOT / "examples" / "async_script.py"), "--device", "cpu", "--n-workers", "2", "--memory-limit", "1GiB"]
    run = run_script(argv, runtime_dir, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "mode=cpu workers=2 sum of squares=285 array sum=499500" in run.stdout
    assert list(runtime_dir.glob("session-*.json")) == []
