"""gpu-dask-kit: GPU (and CPU) Dask clusters for teaching, in one line.

    import gpu_dask_kit
    session = gpu_dask_kit.start_cluster()      # LocalCUDACluster with RMM + CuPy, or LocalCluster on CPU
    session.client, session.mode, session.dashboard_link, session.memory()
    session.close()

Importing this package starts nothing, touches no GPU, writes no file, and imports none of cupy, cudf,
rmm, cuml, dask_cuda, ipywidgets or jupyter_server.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .environment import EnvironmentReport, detect
from .errors import ClusterStartError, ConnectError, KitError, KitWarning, OptionError
from .options import ClusterOptions
from .scripts import add_cluster_args, start_cluster_from_args
from .session import ClusterSession, current_session, start_cluster

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


def show(session: ClusterSession | None = None, **kwargs: Any) -> Any:
    """Display the cluster controls and the live memory monitor (needs ipywidgets)."""
    from .notebook.widgets import show as _show

    return _show(session, **kwargs)
