"""The kit's scheduler and worker plugins: what every cluster the kit starts carries.

:class:`SessionRecordPlugin` (scheduler) owns the session's registry record: it writes the record when
the scheduler starts, rewrites it whenever a worker joins or leaves (scaling from a notebook, the widgets
or dask-labextension's scale box, adaptive scaling, a nanny restarting a killed worker under a new PID;
each worker reports its PID when it registers), and removes it when the scheduler closes, whichever way
it is closed (``cluster.close()``, ``client.shutdown()``, dask-labextension's shut-down button). It also
installs the kit's worker plugins on every current and future worker:

- :class:`IgnoreInterrupt`: Jupyter's stop button (and Ctrl+C) sends SIGINT to the kernel's whole process
  group, the kit's workers included. Without this they die, their nannies do not bring them back and
  every later computation hangs (dask/distributed#1925).
- :class:`KitMetrics`: adds to the worker's heartbeat metrics what distributed's own metrics lack: the
  worker's PID and, on GPU clusters, its device index and the memory figures of :mod:`gpu_dask_kit.figures`.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from distributed.comm.addressing import get_address_host
from distributed.diagnostics.plugin import SchedulerPlugin, WorkerPlugin
from distributed.protocol.pickle import dumps
from distributed.utils import format_dashboard_link

from . import registry
from .figures import rmm_figures, store_figures
from .processes import process_identity

__all__ = ["SessionRecordPlugin", "IgnoreInterrupt", "KitMetrics", "PLUGIN_NAME", "METRIC_NAME", "worker_metrics", "device_metrics"]

PLUGIN_NAME = "gpu-dask-kit-ignore-sigint"
METRIC_NAME = "gpu-dask-kit"


class IgnoreInterrupt(WorkerPlugin):
    """Ignore SIGINT in the worker process (only the kernel should react to the stop button)."""

    name = PLUGIN_NAME

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_metrics(worker: Any) -> dict[str, Any]:
    """Runs in a worker at every heartbeat: its PID."""
    return {"pid": os.getpid()}


def _device_index(visible: str) -> int | None:
    """NVML index of a CUDA_VISIBLE_DEVICES entry (index or UUID)."""
    if visible.isdigit():
        return int(visible)
    try:
        import pynvml

        return int(pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByUUID(visible)))
    except Exception:
        return None


def device_metrics(worker: Any) -> dict[str, Any]:
    """Runs in a GPU worker at every heartbeat: its PID, device index and the memory figures of
    :mod:`gpu_dask_kit.figures` (read only: this changes no state of dask-cuda, RMM or cuDF)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    result: dict[str, Any] = {"pid": os.getpid(), "device_index": _device_index(visible) if visible else None}
    try:
        result.update(store_figures(getattr(worker, "data", None)))
    except Exception:  # the store changed under us (a task finished): the next heartbeat reads again
        pass
    try:
        result.update(rmm_figures())
    except Exception:
        pass
    return result


class KitMetrics(WorkerPlugin):
    """Add the kit's numbers to the worker's heartbeat (``metrics["gpu-dask-kit"]`` on the scheduler)."""

    name = "gpu-dask-kit-metrics"

    def __init__(self, gpu: bool = False) -> None:
        self.gpu = gpu

    def setup(self, worker: Any) -> None:
        worker.metrics[METRIC_NAME] = device_metrics if self.gpu else worker_metrics

    def teardown(self, worker: Any) -> None:
        worker.metrics.pop(METRIC_NAME, None)


class SessionRecordPlugin(SchedulerPlugin):
    """Keep ``record`` in the registry in step with the scheduler's workers; remove it on close."""

    name = "gpu-dask-kit-session"

    def __init__(self, record: registry.SessionRecord) -> None:
        self.record = record
        self.closed = False
        self._pids: list[int] | None = None

    async def start(self, scheduler: Any) -> None:
        self.record.scheduler_address = scheduler.address
        self.record.dashboard_link = dashboard_link(scheduler)
        for plugin in (IgnoreInterrupt(), KitMetrics(gpu=self.record.mode == "gpu")):
            await scheduler.register_worker_plugin(None, dumps(plugin), name=plugin.name, idempotent=True)
        self._sync(scheduler, force=True)

    def add_worker(self, scheduler: Any, worker: str) -> None:
        self._sync(scheduler)

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self._sync(scheduler)

    async def close(self) -> None:
        self.closed = True
        try:
            registry.unregister(self.record.id)
        except (OSError, ValueError):
            pass

    def _sync(self, scheduler: Any, force: bool = False) -> None:
        if self.closed:
            return
        pids = sorted(int(ws.pid) for ws in list(scheduler.workers.values()) if getattr(ws, "pid", None))
        if pids == self._pids and not force:
            return
        self._pids = pids
        self.record.processes = [i for i in (process_identity(p) for p in pids) if i]
        self.record.n_workers = len(pids)
        try:
            registry.save(self.record) if force else registry.update(self.record)
        except OSError:
            pass  # a registry folder that vanished must not break the scheduler


def dashboard_link(scheduler: Any) -> str | None:
    """The scheduler's dashboard link, formatted by distributed (``distributed.dashboard.link``)."""
    server = scheduler.services.get("dashboard")
    port = getattr(server, "port", None)
    if not port:
        return None
    return format_dashboard_link(get_address_host(scheduler.address), port)
