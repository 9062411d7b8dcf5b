"""gpu_dask_kit.timing.settled: after a timed computation the scheduler has let go of its tasks (real processes)."""

from __future__ import annotations

import time

import dask.array as da
import pytest
from distributed import Client, LocalCluster

from gpu_dask_kit.timing import settled


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None, processes=True) as cluster, Client(cluster) as c:
        yield c


def _count(client):
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


def test_after_settled_the_scheduler_holds_no_more_tasks_than_before(client):
    before = _count(client)
    x = da.ones((400, 400), chunks=100)
    for _ in range(5):
        with settled(client):
            (x @ x.T).sum().compute()
        assert _count(client) <= before


def test_a_result_still_held_ends_the_wait_at_the_timeout(client):
    x = da.ones(10, chunks=5).persist()
    start = time.monotonic()
    with settled(client, timeout=0.5):
        kept = client.compute(x.sum())
        kept.result()
    assert 0.4 < time.monotonic() - start < 5
    del kept, x
