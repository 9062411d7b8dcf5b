import numpy as np

import gpu_dask_kit as kit
from gpu_dask_kit.monitor import ClusterMemory, WorkerMemory


def test_memory_snapshot_of_a_real_cpu_cluster(no_leaks):
    with kit.start_cluster(verbose=False, n_workers=2, memory_limit="1GiB") as session:
        x = session.client.scatter(np.ones(2_000_000), broadcast=False)  # 16 MB held by one worker
        snap = session.memory()
        assert snap.backend == "cpu" and len(snap.workers) == 2
        for w in snap.workers:
            assert w.host_memory_limit == 2**30
            assert 10 * 2**20 < w.host_memory_used < 2**30
            assert w.spilled_to_disk == 0
            assert w.device_memory_used is None and w.rmm_pool_size is None
        assert snap.total("managed_bytes") >= 16_000_000
        data = snap.to_dict()
        assert data["workers"][0]["host_memory_limit"] == 2**30
        del x


def test_host_to_disk_spilling_is_reported(no_leaks):
    # A tiny memory limit makes the worker spill its task results to disk.
    with kit.start_cluster(verbose=False, n_workers=1, memory_limit="400MiB") as session:
        from gpu_dask_kit.compute import random_array

        x = random_array((40_000, 1000), chunks=(1000, 1000), seed=0).persist()  # 320 MB > 60% target of 400 MiB
        from distributed import wait

        wait(x)
        snap = session.memory()
        assert snap.workers[0].spilled_to_disk > 0


def test_fractions():
    w = WorkerMemory("0", "tcp://x", 1, host_memory_used=50, host_memory_limit=100, spilled_to_disk=0, device_memory_used=30, device_memory_total=120)
    assert w.host_fraction == 0.5 and w.device_fraction == 0.25
    assert ClusterMemory("gpu", 0.0, (w, w)).total("device_memory_used") == 60


def _heartbeat(**metrics):
    return {"name": "0", "memory_limit": 2**30, "metrics": {"memory": 100, "spilled_bytes": {"memory": 0, "disk": 0}, **metrics}}


def test_gpu_worker_numbers_come_from_reported_metrics():
    """Issue 11 c, from the scheduler's view only: distributed's NVML metrics for used/total, the kit's
    heartbeat entry for the spill limit, device index and spilled_to_host, RMM diagnostics for the pool."""
    from gpu_dask_kit.monitor import _worker
    from gpu_dask_kit.plugins import METRIC_NAME

    kit_entry = {"pid": 7, "device_index": 1, "rmm_pool_size": None, "device_memory_limit": 12 * 2**30, "spilled_to_host": 5}
    info = _heartbeat(**{"gpu_memory_used": 3 * 2**30, "gpu-memory-total": 16 * 2**30, "rmm": {"rmm-total": 2**30}, METRIC_NAME: kit_entry})
    w = _worker("tcp://w:1", info, {}, None, "gpu")
    assert (w.device_memory_used, w.device_memory_total, w.device_memory_limit) == (3 * 2**30, 16 * 2**30, 12 * 2**30)
    assert (w.device_index, w.spilled_to_host, w.rmm_pool_size, w.pid) == (1, 5, 2**30, 7)
    assert _worker("tcp://w:1", info, {}, 2**30, "gpu").device_memory_limit == 2**30  # the session's own limit wins
    # a plain worker on a GPU host in a CPU session: NVML metrics alone do not make GPU numbers
    cpu = _worker("tcp://w:1", _heartbeat(gpu_memory_used=1, **{"gpu-memory-total": 2}), {}, None, "cpu")
    assert cpu.device_memory_used is None and cpu.spilled_to_host is None
