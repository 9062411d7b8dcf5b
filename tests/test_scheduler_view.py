"""The scheduler's view of its workers never reads as empty while the workers are there.

distributed's ``Client.scheduler_info(n_workers=-1)`` returns the client's cached identity, which the client's
periodic refresh (asking for no workers) can overwrite between the fetch and the return: notebook 08 once printed
"0 worker(s)" under load. Here the refresh runs every 5 ms, so the race shows within a few hundred reads.
"""

from __future__ import annotations

import dask
import pytest
from distributed import Client, LocalCluster

from gpu_dask_kit import scheduler_view
from gpu_dask_kit.deploy.deployment import wait_for_workers
from gpu_dask_kit.monitor import snapshot

READS = 300


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.client.scheduler-info-interval": "5ms"}):
        with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, Client(cluster) as c:
            c.wait_for_workers(2)
            yield c


def test_every_read_sees_both_workers(client):
    counts = [len(scheduler_view.workers(client)) for _ in range(READS)]
    assert counts == [2] * READS, f"{counts.count(0)} of {READS} reads saw no worker"


def test_the_kits_clients_answer_scheduler_info_with_what_they_fetched(client):
    """What learners write in notebooks 00 and 06 (a plain Client showed 9 empty reads of 300 here)."""
    with scheduler_view.new_client(client.cluster, set_as_default=False) as kit_client:
        counts = [len(kit_client.scheduler_info(n_workers=-1)["workers"]) for _ in range(READS)]
        assert repr(kit_client).startswith("<Client: ")
    assert counts == [2] * READS, f"{counts.count(0)} of {READS} reads saw no worker"


def test_the_kits_readers_go_through_it(client):
    assert all(wait_for_workers(client, 2, timeout=0) for _ in range(READS))  # one read each: False if it saw no worker
    assert all(len(snapshot(client).workers) == 2 for _ in range(READS))
