"""Memory snapshots per worker as plain data, from what workers report; each figure means one thing.

``snapshot(client)`` reads the scheduler's view of its workers (:func:`gpu_dask_kit.scheduler_view.workers`), which every
worker refreshes at each heartbeat: process memory and memory limit (distributed's metrics), the GPU's
total memory and what all its processes use (distributed's NVML metrics: shown only as "GPU total in
use"), and the kit's heartbeat metric (:class:`gpu_dask_kit.plugins.KitMetrics`: PID, device index and
the figures of :mod:`gpu_dask_kit.figures`: data held on the device, spill limit, spilled to host and to
disk, RMM bytes in use, RMM pool reserved). Nothing runs on the workers.

Documented fallback: a worker whose heartbeat lacks the kit's metric (a cluster the kit only connected
to) is asked once for the same figures with ``client.run`` on that worker only (the same read-only code).

Widgets and the JupyterLab sidebar read this, nothing else, and colour a bar at :data:`MEMORY_WARN` and
:data:`MEMORY_CRITICAL` of its limit.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from . import scheduler_view

__all__ = ["WorkerMemory", "ClusterMemory", "snapshot", "snapshot_scheduler", "worker_memory", "as_bytes", "MEMORY_WARN", "MEMORY_CRITICAL"]

#: Fraction of a limit from which memory is shown as a warning (widget and sidebar alike).
MEMORY_WARN = 0.8
#: Fraction of a limit from which memory is shown as critical.
MEMORY_CRITICAL = 0.95

#: Longest wait, in seconds, for a heartbeat newer than the call (``fresh=True``).
FRESH_TIMEOUT = 3.0


@dataclass(frozen=True)
class WorkerMemory:
    """One worker's memory, in bytes; each field means one thing (see :mod:`gpu_dask_kit.figures` for
    where the device figures come from). GPU fields are None on CPU workers and None when unknown."""

    name: str
    address: str
    pid: int
    host_memory_used: int  # the worker process's memory (distributed's ``memory`` metric)
    host_memory_limit: int | None  # dask's memory_limit (pause/spill/restart against it)
    spilled_to_disk: int  # bytes in the worker's store on disk, device-serialized values included
    spilled_to_host: int | None = None  # device data moved to host memory (dask-cuda's store, cuDF's spilling)
    device_data: int | None = None  # task results held on the device in dask-cuda's store
    device_memory_limit: int | None = None  # the spill limit: above it the store moves data to host
    rmm_used: int | None = None  # bytes allocated through RMM now (None unless allocations are tracked)
    rmm_pool_size: int | None = None  # bytes the RMM pool reserved from the device (None: async or no pool)
    gpu_total_in_use: int | None = None  # NVML: the whole GPU, all processes and reservations included
    device_memory_total: int | None = None  # NVML: the GPU's memory (None where NVML has none: unified memory)
    device_index: int | None = None
    managed_bytes: int = 0  # bytes of task results the worker holds in memory (dask's own count)

    @property
    def host_fraction(self) -> float | None:
        return self.host_memory_used / self.host_memory_limit if self.host_memory_limit else None

    @property
    def device_fraction(self) -> float | None:
        """Device data against the spill limit (None without a limit): the bar's fill."""
        if self.device_data is None or not self.device_memory_limit:
            return None
        return self.device_data / self.device_memory_limit


@dataclass(frozen=True)
class ClusterMemory:
    """A snapshot of every worker at one time."""

    mode: str  # "gpu" | "cpu"
    time: float
    workers: tuple[WorkerMemory, ...] = field(default_factory=tuple)

    def total(self, attribute: str) -> int:
        """Sum of one field over the workers (None counts as 0)."""
        return sum(getattr(w, attribute) or 0 for w in self.workers)

    def to_dict(self) -> dict[str, Any]:
        """The JSON model (``sessions[].memory`` in the server API)."""
        return {"mode": self.mode, "time": self.time, "workers": [asdict(w) for w in self.workers]}


def worker_memory(dask_worker: Any = None) -> dict[str, Any]:
    """The fallback, run on one worker through ``client.run``: its PID, device index and RMM pool size."""
    from .plugins import device_metrics

    return device_metrics(dask_worker)


