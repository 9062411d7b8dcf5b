"""Dashboard links that work locally and behind JupyterHub's proxy."""

from __future__ import annotations

import os

__all__ = ["dashboard_link_for"]


def dashboard_link_for(host: str, port: int, environ: dict | None = None) -> str:
    """The dashboard URL for a dashboard listening on ``host:port``.

    Behind JupyterHub (``JUPYTERHUB_SERVICE_PREFIX`` set) the browser cannot reach 127.0.0.1 of the
    server, so the link goes through jupyter-server-proxy under the user's server prefix.

    >>> dashboard_link_for("127.0.0.1", 8787, environ={})
    'http://127.0.0.1:8787/status'
    >>> dashboard_link_for("127.0.0.1", 8787, environ={"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"})
    '/user/ada/proxy/8787/status'
    """
    env = os.environ if environ is None else environ
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX")
    if prefix:
        return f"{prefix.rstrip('/')}/proxy/{int(port)}/status"
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{int(port)}/status"
