"""Memory snapshots per worker (device, host, spilled, RMM pool) as plain data.

``snapshot(client)`` runs one small function on every worker (``client.run``) and returns a
:class:`ClusterMemory`. Widgets and the JupyterLab server extension read this, nothing else.
GPU numbers come from NVML for the worker's own device (the first of its ``CUDA_VISIBLE_DEVICES``).
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["WorkerMemory", "ClusterMemory", "snapshot", "snapshot_scheduler", "worker_memory"]


@dataclass(frozen=True)
class WorkerMemory:
    """One worker's memory, in bytes. GPU fields are None on CPU workers."""

    name: str
    address: str
    pid: int
    host_memory_used: int
    host_memory_limit: int | None
    spilled_to_disk: int
    spilled_to_host: int | None = None
    device_memory_used: int | None = None
    device_memory_limit: int | None = None
    device_memory_total: int | None = None
    device_index: int | None = None
    rmm_pool_size: int | None = None
    managed_bytes: int = 0  # bytes of task results the worker holds in memory (dask's own count)

    @property
    def host_fraction(self) -> float | None:
        return self.host_memory_used / self.host_memory_limit if self.host_memory_limit else None

    @property
    def device_fraction(self) -> float | None:
        if self.device_memory_used is None or not self.device_memory_total:
            return None
        return self.device_memory_used / self.device_memory_total


@dataclass(frozen=True)
class ClusterMemory:
    """A snapshot of every worker at one time."""

    backend: str
    time: float
    workers: tuple[WorkerMemory, ...] = field(default_factory=tuple)

    def total(self, attribute: str) -> int:
        """Sum of one field over the workers (None counts as 0)."""
        return sum(getattr(w, attribute) or 0 for w in self.workers)

    def to_dict(self) -> dict[str, Any]:
        """The JSON model (``sessions[].memory`` in the server API)."""
        return {"backend": self.backend, "time": self.time, "workers": [asdict(w) for w in self.workers]}


def _dir_size(path: str | None) -> int:
    total = 0
    if path and os.path.isdir(path):
        for root, _, files in os.walk(path):
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    pass
    return total


def _weight(mapping: Any) -> int:
    weight = getattr(mapping, "total_weight", None)
    if weight is not None:
        return int(weight if not isinstance(weight, tuple) else weight[0])
    from dask.sizeof import sizeof

    return int(sum(sizeof(v) for v in mapping.values())) if hasattr(mapping, "values") else 0


def _device_stats(dask_worker: Any) -> dict[str, Any]:
    """NVML numbers for this worker's GPU, the spill limit and the RMM pool (GPU workers only)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    data = dask_worker.data
    if not visible or not hasattr(data, "device_buffer"):
        return {}
    stats: dict[str, Any] = {"device_memory_limit": getattr(getattr(data, "device_buffer", None), "n", None)}
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(int(visible)) if visible.isdigit() else pynvml.nvmlDeviceGetHandleByUUID(visible)
        info = pynvml.nvmlDeviceGetMemoryInfo(handle)
        stats.update(device_memory_used=int(info.used), device_memory_total=int(info.total),
                     device_index=int(visible) if visible.isdigit() else None)
    except Exception:
        pass
    stats["spilled_to_host"] = _weight(data.host)
    stats["spilled_to_disk"] = _dir_size(getattr(data, "disk_func_path", None))
    try:
        import rmm

        resource = rmm.mr.get_current_device_resource()
        if hasattr(resource, "pool_size"):
            stats["rmm_pool_size"] = int(resource.pool_size())
    except Exception:
        pass
    return stats


def worker_memory(dask_worker: Any) -> dict[str, Any]:
    """Runs on a worker (through ``client.run``): this worker's memory as a plain dict."""
    import psutil

    data = dask_worker.data
    spilled = getattr(data, "spilled_total", None)
    result = {
        "name": str(dask_worker.name), "address": dask_worker.address, "pid": os.getpid(),
        "host_memory_used": int(psutil.Process().memory_info().rss),
        "host_memory_limit": int(dask_worker.memory_manager.memory_limit or 0) or None,
        "spilled_to_disk": int(spilled.disk) if spilled is not None else 0,
        "managed_bytes": int(getattr(dask_worker.state, "nbytes", 0) or 0),
    }
    result.update(_device_stats(dask_worker))
    return result


def snapshot(client: Any, backend: str = "cpu") -> ClusterMemory:
    """Memory of every worker of ``client``'s cluster, now."""
    results = client.run(worker_memory)
    workers = tuple(sorted((WorkerMemory(**r) for r in results.values()), key=lambda w: w.name))
    return ClusterMemory(backend=backend, time=time.time(), workers=workers)


def snapshot_scheduler(address: str, timeout: float = 2.0, backend: str = "cpu") -> ClusterMemory:
    """Like :func:`snapshot` for a scheduler address (opens and closes a short-lived client)."""
    from distributed import Client

    with Client(address, timeout=timeout, set_as_default=False) as client:
        return snapshot(client, backend=backend)
