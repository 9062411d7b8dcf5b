"""The memory figures a GPU worker reports (gpu_dask_kit.figures), read from dask-cuda 26.10's REAL
DeviceHostFile on CPU: its device tier holds any object with ``__cuda_array_interface__``, so a host
object that carries one moves device -> host -> disk exactly as a CuPy array would."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from dask.sizeof import sizeof

from gpu_dask_kit import figures, monitor, plugins

dhf = pytest.importorskip("dask_cuda.device_host_file")


class DeviceLike:
    """A "device" value for DeviceHostFile: picklable, ``nbytes`` bytes, flagged as a CUDA array."""

    def __init__(self, nbytes: int) -> None:
        self.payload = np.ones(nbytes, dtype=np.uint8)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.payload.shape, "typestr": "|u1", "version": 3, "data": (0, False)}


@sizeof.register(DeviceLike)
def _sizeof_device_like(x: DeviceLike) -> int:
    return int(x.payload.nbytes)


def store(tmp_path, device: int | None = 1000, host: int | None = 1500):
    return dhf.DeviceHostFile(str(tmp_path), device_memory_limit=device, memory_limit=host)


def test_device_host_and_disk_figures_of_dask_cudas_store(tmp_path):
    data = store(tmp_path)
    for i in range(6):
        data[f"x{i}"] = DeviceLike(400)  # device keeps 2 (800 <= 1000); the rest go to host, then disk
    data["host-result"] = b"h" * 100  # a host value: never on the device, not "spilled to host"
    got = figures.store_figures(data)
    assert got["device_data"] == 800 and got["device_memory_limit"] == 1000
    on_host = [k for k in data.device_keys if k in data.host]
    on_disk = [k for k in data.device_keys if k in data.disk]
    assert on_host and on_disk, (on_host, on_disk)  # the store really used all three tiers
    assert got["spilled_to_host"] == sum(sizeof(data.host[k]) for k in on_host)
    assert got["spilled_to_disk"] >= 400 * len(on_disk)  # device-serialized values on disk stay counted
    assert not hasattr(data, "spilled_total")  # why distributed's own spilled_bytes.disk reads 0 (defect 15)


def test_disk_spilling_reaches_the_monitor_although_distributed_reads_zero(tmp_path):
    """Defect 15: the heartbeat's ``spilled_bytes.disk`` (distributed) is 0 for dask-cuda's store; the
    kit's own figure wins. Before the fix the worker metric had no disk figure and the monitor showed 0."""
    data = store(tmp_path)
    for i in range(6):
        data[f"x{i}"] = DeviceLike(400)
    kit = plugins.device_metrics(types.SimpleNamespace(data=data))
    assert kit["spilled_to_disk"] > 0
    info = {"name": "0", "memory_limit": 2**30, "metrics": {"memory": 1, "spilled_bytes": {"memory": 0, "disk": 0}, plugins.METRIC_NAME: kit}}
    w = monitor._worker("tcp://w:1", info, {}, None, "gpu")
    assert w.spilled_to_disk == kit["spilled_to_disk"] and w.device_data == 800


def test_without_a_spill_limit_the_store_has_no_limit_figure(tmp_path):
    data = store(tmp_path, device=None, host=None)
    data["a"] = DeviceLike(300)
    assert figures.store_figures(data) == {"device_data": 300, "device_memory_limit": None, "spilled_to_host": 0, "spilled_to_disk": 0}
    assert figures.store_figures({}) == {"device_data": None, "device_memory_limit": None, "spilled_to_host": 0, "spilled_to_disk": 0}


class _Counting:
    calls = 0

    @classmethod
    def get_global_manager(cls):
        cls.calls += 1
        return None


@pytest.fixture
def fake_cudf(monkeypatch):
    """A ``cudf`` whose ``get_global_manager`` counts its calls (each call may create the manager and fix
    ``cudf.set_option("spill", ...)`` for the process: cuDF 26.10 spill_manager.py:423)."""
    _Counting.calls = 0
    names = ["cudf", "cudf.core", "cudf.core.buffer", "cudf.core.buffer.spill_manager"]
    for name in names:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["cudf.core.buffer.spill_manager"].get_global_manager = _Counting.get_global_manager
    sys.modules["cudf"].core = sys.modules["cudf.core"]
    sys.modules["cudf.core"].buffer = sys.modules["cudf.core.buffer"]
    sys.modules["cudf.core.buffer"].spill_manager = sys.modules["cudf.core.buffer.spill_manager"]
    return _Counting


def test_reading_the_figures_does_not_create_cudfs_spill_manager(tmp_path, fake_cudf):
    """Defect 11: with cuDF imported (dask-cuda's CUDFSetup imports it in every worker) the heartbeat
    metric and the connect-mode ``client.run`` fallback must not call ``get_global_manager()`` before
    cuDF/dask-cuda did, or a later ``cudf.set_option("spill", True)`` is silently ignored."""
    data = store(tmp_path)
    data["a"] = DeviceLike(300)
    plugins.device_metrics(types.SimpleNamespace(data=data))
    monitor.worker_memory(types.SimpleNamespace(data=data))
    assert fake_cudf.calls == 0
    data.others["frame"] = DeviceLike(10)  # dask-cuda put a cuDF object here: it created the manager first
    plugins.device_metrics(types.SimpleNamespace(data=data))
    assert fake_cudf.calls == 1


class _Resource:
    def __init__(self, upstream=None, **methods):
        self.upstream_mr = upstream
        for name, value in methods.items():
            setattr(self, name, lambda value=value: value)


@pytest.mark.parametrize(
    "resource, expected",
    [
        (_Resource(_Resource(pool_size=2**30), get_allocated_bytes=123), {"rmm_used": 123, "rmm_pool_size": 2**30}),  # tracked pool
        (_Resource(pool_size=2**30), {"rmm_used": None, "rmm_pool_size": 2**30}),  # untracked: unknown, not 0
        (_Resource(), {"rmm_used": None, "rmm_pool_size": None}),  # async allocator: CUDA's pool is not readable
    ],
)
def test_rmm_figures_walk_the_adaptors(monkeypatch, resource, expected):
    rmm = types.SimpleNamespace(mr=types.SimpleNamespace(get_current_device_resource=lambda: resource))
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    assert figures.rmm_figures() == expected


def test_rmm_figures_without_rmm(monkeypatch):
    monkeypatch.delitem(sys.modules, "rmm", raising=False)
    assert figures.rmm_figures() == {"rmm_used": None, "rmm_pool_size": None}
