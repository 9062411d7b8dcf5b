"""View-model of the memory monitor: plain data in, plain data out. No ipywidgets, no cluster, no threads.

The view (:mod:`.monitor_view`, :mod:`.markup`) turns these models into HTML; everything a test wants to
check (bar widths, levels and colours, the CPU-mode line, the time series) is decided here, from a
snapshot such as ``session.memory()`` returns, which a test can build by hand (fake GPU numbers included).
The form's view-model is :mod:`.form`.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

from dask.utils import format_bytes

from ... import monitor as _monitor

# The one memory-warning threshold of widget and sidebar, from gpu_dask_kit.monitor.
MEMORY_WARN: float = _monitor.MEMORY_WARN
MEMORY_CRITICAL: float = _monitor.MEMORY_CRITICAL

__all__ = [
    "MEMORY_WARN",
    "MEMORY_CRITICAL",
    "WARN_AT",
    "CRITICAL_AT",
    "COLOURS",
    "level",
    "Bar",
    "WorkerRow",
    "MonitorModel",
    "host_bar",
    "device_bar",
    "mode_line",
    "monitor_model",
    "SERIES",
    "History",
]


#: The memory-warning thresholds (fractions of a limit), shared with the JupyterLab sidebar.
WARN_AT, CRITICAL_AT = MEMORY_WARN, MEMORY_CRITICAL
#: Bar colours: JupyterLab's theme colours, with fallbacks for pages outside JupyterLab.
COLOURS = {
    "ok": "var(--jp-success-color1, #43a047)",
    "warn": "var(--jp-warn-color1, #ffb300)",
    "critical": "var(--jp-error-color1, #e53935)",
    "none": "var(--jp-layout-color4, #9e9e9e)",
}


def level(fraction: float | None) -> str:
    """ "ok", "warn" (>= MEMORY_WARN, 80 %), "critical" (>= MEMORY_CRITICAL, 95 %) or "none" (no limit known).

    >>> level(0.5), level(0.8), level(0.95), level(None)
    ('ok', 'warn', 'critical', 'none')
    """
    if fraction is None:
        return "none"
    return "critical" if fraction >= CRITICAL_AT else "warn" if fraction >= WARN_AT else "ok"


@dataclass(frozen=True)
class Bar:
    """One memory bar: ``memory`` is "device" (GPU) or "host". ``fraction`` is the filled width (of ``scale``),
    ``limit_fraction`` where the limit mark sits (GPU: the spill threshold), ``level``/``colour`` how close
    ``used`` is to the limit."""

    memory: str
    used: int
    limit: int | None
    total: int | None
    fraction: float | None
    limit_fraction: float | None
    level: str
    colour: str
    label: str


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def host_bar(w: Any) -> Bar:
    """Host memory against the worker's ``memory_limit`` (dask pauses near 80 % and restarts at 95 %)."""
    limit = w.host_memory_limit
    fraction = w.host_memory_used / limit if limit else None
    label = f"{format_bytes(w.host_memory_used)} / {format_bytes(limit)}" if limit else f"{format_bytes(w.host_memory_used)} (no limit)"
    lvl = level(fraction)
    return Bar("host", w.host_memory_used, limit, None, None if fraction is None else _clip(fraction), None, lvl, COLOURS[lvl], label)


def device_bar(w: Any) -> Bar | None:
    """Data the worker holds on the device (dask-cuda's store) against its spill limit
    (``device_memory_limit``): the bar fills and colours towards the point where the store spills to host.
    Without a spill limit (spilling off, unified memory) the bar has nothing to be a fraction of."""
    if w.device_data is None:
        return None
    limit, used = w.device_memory_limit, w.device_data
    fraction = used / limit if limit else None
    lvl = level(fraction)
    label = f"{format_bytes(used)} / spill at {format_bytes(limit)}" if limit else f"{format_bytes(used)} (no spill limit)"
    return Bar("device", used, limit, w.device_memory_total, None if fraction is None else _clip(fraction), None, lvl, COLOURS[lvl], label)


@dataclass(frozen=True)
class WorkerRow:
    name: str
    address: str
    pid: int
    device: Bar | None
    host: Bar
    spilled_to_host: int | None
    spilled_to_disk: int
    rmm_used: int | None
    rmm_pool_size: int | None
    gpu_total_in_use: int | None
    device_index: int | None


@dataclass(frozen=True)
class MonitorModel:
    """Everything the monitor shows for one snapshot."""

    mode: str
    time: float
    n_workers: int
    gpu: bool
    mode_line: str | None  # on CPU: why (the detection reason, said once), else None
    rows: tuple[WorkerRow, ...]
    totals: dict[str, int]


def mode_line(reason: str) -> str:
    """The one line that says a cluster runs on CPU, and why (each thing once).

    >>> mode_line("CPU mode: no NVIDIA driver was found."), mode_line("No NVIDIA driver."), mode_line("")
    ('CPU mode: no NVIDIA driver was found.', 'CPU mode: No NVIDIA driver.', 'CPU mode.')
    """
    reason = reason.strip()
    if reason.lower().startswith("cpu mode") or reason.lower().startswith("cpu workers"):
        return reason
    return f"CPU mode: {reason}" if reason else "CPU mode."


def monitor_model(memory: Any, reason: str = "") -> MonitorModel:
    """The monitor's model of one snapshot (``session.memory()``); ``reason`` is the session's reason."""
    gpu = memory.mode == "gpu" or any(w.device_data is not None or w.gpu_total_in_use is not None for w in memory.workers)
    rows = tuple(
        WorkerRow(
            w.name,
            w.address,
            w.pid,
            device_bar(w),
            host_bar(w),
            w.spilled_to_host,
            w.spilled_to_disk,
            w.rmm_used,
            w.rmm_pool_size,
            w.gpu_total_in_use,
            w.device_index,
        )
        for w in memory.workers
    )
    line = None if gpu else mode_line(reason)
    totals = {key: memory.total(key) for key, _, _ in SERIES}
    totals["host_memory_limit"] = memory.total("host_memory_limit")
    totals["device_memory_limit"] = memory.total("device_memory_limit")
    return MonitorModel(memory.mode, memory.time, len(memory.workers), gpu, line, rows, totals)


#: The time series of cluster totals: (ClusterMemory field, legend, colour).
SERIES = (
    ("device_data", "data on GPU", "#76b900"),
    ("host_memory_used", "host used", "#1e88e5"),
    ("spilled_to_host", "spilled to host", "#fb8c00"),
    ("spilled_to_disk", "spilled to disk", "#8e24aa"),
)


class History:
    """Totals of the last ``window`` seconds of snapshots (a bounded deque; oldest points drop off)."""

    def __init__(self, window: float = 300.0) -> None:
        self.window = float(window)
        self._points: collections.deque[tuple[float, dict[str, int]]] = collections.deque()

    def add(self, model: MonitorModel) -> None:
        self._points.append((model.time, dict(model.totals)))
        while self._points and self._points[0][0] < model.time - self.window:
            self._points.popleft()

    def clear(self) -> None:
        self._points.clear()

    def __len__(self) -> int:
        return len(self._points)

    @property
    def earliest_time(self) -> float | None:
        return self._points[0][0] if self._points else None

    @property
    def latest_time(self) -> float | None:
        return self._points[-1][0] if self._points else None

    def series(self, key: str) -> list[tuple[float, int]]:
        return [(t, totals.get(key, 0)) for t, totals in self._points]
