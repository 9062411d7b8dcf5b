"""Dashboard links through distributed's own ``distributed.dashboard.link`` config.

The kit builds no link by hand: it sets ``distributed.dashboard.link`` so that distributed formats every
dashboard link (``Client.dashboard_link``, the cluster's repr, ``ClusterSession.dashboard_link``, the
session record the sidebar reads, dask-labextension's link). Behind JupyterHub (``JUPYTERHUB_SERVICE_PREFIX``
set) the browser cannot reach the server's 127.0.0.1, so the link goes through jupyter-server-proxy under
the user's server prefix; elsewhere distributed's default stays.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import dask.config

__all__ = ["CONFIG_KEY", "dashboard_link_template", "link_config"]

CONFIG_KEY = "distributed.dashboard.link"
#: distributed's default (in distributed.yaml); a user's own template is never replaced.
DEFAULT_TEMPLATE = "{scheme}://{host}:{port}/status"


def dashboard_link_template(environ: Mapping[str, str]) -> str | None:
    """The ``distributed.dashboard.link`` template for this environment; None keeps distributed's default.

    >>> dashboard_link_template({})
    >>> dashboard_link_template({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"})
    '/user/ada/proxy/{port}/status'
    >>> dashboard_link_template({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada"}).format(port=8787, host="x", scheme="http")
    '/user/ada/proxy/8787/status'
    """
    prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX")
    if not prefix:
        return None
    literal = prefix.rstrip("/").replace("{", "{{").replace("}", "}}")
    return f"{literal}/proxy/{{port}}/status"


def link_config(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The dask config to set for this process's dashboard links (``{}``: keep what is configured).

    Importing ``distributed.config`` first loads distributed's defaults, so that the value a session saves
    before it starts (and restores when it closes) is distributed's template, not a missing key: restoring
    None made the next scheduler fail to format its link (seen behind JupyterHub when a re-run replaced a
    session)."""
    import distributed.config  # noqa: F401  (loads distributed's config defaults)

    template = dashboard_link_template(os.environ if environ is None else environ)
    if template is None or dask.config.get(CONFIG_KEY, DEFAULT_TEMPLATE) != DEFAULT_TEMPLATE:
        return {}
    return {CONFIG_KEY: template}
