"""View-models of the widgets: plain data in, plain data out. No ipywidgets, no cluster, no threads.

The views (:mod:`.controls`, :mod:`.monitor_view`) turn these models into widgets; everything a test
wants to check (form fields and tooltips, which buttons are enabled, bar widths and colours, the CPU-mode
line, the time series) is decided here, from a :class:`~gpu_dask_kit.options.ClusterOptions` or a
:class:`~gpu_dask_kit.monitor.ClusterMemory` that a test can build by hand (fake GPU numbers included).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Mapping

from ..memory import format_bytes
from ..monitor import ClusterMemory, WorkerMemory
from ..options import OPTION_DOCS, ClusterOptions

__all__ = [
    "FORM_FIELDS", "CHOICES", "FieldSpec", "form_fields", "field_value", "tooltip", "parse_form",
    "button_disabled", "WARN_AT", "CRITICAL_AT", "COLOURS", "level", "Bar", "WorkerRow", "MonitorModel",
    "host_bar", "device_bar", "monitor_model", "SERIES", "History",
]

#: The knobs the control form shows, in this order; each label is the option's own name.
FORM_FIELDS = ("device", "n_workers", "threads_per_worker", "memory_limit", "device_memory_limit",
               "rmm_pool_size", "enable_cudf_spill", "protocol")
#: Options shown as a drop-down (every choice is accepted by ClusterOptions; a test pins that).
CHOICES = {"device": ("auto", "gpu", "cpu"), "protocol": ("tcp", "ucx")}
_FLAGS = ("enable_cudf_spill",)
_SIZES = ("memory_limit", "device_memory_limit", "rmm_pool_size")


@dataclass(frozen=True)
class FieldSpec:
    """One form field: ``kind`` is "choice" (drop-down), "flag" (checkbox) or "text"."""

    name: str
    kind: str
    value: Any
    choices: tuple[str, ...]
    tooltip: str
    placeholder: str


def tooltip(name: str) -> str:
    """The hover text of an option, from ``OPTION_DOCS`` (the one place each knob is documented).

    >>> tooltip("n_workers").startswith("Number of worker processes.")
    True
    """
    doc = OPTION_DOCS[name]
    text = f"{doc['help']} Accepted: {doc['accepted']}."
    if doc["per_worker"]:
        text += " Per worker."
    if doc["gpu_only"]:
        text += " GPU only (ignored in CPU mode)."
    return text


def _size_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if value % factor == 0:
            return f"{value // factor}{unit}"
    return str(value)


def field_value(name: str, value: Any) -> Any:
    """The form's text (or checkbox state) for a normalised option value; parsing it gives the value back.

    >>> field_value("memory_limit", 2**31), field_value("device_memory_limit", 0.8), field_value("n_workers", None)
    ('2GiB', '0.8', '')
    >>> field_value("device_memory_limit", None), field_value("enable_cudf_spill", True)
    ('off', True)
    """
    if name in _FLAGS:
        return bool(value)
    if value is None:
        return "off" if name == "device_memory_limit" else ""
    if name in _SIZES and isinstance(value, (int, float)):
        return _size_text(value)
    return str(value)


def form_fields(options: ClusterOptions) -> list[FieldSpec]:
    """The control form for ``options`` (defaults from config, or a running session's options)."""
    specs = []
    for name in FORM_FIELDS:
        kind = "choice" if name in CHOICES else "flag" if name in _FLAGS else "text"
        placeholder = "default" if name in ("n_workers", "threads_per_worker") else "none" if name in _SIZES else ""
        specs.append(FieldSpec(name, kind, field_value(name, getattr(options, name)), CHOICES.get(name, ()),
                               tooltip(name), placeholder))
    return specs


def parse_form(values: Mapping[str, Any], base: ClusterOptions | None = None) -> dict[str, Any]:
    """Keyword arguments for ``start_cluster`` from the form's values; raises the kit's ``OptionError``.

    Only fields that differ from the configured defaults are passed (so a CPU start does not report GPU
    options as "ignored"); options the running session ``base`` was given explicitly outside the form
    (``local_directory``, ``scheduler_address``, ...) are kept, so an unchanged form reuses that session.

    >>> parse_form({"device": "cpu", "n_workers": "2", "memory_limit": "auto"})
    {'device': 'cpu', 'n_workers': '2'}
    """
    carried = {n: getattr(base, n) for n in sorted(base.explicit) if n not in FORM_FIELDS} if base else {}
    raw = {n: (None if isinstance(v, str) and not v.strip() else v) for n, v in values.items() if n in FORM_FIELDS}
    wanted = ClusterOptions.from_config(**carried, **raw)  # raises OptionError naming the field
    defaults = ClusterOptions.from_config()
    changed = {n: raw[n] for n in raw if getattr(wanted, n) != getattr(defaults, n)}
    return {**carried, **changed}


def button_disabled(running: bool, busy: bool, can_scale: bool) -> dict[str, bool]:
    """Which buttons are disabled: everything while busy; Stop/Restart/Scale need a running cluster,
    Scale one the kit started (not a connection to an existing scheduler).

    >>> button_disabled(running=False, busy=False, can_scale=False)
    {'start': False, 'stop': True, 'restart': True, 'scale': True}
    """
    if busy:
        return dict.fromkeys(("start", "stop", "restart", "scale"), True)
    return {"start": False, "stop": not running, "restart": not running, "scale": not (running and can_scale)}


# -- memory monitor ------------------------------------------------------------------------------------
WARN_AT = 0.80
CRITICAL_AT = 0.95
COLOURS = {"ok": "#43a047", "warn": "#ffb300", "critical": "#e53935", "none": "#9e9e9e"}


def level(fraction: float | None) -> str:
    """"ok", "warn" (>= 80 %), "critical" (>= 95 %) or "none" (no limit known).

    >>> level(0.5), level(0.8), level(0.95), level(None)
    ('ok', 'warn', 'critical', 'none')
    """
    if fraction is None:
        return "none"
    return "critical" if fraction >= CRITICAL_AT else "warn" if fraction >= WARN_AT else "ok"


@dataclass(frozen=True)
class Bar:
    """One memory bar. ``fraction`` is the filled width (of ``scale``), ``limit_fraction`` where the
    limit mark sits (GPU: the spill threshold), ``level``/``colour`` how close ``used`` is to the limit."""

    kind: str
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


def host_bar(w: WorkerMemory) -> Bar:
    """Host memory against the worker's ``memory_limit`` (dask pauses near 80 % and restarts at 95 %)."""
    limit = w.host_memory_limit
    fraction = w.host_memory_used / limit if limit else None
    label = f"{format_bytes(w.host_memory_used)} / {format_bytes(limit)}" if limit else f"{format_bytes(w.host_memory_used)} (no limit)"
    lvl = level(fraction)
    return Bar("host", w.host_memory_used, limit, None, None if fraction is None else _clip(fraction), None, lvl, COLOURS[lvl], label)


def device_bar(w: WorkerMemory) -> Bar | None:
    """GPU memory used against the device total, with the spill threshold (``device_memory_limit``) marked;
    the colour says how close ``used`` is to that threshold (to the total when spilling is off)."""
    if w.device_memory_used is None:
        return None
    total, limit, used = w.device_memory_total, w.device_memory_limit, w.device_memory_used
    scale = total or limit
    closest = limit or total
    lvl = level(used / closest if closest else None)
    label = format_bytes(used)
    if limit:
        label += f" / spill at {format_bytes(limit)}"
    if total:
        label += f" / {format_bytes(total)}"
    return Bar("device", used, limit, total, _clip(used / scale) if scale else None,
               _clip(limit / total) if limit and total else None, lvl, COLOURS[lvl], label)


@dataclass(frozen=True)
class WorkerRow:
    name: str
    address: str
    pid: int
    device: Bar | None
    host: Bar
    spilled_to_host: int | None
    spilled_to_disk: int
    rmm_pool_size: int | None
    device_index: int | None


@dataclass(frozen=True)
class MonitorModel:
    """Everything the monitor shows for one snapshot."""

    backend: str
    time: float
    n_workers: int
    gpu: bool
    mode_line: str | None          # "No GPU: CPU mode. <reason>" on CPU
    rows: tuple[WorkerRow, ...]
    totals: dict[str, int]


def monitor_model(memory: ClusterMemory, reason: str = "") -> MonitorModel:
    """The monitor's model of one snapshot; ``reason`` is the session's backend reason."""
    gpu = memory.backend == "gpu" or any(w.device_memory_used is not None for w in memory.workers)
    rows = tuple(WorkerRow(w.name, w.address, w.pid, device_bar(w), host_bar(w), w.spilled_to_host, w.spilled_to_disk,
                           w.rmm_pool_size, w.device_index) for w in memory.workers)
    mode_line = None if gpu else ("No GPU: CPU mode. " + reason).strip()
    totals = {key: memory.total(key) for key, _, _ in SERIES}
    totals["host_memory_limit"] = memory.total("host_memory_limit")
    totals["device_memory_limit"] = memory.total("device_memory_limit")
    return MonitorModel(memory.backend, memory.time, len(memory.workers), gpu, mode_line, rows, totals)


#: The time series of cluster totals: (ClusterMemory field, legend, colour).
SERIES = (("device_memory_used", "GPU used", "#76b900"), ("host_memory_used", "host used", "#1e88e5"),
          ("spilled_to_host", "spilled to host", "#fb8c00"), ("spilled_to_disk", "spilled to disk", "#8e24aa"))


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
