"""The kit's client and dask's default client (gpu_dask_kit.clients): a ``Client(...)`` of one's own beside the
kit's session, and computing after ``session.close()``. Real CPU clusters; the notebook case in a real kernel."""

from __future__ import annotations

import asyncio
import warnings

import dask
import dask.array as da
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import KitWarning
from gpu_dask_kit.clients import SessionClosedError

from .conftest import wait_for_no_new_children


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
