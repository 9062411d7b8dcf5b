"""Jupyter server extension of gpu-dask-kit: authenticated JSON routes under ``gpu-dask-kit/api/``.

Enabled on install by ``jupyter-config/jupyter_server_config.d/gpu_dask_kit.json``. Settings (in
``jupyter_server_config.py`` or on the command line as ``--GpuDaskKit.<name>=...``):

- ``c.GpuDaskKit.workshop_notebook``: the Launcher card's notebook, relative to the server root.
- ``c.GpuDaskKit.gpu_sample_interval``: seconds between two NVML reads, whatever the number of tabs.
- ``c.GpuDaskKit.gateway_timeout``: seconds a Dask Gateway call of the sidebar may take (then a sentence).

Loading it also puts ``dask-labextension.yaml`` into ``dask.config`` as defaults, so the Dask pane's
"+ NEW" starts a kit cluster (``gpu_dask_kit.integrations.labextension.make_cluster``) that our sidebar lists.
"""

from __future__ import annotations

import os
from typing import Any

import dask.config
import yaml
from jupyter_server.utils import url_path_join
from traitlets import Float, Unicode
from traitlets.config import Configurable

from ..links import link_config
from .gateway import gateway_handlers
from .handlers import ServerState, make_handlers
from .memory_cache import MemoryCache
from .sampler import GpuSampler

__all__ = ["GpuDaskKit", "load_labextension_config", "_jupyter_server_extension_points", "_load_jupyter_server_extension"]

API_PATH = "gpu-dask-kit/api"
PAGE_CONFIG_KEY = "gpuDaskKitWorkshopNotebook"  # read by labextension/src/workshop.ts
_YAML = os.path.join(os.path.dirname(__file__), "dask-labextension.yaml")


class GpuDaskKit(Configurable):
    """Server-side settings of the gpu-dask-kit JupyterLab integration."""

    workshop_notebook = Unicode(
        "",
        config=True,
        help="Notebook the 'GPU Dask workshop' Launcher card opens, relative to the server root. "
        "Empty: 00_start_here.ipynb, then notebooks/00_start_here.ipynb.",
    )
    gpu_sample_interval = Float(1.0, min=0.1, config=True, help="Seconds between two NVML reads (shared by all clients).")
    memory_cache_seconds = Float(5.0, min=0.0, config=True, help="Seconds a session's memory totals are reused.")
    memory_timeout = Float(2.0, min=0.1, config=True, help="Seconds to wait for a scheduler's memory snapshot.")
    gateway_timeout = Float(5.0, min=0.5, config=True, help="Seconds a Dask Gateway call of the sidebar may take before it answers with a sentence.")


def load_labextension_config() -> dict[str, Any]:
    """Make our factory dask-labextension's default; a user's own ``labextension.factory`` still wins."""
    try:
        import dask_labextension.config  # noqa: F401  (its defaults first, so ours replace them)
    except ImportError:
        pass
    with open(_YAML) as f:
        defaults = yaml.safe_load(f)
    dask.config.update_defaults(defaults)
    return defaults


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gpu_dask_kit.server"}]


def _proxy_enabled(serverapp: Any) -> bool:
    enabled = getattr(serverapp, "jpserver_extensions", {}) or {}
    return bool(enabled.get("jupyter_server_proxy"))


def _load_jupyter_server_extension(serverapp: Any) -> None:
    settings = GpuDaskKit(parent=serverapp)
    load_labextension_config()
    dask.config.set(link_config())  # dashboard links (factory clusters, sidebar) through JupyterHub's proxy
    state = ServerState(
        sampler=GpuSampler(settings.gpu_sample_interval),
        memory=MemoryCache(max_age=settings.memory_cache_seconds, timeout=settings.memory_timeout, wait=min(1.0, settings.memory_timeout)),
        proxy=_proxy_enabled(serverapp),
        gateway_timeout=settings.gateway_timeout,
    )
    web_app = serverapp.web_app
    prefix = url_path_join(web_app.settings["base_url"], API_PATH)
    web_app.add_handlers(".*$", make_handlers(prefix, state) + gateway_handlers(prefix, {"state": state}))
    web_app.settings["gpu_dask_kit_state"] = state
    web_app.settings.setdefault("page_config_data", {})[PAGE_CONFIG_KEY] = settings.workshop_notebook
    serverapp.log.info("gpu-dask-kit server extension loaded at %s", prefix)


# the older name, for jupyter_server < 2 and notebook-shim
load_jupyter_server_extension = _load_jupyter_server_extension
