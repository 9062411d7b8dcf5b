"""Async mode without traps, re-run errors in plain words, stale sessions, connect mode and unknown resources.
Notebook behaviour runs in a real kernel; the rest with real CPU clusters."""

from __future__ import annotations

import asyncio
import os
import time

import dask.array as da
import psutil
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import OptionError, registry
from gpu_dask_kit.session_info import plain_reason

from .conftest import wait_for_no_new_children
from .helpers import start_kernel
from .test_hints import _run  # one cell in a real kernel: (status, output)

SMALL = {"device": "cpu", "n_workers": 1, "threads_per_worker": 1, "memory_limit": "1GiB"}


def test_notebook_async_and_rerun_habits_in_a_real_kernel(runtime_dir):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        opts = "device='cpu', n_workers=1, threads_per_worker=1, memory_limit='1GiB'"
        status, out = _run(kc, f"import gpu_dask_kit as kit\ns = kit.start_cluster({opts}, verbose=False)\nf = s.client.submit(sum, [1, 2])")
        assert status == "ok", out
        status, out = _run(kc, "await f")  # a synchronous session's future, awaited
        assert status == "error" and "gpu-dask-kit: `await` needs an asynchronous client" in out and "asynchronous=True" in out, out
        status, out = _run(kc, "x = s.client.submit(sum, [1, 2]); y = s.client.submit(lambda a: a + 1, x); print(y.result())")
        assert status == "ok" and out.strip() == "4", out
        _run(kc, "_ = s.client.restart()")
        status, out = _run(kc, "y.result()")
        assert status == "error" and "gpu-dask-kit: the cluster restarted" in out and "`y` (In [3])" in out, out
        assert "distributed/client.py" not in out, out  # one line of error, not distributed's internals
        _run(kc, "s.close()")
        status, out = _run(kc, "s.client.submit(sum, [1]).result()")
        assert status == "error" and "ClosedClientError" in out and "re-run the cell that starts the cluster (In [1])" in out, out
        status, out = _run(kc, "f.result()")
        assert status == "error" and "RuntimeError" in out and "IOLoop is closed" not in out and "has been closed since" in out, out
        # async mode: start without await says what to write; close without await still closes
        status, out = _run(kc, "pending = kit.start_cluster(asynchronous=True)\npending.client")
        assert status == "error" and "session = await gpu_dask_kit.start_cluster(asynchronous=True" in out, out
        status, out = _run(kc, f"a = await kit.start_cluster(asynchronous=True, {opts}, verbose=False)\nprint(await a.client.submit(sum, [1, 2]))")
        assert status == "ok" and out.strip() == "3", out
        status, out = _run(kc, f"again = await kit.start_cluster(asynchronous=True, {opts})")
        assert "await session.close() to start afresh" in out, out
        status, out = _run(kc, "pids = [p.pid for p in a.record.live_processes()]\nr = a.close()")  # no await
        assert status == "ok", out
        wait = "import asyncio, psutil\nfor _ in range(150):\n    if not any(psutil.pid_exists(p) for p in pids): break\n    await asyncio.sleep(0.2)\n"
        status, out = _run(kc, wait + "print(a.closed, [p for p in pids if psutil.pid_exists(p)])")
        assert status == "ok" and out.strip() == "True []", out
        status, out = _run(kc, f"b = await kit.start_cluster(asynchronous=True, {opts}, verbose=False)\nawait b.close()\nprint(b.closed)")
        assert status == "ok" and out.strip() == "True", out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_close_on_a_replaced_session_closes_the_current_one(no_leaks, capsys):
    old = kit.start_cluster(**SMALL, verbose=False)
    current = kit.start_cluster(**{**SMALL, "n_workers": 2}, verbose=False)
    pids = [p.pid for p in current.record.live_processes()]
    capsys.readouterr()
    old.close()  # the notebook's last cell, on the stale `session`
    said = capsys.readouterr().out
    assert "replaced by a later start_cluster() (a CPU cluster with 2 worker(s), the current session): closing that one" in said
    assert current.closed and kit.current_session() is None
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    old.close()  # again: nothing left to close, nothing said
    assert capsys.readouterr().out == ""


def test_a_task_asking_for_a_resource_no_worker_has_is_refused_within_seconds(no_leaks):
    from distributed.client import FutureCancelledError

    with kit.start_cluster(**SMALL, verbose=False) as session:
        started = time.monotonic()
        with pytest.raises(FutureCancelledError, match=r"resources=\{'GPU': 1\}, but none of the 1 worker\(s\) has that \(they declare no resources"):
            session.client.submit(sum, [1, 2], resources={"GPU": 1}).result(timeout=60)
        assert time.monotonic() - started < 15
        assert session.client.submit(sum, [2, 2], pure=False).result() == 4  # the cluster is fine


def test_a_refused_task_with_a_held_result_below_an_unheld_one_is_refused_with_it(no_leaks):
    """a (asks for a GPU) -> b (dropped by the notebook) -> c (held): cancelling a and c in one forced call reached b,
    which no client holds, and distributed's stimulus_cancel asserted; a and c then waited forever."""
    from operator import add

    from distributed.client import FutureCancelledError

    with kit.start_cluster(**SMALL, verbose=False) as session:
        a = session.client.submit(add, 1, 1, resources={"GPU": 1}, key="refused-a")
        b = session.client.submit(add, a, 1, key="refused-b")
        c = session.client.submit(add, b, 1, key="refused-c")
        del b
        for held in (c, a):
            with pytest.raises(FutureCancelledError, match=r"resources=\{'GPU': 1\}, but none of the 1 worker\(s\)"):
                held.result(timeout=60)
        assert session.client.submit(sum, [2, 3], pure=False).result() == 5
        assert session.client.status == "running"


def test_connect_mode_names_what_it_ignores_and_disconnects(no_leaks, capsys):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", dashboard_address=":0") as cluster:
        session = kit.start_cluster(scheduler_address=cluster.scheduler_address, n_workers=4, memory_limit="2GiB")
        said = capsys.readouterr().out
        assert "Ignored in connect mode: memory_limit=2147483648, n_workers=4." in said, said
        again = kit.start_cluster(scheduler_address=cluster.scheduler_address, n_workers=4, memory_limit="2GiB", verbose=False)
        assert again is session
        kit.start_cluster(scheduler_address=cluster.scheduler_address, verbose=True)
        said = capsys.readouterr().out
        assert said.startswith(f"Disconnecting from the scheduler at {cluster.scheduler_address} first") and "keeps running" in said, said
        assert "Closing the running" not in said
        kit.current_session().close()
        assert cluster.status.name == "running"
    assert not wait_for_no_new_children(no_leaks)


def test_cpu_start_message_is_plain_and_gives_the_dashboard(no_leaks, capsys):
    text = plain_reason("cpu", "CPU mode: no NVIDIA driver was found on this machine (NVML could not be loaded).")
    assert "NVML" not in text and "No GPU was found here, so the workers are CPU workers" in text and "gpu-dask-kit doctor" in text
    with kit.start_cluster(n_workers=1, memory_limit="1GiB"):
        said = capsys.readouterr().out
    assert "NVML" not in said and "Dashboard: http" in said and "not" in said.split("Dashboard:")[1]


# --- asynchronous=True: await the start, the client and the close -----------------------------------

TWO = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def _worker_pids(session):
    return sorted(w.pid for w in session.memory().workers)


def test_asynchronous_start_is_awaited_and_its_client_awaits(no_leaks, capsys):
    async def main():
        session = await kit.start_cluster(asynchronous=True, **TWO)
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
