"""Keep a session's registry record in step with its workers.

Workers come and go after the start: ``cluster.scale``, the widgets' Scale button, dask-labextension's
scale box, adaptive scaling, or a nanny restarting a killed worker under a new PID. The record lists
the worker processes so that ``gpu-dask-kit sessions --cleanup`` and the sidebar can end them when
the owner is gone; :func:`follow_workers` rewrites it whenever the set of worker PIDs changes.
"""

from __future__ import annotations

from typing import Any

from . import registry

__all__ = ["worker_pids", "sync_record", "follow_workers"]

_CALLBACK = "gpu-dask-kit-registry"


def worker_pids(cluster: Any) -> list[int]:
    """PIDs of the workers known to the cluster's in-process scheduler (sorted; [] when unknown)."""
    scheduler = getattr(cluster, "scheduler", None)
    workers = getattr(scheduler, "workers", None) or {}
    return sorted(int(ws.pid) for ws in list(workers.values()) if getattr(ws, "pid", None))


def sync_record(record: registry.SessionRecord, pids: list[int]) -> bool:
    """Rewrite ``record`` with these worker PIDs when they differ from the recorded ones."""
    recorded = sorted(int(p["pid"]) for p in record.processes)
    if recorded == sorted(pids):
        return False
    record.processes = [i for i in (registry.process_identity(p) for p in pids) if i]
    record.n_workers = len(pids)
    registry.update(record)
    return True


def follow_workers(cluster: Any, record: registry.SessionRecord, interval: float = 1.0) -> None:
    """Check the cluster's workers every ``interval`` seconds on its event loop and update the record.

    The callback lives in ``cluster.periodic_callbacks``, which the cluster stops when it closes.
    """
    from tornado.ioloop import PeriodicCallback

    def check() -> None:
        try:
            sync_record(record, worker_pids(cluster))
        except Exception:  # a record removed meanwhile, a scheduler closing: the next check decides
            pass

    callback = PeriodicCallback(check, interval * 1000)
    cluster.periodic_callbacks[_CALLBACK] = callback
    cluster.loop.add_callback(callback.start)
