"""MemoryMonitor: live per-worker GPU/host memory, spilling and RMM pool, plus a time series of the totals.

A daemon thread polls ``session.memory()`` every ``interval`` seconds (default 1 s) and updates three
``ipywidgets.HTML`` children. A thread, not the kernel's event loop, because a coroutine on ipykernel's
loop only runs between cells: the monitor has to keep moving while a learner's cell computes.
The thread stops when the widget is closed (``close()``) or, for a monitor bound to one session, when
that session closes. Without a session it follows ``current_session()`` (idle while none runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

import gpu_dask_kit as kit
from gpu_dask_kit import ClusterSession

from .markup import chart_html, monitor_header_html, monitor_table_html
from .viewmodel import History, MonitorModel, monitor_model

__all__ = ["MemoryMonitor"]

_UNSET = object()


class MemoryMonitor(widgets.VBox):
    """Live memory view of ``session`` (or of ``current_session()`` when None).

    ``interval`` (seconds between refreshes) can be changed while it runs; ``window`` is how many seconds
    the time series keeps. ``model`` is the last :class:`~.viewmodel.MonitorModel`, ``running`` whether
    the polling thread is alive.
    """

    def __init__(
        self,
        session: ClusterSession | None = None,
        *,
        interval: float = 1.0,
        window: float = 300.0,
        autostart: bool = True,
        compact: bool = False,
        **kwargs: Any,
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval={interval!r} is not accepted: expected a number of seconds > 0, such as 1.0.")
        self.interval = float(interval)
        self.compact = compact  # under the controls: their status line says which cluster, its workers and why
        self.history = History(window)
        self.model: MonitorModel | None = None
        self.ticks = 0
        self._session = session
        self._seen: Any = _UNSET  # the session shown by the last refresh
        self.last_error: str | None = None
        self._listeners: list[Callable[[ClusterSession | None], None]] = []
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.header = widgets.HTML()
        self.table = widgets.HTML()
        self.chart = widgets.HTML()
        super().__init__([self.header, self.table, self.chart], **kwargs)
        self.refresh()
        if autostart:
            self.start()

    # -- public ----------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def session(self) -> ClusterSession | None:
        """The session on display: the bound one, or ``current_session()`` when following."""
        return self._session if self._session is not None else kit.current_session()

    def on_session_change(self, callback: Callable[[ClusterSession | None], None]) -> None:
        """Call ``callback(session)`` (from the polling thread) when the session on display changes."""
        self._listeners.append(callback)

    def start(self) -> None:
        """Start polling (no-op while already polling)."""
        with self._lock:
            if self.running:
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="gpu-dask-kit-monitor", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop polling and wait for the thread to end."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def watch(self, session: ClusterSession | None = None) -> None:
        """Show ``session`` from now on (None: follow ``current_session()``) and refresh at once."""
        self._session = session
        self.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the polling thread, then close the widget and its children."""
        self.stop()
        for child in (self.header, self.table, self.chart):
            child.close()
        super().close()

    def refresh(self) -> bool:
        """Take one snapshot and update the view; False when there is nothing left to follow."""
        bound = self._session is not None
        session = self.session
        alive = session is not None and session.is_alive()
        shown = session if alive else None
        if shown is not self._seen:
            first = self._seen is _UNSET
            self._seen = shown
            self.history.clear()
            if not first:
                self._notify(shown)
        if session is None or not alive:
            self.model = None
            note = "the cluster was closed; monitor stopped" if bound else "no cluster running (start one above or with start_cluster())"
            self._set(self.header, monitor_header_html(None, note=note))
            self._set(self.table, "")
            self._set(self.chart, "")
            return not bound
        try:
            memory = session.memory()
        except Exception as exc:  # a worker restarting, the cluster closing: show it and try again next time
            if session.is_alive():
                self._set(self.header, monitor_header_html(self.model, note=f"could not read memory ({type(exc).__name__}: {exc})", compact=self.compact))
            return True
        model = monitor_model(memory, session.reason)
        self.model = model
        self.history.add(model)
        self.ticks += 1
        self._set(self.header, monitor_header_html(model, compact=self.compact))
        self._set(self.table, monitor_table_html(model))
        self._set(self.chart, chart_html(self.history, model))
        return True

    # -- internals -------------------------------------------------------------------------------------
    @staticmethod
    def _set(widget: widgets.HTML, value: str) -> None:
        if widget.value != value:  # one comm message only when something changed
            widget.value = value

    def _notify(self, session: ClusterSession | None) -> None:
        for callback in list(self._listeners):
            try:
                callback(session)
            except Exception as exc:  # a listener's failure must not stop the monitor; kept for inspection
                self.last_error = f"{type(exc).__name__}: {exc}"

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                keep = self.refresh()
            except Exception as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                self._set(self.header, monitor_header_html(self.model, note=f"monitor error ({self.last_error})", compact=self.compact))
                keep = True
            if not keep:
                break
            self._wake.wait(self.interval)
            self._wake.clear()
