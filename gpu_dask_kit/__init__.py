"""gpu-dask-kit: GPU (and CPU) Dask clusters for teaching, in one line.

    import gpu_dask_kit
    session = gpu_dask_kit.start_cluster()      # LocalCUDACluster with RMM + CuPy, or LocalCluster on CPU
    session.client, session.mode, session.dashboard_link, session.memory()
    session.close()

Importing this package starts nothing, touches no GPU, writes no file, and imports none of cupy, cudf,
rmm, cuml, dask_cuda, ipywidgets or jupyter_server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load on first use (below)
    from .environment import EnvironmentReport, detect
    from .errors import ClusterStartError, ConnectError, KitError, KitWarning, OptionError
    from .options import ClusterOptions
    from .scripts import add_cluster_args, start_cluster_from_args
    from .session import ClusterSession, current_session, start_cluster

#: Where each public name lives. The root imports a module only when one of its names is first used
#: (PEP 562), so a worker that unpickles the kit's plugins imports ``gpu_dask_kit.plugins`` and what it
#: needs, not the session machinery.
_HOMES = {
    "EnvironmentReport": "environment",
    "detect": "environment",
    "ClusterStartError": "errors",
    "ConnectError": "errors",
    "KitError": "errors",
    "KitWarning": "errors",
    "OptionError": "errors",
    "ClusterOptions": "options",
    "add_cluster_args": "scripts",
    "start_cluster_from_args": "scripts",
    "ClusterSession": "session",
    "current_session": "session",
    "start_cluster": "session",
}

__all__ = [
    "__version__",
    "ClusterOptions",
    "ClusterSession",
    "EnvironmentReport",
    "KitError",
    "OptionError",
    "ClusterStartError",
    "ConnectError",
    "KitWarning",
    "detect",
    "start_cluster",
    "current_session",
    "add_cluster_args",
    "start_cluster_from_args",
    "show",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # later uses are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def show(session: ClusterSession | None = None, **kwargs: Any) -> Any:
    """Display the cluster controls and the live memory monitor (needs ipywidgets)."""
    from .notebook.widgets import show as _show

    return _show(session, **kwargs)
