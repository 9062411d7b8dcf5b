"""What the kit installs on its workers.

:class:`IgnoreInterrupt`: Jupyter's stop button (and Ctrl+C in a terminal) sends SIGINT to the kernel's
whole process group, and the kit's worker processes are in it. Without this plugin they die on the
signal, their nannies do not bring them back, and every later computation hangs (dask/distributed#1925).
With it, an interrupt stops only the notebook's wait; the cluster stays usable. Workers a nanny restarts
get the plugin again from the scheduler.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["IgnoreInterrupt", "PLUGIN_NAME"]

PLUGIN_NAME = "gpu-dask-kit-ignore-sigint"


class IgnoreInterrupt(WorkerPlugin):
    """Ignore SIGINT in the worker process (only the kernel should react to the stop button)."""

    name = PLUGIN_NAME

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
