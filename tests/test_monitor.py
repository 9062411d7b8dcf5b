from types import SimpleNamespace

import numpy as np
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.monitor import ClusterMemory, WorkerMemory
from gpu_dask_kit.plan import WorkerSpec


def test_memory_snapshot_of_a_real_cpu_cluster(no_leaks):
    with kit.start_cluster(verbose=False, n_workers=2, memory_limit="1GiB") as session:
        x = session.client.scatter(np.ones(2_000_000), broadcast=False)  # 16 MB held by one worker
        snap = session.memory()
        assert snap.mode == "cpu" and len(snap.workers) == 2
        for w in snap.workers:
            assert w.host_memory_limit == 2**30
            assert 10 * 2**20 < w.host_memory_used < 2**30
            assert w.spilled_to_disk == 0
            assert w.gpu_total_in_use is None and w.device_data is None and w.rmm_pool_size is None
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
    w = WorkerMemory(
        "0",
        "tcp://x",
        1,
        host_memory_used=50,
        host_memory_limit=100,
        spilled_to_disk=0,
        device_data=30,
        device_memory_limit=60,
        gpu_total_in_use=110,
        device_memory_total=120,
    )
    assert w.host_fraction == 0.5 and w.device_fraction == 0.5  # against the spill limit, not the GPU total
    assert ClusterMemory("gpu", 0.0, (w, w)).total("device_data") == 60


def _heartbeat(**metrics):
    return {"name": "0", "memory_limit": 2**30, "metrics": {"memory": 100, "spilled_bytes": {"memory": 0, "disk": 0}, **metrics}}


def test_gpu_worker_numbers_come_from_reported_metrics():
    """NVML's used memory only as gpu_total_in_use; the kit's heartbeat entry for the
    device data, spill limit, spilled to host and disk, RMM in use and pool; nothing mixed up."""
    from gpu_dask_kit.monitor import _worker
    from gpu_dask_kit.plugins import METRIC_NAME

    kit_entry = {"pid": 7, "device_index": 1, "device_data": 2**29, "rmm_used": 2**29 + 5, "rmm_pool_size": 2**31}
    kit_entry.update(device_memory_limit=12 * 2**30, spilled_to_host=5, spilled_to_disk=9)
    info = _heartbeat(**{"gpu_memory_used": 3 * 2**30, "gpu-memory-total": 16 * 2**30, "rmm": {"rmm-total": 2**30}, METRIC_NAME: kit_entry})
    w = _worker("tcp://w:1", info, {}, None, "gpu")
    assert (w.gpu_total_in_use, w.device_memory_total, w.device_memory_limit, w.device_data) == (3 * 2**30, 16 * 2**30, 12 * 2**30, 2**29)
    assert (w.device_index, w.spilled_to_host, w.spilled_to_disk, w.rmm_used, w.rmm_pool_size, w.pid) == (1, 5, 9, 2**29 + 5, 2**31, 7)
    assert _worker("tcp://w:1", info, {}, 2**30, "gpu").device_memory_limit == 2**30  # the session's own limit wins
    # a plain worker on a GPU host in a CPU session: NVML metrics alone do not make GPU numbers
    cpu = _worker("tcp://w:1", _heartbeat(gpu_memory_used=1, **{"gpu-memory-total": 2}), {}, None, "cpu")
    assert cpu.gpu_total_in_use is None and cpu.spilled_to_host is None


def test_pool_reservation_is_not_reported_as_data():
    """Defect 4: an idle pool cluster (NVML: the pool's 12 GiB reserved) holds no data: the bar's figure
    is 0, the pool is its own figure, NVML's is the whole-GPU figure."""
    from gpu_dask_kit.monitor import _worker
    from gpu_dask_kit.plugins import METRIC_NAME

    kit_entry = {"pid": 7, "device_index": 0, "device_data": 0, "rmm_pool_size": 12 * 2**30, "device_memory_limit": 13 * 2**30}
    w = _worker("tcp://w:1", _heartbeat(**{"gpu_memory_used": 12 * 2**30 + 2**28, "gpu-memory-total": 16 * 2**30, METRIC_NAME: kit_entry}), {}, None, "gpu")
    assert w.device_fraction == 0.0 and w.rmm_pool_size == 12 * 2**30 and w.gpu_total_in_use > 12 * 2**30


@pytest.mark.parametrize("given", ["default", "auto", 0, None])
def test_a_device_limit_that_is_not_bytes_means_none_known(given):
    """Defect 3: on a unified-memory GPU the plan passes device_memory_limit="default" to dask-cuda;
    ``session.memory()`` hands it to the monitor, which did ``int("default")``."""
    from gpu_dask_kit.monitor import _worker
    from gpu_dask_kit.plugins import METRIC_NAME

    info = _heartbeat(**{"gpu_memory_used": None, METRIC_NAME: {"pid": 7, "device_index": 0, "device_data": 10, "device_memory_limit": None}})
    w = _worker("tcp://w:1", info, {}, given, "gpu")
    assert w.device_memory_limit is None and w.device_fraction is None and w.device_memory_total is None


def test_session_repr_of_a_unified_memory_plan():
    """Defect 3, repr side: ``format_bytes("default")`` raised in the session's HTML repr. The worker spec of a
    unified-memory GPU now carries no device limit (None), and the repr says spilling is off."""
    from gpu_dask_kit.notebook.reprs import session_html

    spec = WorkerSpec("gpu", 1, 1, 2**30, devices=("0",), device_memory_limit=None)
    plan = SimpleNamespace(spec=spec)
    session = SimpleNamespace(closed=False, mode="gpu", reason="1 GPU.", n_workers=1, scheduler_address="tcp://x:1", dashboard_link=None, plan=plan, notes=[])
    html = session_html(session)
    assert "Spill GPU&rarr;host above" in html and ">off<" in html.replace(" ", ""), html
