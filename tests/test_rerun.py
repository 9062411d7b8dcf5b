"""Re-run hints (gpu_dask_kit.notebook.rerun): which cells a learner must run again after a restart or a close."""

from __future__ import annotations

import pytest
from distributed import Client, LocalCluster

from gpu_dask_kit.notebook.rerun import cells_making, explain_rerun


def test_a_name_made_from_itself_names_the_cell_that_made_it_first():
    """Review 3 (02, 03): "re-run the cell that makes x (In [5])" named `x = x.persist()`, which fails the same way."""
    history = ["", "import dask.array as da", "x = da.ones(9)", "x = x.persist()", "print(x)"]
    assert cells_making(history, "x") == [2, 3]
    assert cells_making([*history, "y = x + 1"], "y") == [5]
    assert cells_making(history, "z") == []


def test_the_start_cell_is_the_one_that_makes_the_session():
    """Review 3 (09): a timing cell that also calls start_cluster( (on GPUs only) was named as the start cell."""
    history = ["", "session = kit.start_cluster()", "if gpu:\n    other = kit.start_cluster(rmm_pool_size=0.5)", "print(1)"]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history})
    assert text is not None and "the cell that starts the cluster (In [1])" in text, text


@pytest.fixture
def client():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_after_a_restart_the_hint_names_the_whole_chain(client):
    import dask.array as da

    x = da.ones(10, chunks=5)
    x = x.persist()
    client.cancel(x)  # what a restart does to held futures (an in-process cluster has no nanny to restart)
    history = ["", "x = da.ones(10, chunks=5)", "x = x.persist()", "x.sum().compute()"]
    text = explain_rerun(type("FutureCancelledError", (Exception,), {})("scheduler-restart"), {"In": history, "x": x})
    assert text is not None and "`x` (In [1] then In [2])" in text, text
