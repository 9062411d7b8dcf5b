"""Memory snapshots per worker (device, host, spilled, RMM pool) as plain data, from what workers report.

``snapshot(client)`` reads the scheduler's view of its workers (``client.scheduler_info()``), which every
worker refreshes at each heartbeat: process memory, memory limit, bytes held and spilled (distributed's
metrics), device memory used and total (distributed's NVML metrics), and the kit's own heartbeat metric
(:class:`gpu_dask_kit.plugins.KitMetrics`: PID, device index, RMM pool size). Nothing runs on the workers.

Documented fallback: a worker whose heartbeat lacks the kit's metric (a cluster the kit only connected
to) is asked once for its PID and RMM pool size with ``client.run`` on that worker only.

Widgets and the JupyterLab sidebar read this, nothing else, and colour a bar at :data:`MEMORY_WARN` and
:data:`MEMORY_CRITICAL` of its limit.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["WorkerMemory", "ClusterMemory", "snapshot", "snapshot_scheduler", "worker_memory", "memory_level", "MEMORY_WARN", "MEMORY_CRITICAL"]

#: Fraction of a limit from which memory is shown as a warning (widget and sidebar alike).
MEMORY_WARN = 0.8
#: Fraction of a limit from which memory is shown as critical.
MEMORY_CRITICAL = 0.95

#: Longest wait, in seconds, for a heartbeat newer than the call (``fresh=True``).
FRESH_TIMEOUT = 3.0


def memory_level(fraction: float | None) -> str:
    """ "ok", "warn" or "critical" for a used / limit fraction (None: "ok").

    >>> memory_level(0.5), memory_level(0.8), memory_level(0.97), memory_level(None)
    ('ok', 'warn', 'critical', 'ok')
    """
    if fraction is None or fraction < MEMORY_WARN:
        return "ok"
    return "critical" if fraction >= MEMORY_CRITICAL else "warn"


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


def worker_memory(dask_worker: Any = None) -> dict[str, Any]:
    """The fallback, run on one worker through ``client.run``: its PID, device index and RMM pool size."""
    from .plugins import device_metrics

    return device_metrics(dask_worker)


def _worker(address: str, info: dict[str, Any], extra: dict[str, Any], device_memory_limit: int | None, backend: str = "gpu") -> WorkerMemory:
    from .plugins import METRIC_NAME

    metrics = info.get("metrics") or {}
    kit = {**extra, **(metrics.get(METRIC_NAME) or {})}
    spilled = metrics.get("spilled_bytes") or {}
    # distributed's NVML metrics: every worker whose NVML initialised sends them, whatever its data store.
    used, total = metrics.get("gpu_memory_used"), metrics.get("gpu-memory-total")
    gpu = kit.get("device_index") is not None or (backend == "gpu" and used is not None)
    rmm_total = (metrics.get("rmm") or {}).get("rmm-total")  # distributed's RMM diagnostics (walks the adaptors)
    pool = kit.get("rmm_pool_size") if kit.get("rmm_pool_size") is not None else (rmm_total or None)
    host_spill = kit.get("spilled_to_host")
    limit = device_memory_limit if device_memory_limit is not None else kit.get("device_memory_limit")
    return WorkerMemory(
        name=str(info.get("name", address)),
        address=address,
        pid=int(kit.get("pid") or 0),
        host_memory_used=int(metrics.get("memory") or 0),
        host_memory_limit=int(info.get("memory_limit") or 0) or None,
        spilled_to_disk=int(spilled.get("disk") or 0),
        spilled_to_host=(int(host_spill) if host_spill is not None else int(spilled.get("memory") or 0)) if gpu else None,
        device_memory_used=int(used) if gpu and used is not None else None,
        device_memory_limit=int(limit) if gpu and limit else None,
        device_memory_total=int(total) if gpu and total and total > 0 else None,
        device_index=kit.get("device_index"),
        rmm_pool_size=pool,
        managed_bytes=int(metrics.get("managed_bytes") or 0),
    )


def _workers(client: Any, fresh: bool) -> dict[str, Any]:
    """The scheduler's worker info; with ``fresh``, once every worker has sent a heartbeat since the call."""
    since, deadline = time.time(), time.monotonic() + FRESH_TIMEOUT
    while True:
        workers: dict[str, Any] = client.scheduler_info(n_workers=-1)["workers"]
        if not fresh or time.monotonic() > deadline or all((w.get("last_seen") or 0) >= since for w in workers.values()):
            return workers
        time.sleep(0.05)


def snapshot(client: Any, backend: str = "cpu", device_memory_limit: int | None = None, fresh: bool = False) -> ClusterMemory:
    """Memory of every worker of ``client``'s cluster as of the workers' last heartbeats.

    ``fresh=True`` waits (at most :data:`FRESH_TIMEOUT` s) for a heartbeat newer than the call.
    ``device_memory_limit`` (bytes) is the spill threshold the kit gave the GPU workers, if known.
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
    result = tuple(sorted((_worker(a, w, extra.get(a) or {}, device_memory_limit, backend) for a, w in workers.items()), key=lambda w: w.name))
    return ClusterMemory(backend=backend, time=time.time(), workers=result)


def snapshot_scheduler(address: str, timeout: float = 2.0, backend: str = "cpu") -> ClusterMemory:
    """Like :func:`snapshot` for a scheduler address (opens and closes a short-lived client)."""
    from distributed import Client

    with Client(address, timeout=timeout, set_as_default=False) as client:
        return snapshot(client, backend=backend)
