"""Notebook widgets over the kit's public API: cluster controls and a live memory monitor.

    import gpu_dask_kit
    panel = gpu_dask_kit.show()          # or session.show(); displays the controls and the monitor
    panel.controls.session               # the session started from the widget (== current_session())
    panel.close()                        # stops the monitor's thread

Importing :mod:`gpu_dask_kit` does not import this package (nor ipywidgets); ``show()`` does.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ..session import ClusterSession, current_session
from .controls import ClusterControls
from .monitor_view import MemoryMonitor

__all__ = ["show", "KitPanel", "ClusterControls", "MemoryMonitor"]


class KitPanel(widgets.VBox):
    """The controls above the monitor. Actions of the controls make the monitor follow the new session;
    a session started from code is picked up by the monitor, which tells the controls."""

    def __init__(self, controls: ClusterControls | None, monitor: MemoryMonitor | None, **kwargs: Any) -> None:
        self.controls = controls
        self.monitor = monitor
        self._shown_in: int | None = None
        if controls is not None and monitor is not None:
            controls.on_session_change(lambda _session: monitor.watch(None))
            monitor.on_session_change(lambda session: controls.refresh(session))
        super().__init__([w for w in (controls, monitor) if w is not None], **kwargs)

    def close(self) -> None:
        """Stop the monitor's thread and close both widgets (a running cluster keeps running)."""
        for child in (self.monitor, self.controls):
            if child is not None:
                child.close()
        super().close()

    def _ipython_display_(self) -> None:
        # show() displays the panel and returns it; when that call is the cell's last expression, IPython
        # would display the returned panel a second time. Skip exactly that one echo (same execution).
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if self._shown_in is not None and count == self._shown_in:
            self._shown_in = None
            return
        display(self._repr_mimebundle_(), raw=True)


def show(session: ClusterSession | None = None, *, interval: float = 1.0, window: float = 300.0,
         controls: bool = True, monitor: bool = True, display: bool = True) -> KitPanel:
    """Display the cluster controls and the memory monitor (refreshing every ``interval`` seconds, keeping
    ``window`` seconds of history) and return the panel. ``session`` defaults to ``current_session()``.
    ``display=False`` only builds it (for embedding in your own layout)."""
    follow = session is None or session is current_session()
    ctl = ClusterControls(session) if controls else None
    mon = MemoryMonitor(None if follow else session, interval=interval, window=window) if monitor else None
    panel = KitPanel(ctl, mon)
    if display:
        from IPython import get_ipython
        from IPython.display import display as ipy_display

        ipy_display(panel)
        panel._shown_in = getattr(get_ipython(), "execution_count", None)
    return panel