def as_bytes(value: Any) -> int | None:
    """A byte count, or None for anything else (dask-cuda's ``"default"``/``"auto"``, 0, None, bools).

    >>> as_bytes(2**30), as_bytes("default"), as_bytes(0), as_bytes(None), as_bytes(True)
    (1073741824, None, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def _worker(address: str, info: dict[str, Any], extra: dict[str, Any], device_memory_limit: Any, mode: str = "gpu") -> WorkerMemory:
    from .plugins import METRIC_NAME

    metrics = info.get("metrics") or {}
    kit = {**extra, **(metrics.get(METRIC_NAME) or {})}
    spilled = metrics.get("spilled_bytes") or {}
    # distributed's NVML metrics: every worker whose NVML initialised sends them, whatever its data store.
    used, total = metrics.get("gpu_memory_used"), metrics.get("gpu-memory-total")
    gpu = kit.get("device_index") is not None or kit.get("device_data") is not None or (mode == "gpu" and used is not None)
    limit = as_bytes(device_memory_limit) or as_bytes(kit.get("device_memory_limit"))
    disk = kit.get("spilled_to_disk")  # dask-cuda's store has no spilled_total: distributed reads 0 there
    host_spill = kit.get("spilled_to_host")

    def gpu_only(value: Any) -> int | None:
        return int(value) if gpu and value is not None else None

    return WorkerMemory(
        name=str(info.get("name", address)),
        address=address,
        pid=int(kit.get("pid") or 0),
        host_memory_used=int(metrics.get("memory") or 0),
        host_memory_limit=as_bytes(info.get("memory_limit")),
        spilled_to_disk=int(disk if disk is not None else spilled.get("disk") or 0),
        spilled_to_host=gpu_only(host_spill if host_spill is not None else spilled.get("memory") or 0),
        device_data=gpu_only(kit.get("device_data")),
        device_memory_limit=limit if gpu else None,
        rmm_used=gpu_only(kit.get("rmm_used")),
        rmm_pool_size=gpu_only(kit.get("rmm_pool_size")),
        gpu_total_in_use=gpu_only(used),
        device_memory_total=as_bytes(total) if gpu else None,
        device_index=kit.get("device_index"),
        managed_bytes=int(metrics.get("managed_bytes") or 0),
    )


def _workers(client: Any, fresh: bool) -> dict[str, Any]:
    """The scheduler's worker info; with ``fresh``, once every worker has sent a heartbeat since the call."""
    since, deadline = time.time(), time.monotonic() + FRESH_TIMEOUT
    while True:
        workers: dict[str, Any] = scheduler_view.workers(client)
        if not fresh or time.monotonic() > deadline or all((w.get("last_seen") or 0) >= since for w in workers.values()):
            return workers
        time.sleep(0.05)


def snapshot(client: Any, mode: str = "cpu", device_memory_limit: Any = None, fresh: bool = False) -> ClusterMemory:
    """Memory of every worker of ``client``'s cluster as of the workers' last heartbeats.

    ``fresh=True`` waits (at most :data:`FRESH_TIMEOUT` s) for a heartbeat newer than the call.
    ``device_memory_limit`` (bytes) is the spill threshold the kit gave the GPU workers, if known; anything
    that is not a byte count (dask-cuda's ``"default"`` on a unified-memory GPU, 0, None) means "none known",
    and the workers' own figure is used.
    """
    from .plugins import METRIC_NAME

    workers = _workers(client, fresh)
    lacking = [a for a, w in workers.items() if METRIC_NAME not in (w.get("metrics") or {})]
    extra: dict[str, Any] = {}
    if lacking:
        try:
            extra = client.run(worker_memory, workers=lacking)
        except Exception:
            extra = {}
    result = tuple(sorted((_worker(a, w, extra.get(a) or {}, device_memory_limit, mode) for a, w in workers.items()), key=lambda w: w.name))
    return ClusterMemory(mode=mode, time=time.time(), workers=result)


def snapshot_scheduler(address: str, timeout: float = 2.0, mode: str = "cpu") -> ClusterMemory:
    """Like :func:`snapshot` for a scheduler address (opens and closes a short-lived client)."""
    from distributed import Client

    with Client(address, timeout=timeout, set_as_default=False) as client:
        return snapshot(client, mode=mode)
