"""The user's Dask Gateway clusters for the sidebar: listed and stopped with dask-gateway's own client.

Routes, under ``<base_url>gpu-dask-kit/api/`` (see :func:`gateway_handlers`):

- ``GET gateway-clusters``           -> ``models.gateway_clusters_reply``: ``configured`` false when neither
  the kit's ``gateway_address`` nor dask-gateway's ``gateway.address`` names a gateway; otherwise the
  user's clusters, or ``error``: one sentence (unreachable gateway, refused login, ...)
- ``DELETE gateway-clusters/<name>`` -> 204 once the gateway reports it stopped (202 while it still stops);
  400 for a malformed name, 404 when no gateway is configured, 502 with the gateway's refusal as a sentence

Who "the user" is, is the gateway's business: the login is the kit's ``gateway_auth`` (the hub's token
inside a JupyterHub, else dask-gateway's config), so a user lists and stops only their own clusters. The
calls use dask-gateway's asynchronous client on the server's event loop (not ``deploy.gateway``'s sync
helpers: each of those starts an IO-loop thread, and in the server a later one hung on starting it).
Every call is time-boxed (``GpuDaskKit.gateway_timeout``): the sidebar gets a sentence, never a hang.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import urllib.request
from typing import Any

import dask.config
from jupyter_server.auth.decorator import authorized
from tornado import web

from ..errors import KitError
from ..options import ClusterOptions
from .handlers import KitHandler
from .models import gateway_cluster_model, gateway_clusters_reply

try:
    import aiohttp
    from dask_gateway import Gateway, JupyterHubAuth
except ImportError as exc:  # dask-gateway is an optional extra: said in the reply when a gateway is configured
    Gateway, MISSING = None, str(exc)
else:
    MISSING = ""

__all__ = ["gateway_address", "list_clusters", "stop_cluster", "gateway_handlers"]

#: Seconds a stop waits for the gateway to report the cluster stopped (its scheduler and workers end first).
STOP_WAIT = 15.0
_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"  # a gateway cluster name, matched whole


def gateway_address(options: ClusterOptions) -> str | None:
    """The configured gateway (the kit's ``gateway_address``, else dask-gateway's ``gateway.address``), or None."""
    return options.gateway_address or dask.config.get("gateway.address", None) or None


def _options(timeout: float) -> ClusterOptions:
    return ClusterOptions.from_config(connect_timeout=timeout)


def _workers(dashboard_link: str | None, timeout: float) -> int | None:
    """The cluster's worker count from its scheduler's ``json/counts.json`` (through the gateway's proxy); None unknown."""
    if not dashboard_link or not dashboard_link.endswith("/status"):
        return None
    try:
        with urllib.request.urlopen(dashboard_link[: -len("status")] + "json/counts.json", timeout=timeout) as reply:
            return int(json.load(reply)["workers"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _auth(options: ClusterOptions) -> Any:
    """dask-gateway's auth for ``gateway_auth``, as ``deploy="gateway"`` picks it (the hub's token inside a hub)."""
    token = os.environ.get("JUPYTERHUB_API_TOKEN")
    if options.gateway_auth in ("auto", "jupyterhub") and token:
        return JupyterHubAuth(api_token=token)
    return None if options.gateway_auth in ("auto", "jupyterhub") else options.gateway_auth


async def _ask(address: str, options: ClusterOptions, method: str, *args: Any) -> Any:
    """``Gateway.<method>(*args)`` on this server's event loop (dask-gateway's asynchronous client, closed
    after): a sync client per call would start an IO-loop thread each time the sidebar polls."""
    try:
        async with Gateway(address, auth=_auth(options), asynchronous=True) as gateway:
            return await getattr(gateway, method)(*args)
    except aiohttp.ClientResponseError as exc:
        if exc.status == 401:
            raise KitError(
                f"The Dask Gateway at {address} refused the login (HTTP 401). Inside a hub the hub's token is used; elsewhere "
                "the user name and password come from dask-gateway's config gateway.auth.kwargs."
            ) from exc
        raise KitError(f"The Dask Gateway at {address} answered HTTP {exc.status} {exc.message}.") from exc
    except (aiohttp.ClientError, OSError, ValueError, TypeError, ImportError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise KitError(f"The Dask Gateway at {address} could not be reached ({why}). Check the address and that the gateway runs.") from exc


async def list_clusters(timeout: float, in_thread: Any) -> dict[str, Any]:
    """The model of ``GET gateway-clusters``."""
    try:
        options = _options(timeout)
    except KitError as exc:
        return gateway_clusters_reply(None, [], f"The kit's configuration is not valid: {exc}")
    address = gateway_address(options)
    if address is None:
        return gateway_clusters_reply(None, [], None)
    if Gateway is None:
        return gateway_clusters_reply(address, [], f"Listing the Dask Gateway's clusters needs dask-gateway in this server's environment ({MISSING}).")
    try:
        reports = await asyncio.wait_for(_ask(address, options, "list_clusters"), timeout)
    except KitError as exc:
        return gateway_clusters_reply(address, [], str(exc))
    except TimeoutError:
        silent = f"The Dask Gateway at {address} did not answer within {timeout:g} s. Check the address and that the gateway runs."
        return gateway_clusters_reply(address, [], silent)
    workers = await asyncio.gather(*(in_thread(_workers, r.dashboard_link, min(timeout, 2.0)) for r in reports))
    return gateway_clusters_reply(address, [gateway_cluster_model(r, n) for r, n in zip(reports, workers, strict=True)], None)


async def stop_cluster(name: str, timeout: float) -> bool:
    """Stop the user's cluster ``name``; True once the gateway reports it stopped within STOP_WAIT."""
    options = _options(timeout)
    address = gateway_address(options)
    if address is None:
        raise LookupError("No Dask Gateway is configured (gateway_address, or dask-gateway's gateway.address).")
    if Gateway is None:
        raise KitError(f"Stopping a Dask Gateway cluster needs dask-gateway in this server's environment ({MISSING}).")
    await asyncio.wait_for(_ask(address, options, "stop_cluster", name), timeout)
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        report = await asyncio.wait_for(_ask(address, options, "get_cluster", name), timeout)
        if report.status.name in ("STOPPED", "FAILED"):
            return True
        await asyncio.sleep(0.3)
    return False


class GatewayClustersHandler(KitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        timeout = self.state.gateway_timeout
        try:
            model = await asyncio.wait_for(list_clusters(timeout, self.in_thread), timeout + 3.0)
        except TimeoutError:
            where = gateway_address(_options(timeout)) or "the configured address"
            model = gateway_clusters_reply(where, [], f"The Dask Gateway at {where} did not answer within {timeout + 3.0:g} s.")
        self.finish_json(model)


class GatewayClusterHandler(KitHandler):
    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        if not re.fullmatch(_NAME, name):
            raise web.HTTPError(400, f"name={name!r} is not a Dask Gateway cluster name (letters, digits, '.', '_', '-'); take it from GET gateway-clusters.")
        timeout = self.state.gateway_timeout
        box = STOP_WAIT + 2 * timeout
        try:
            stopped = await asyncio.wait_for(stop_cluster(name, timeout), box)
        except LookupError as exc:
            raise web.HTTPError(404, str(exc)) from None
        except KitError as exc:
            raise web.HTTPError(502, str(exc)) from None
        except TimeoutError:  # also the gateway's own calls, time-boxed inside
            raise web.HTTPError(504, f"The Dask Gateway did not stop {name} within {box:g} s; it may still be stopping.") from None
        self.set_status(204 if stopped else 202)
        self.finish()


def gateway_handlers(prefix: str, kwargs: dict[str, Any]) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (f"{prefix}/gateway-clusters/?", GatewayClustersHandler, kwargs),
        (f"{prefix}/gateway-clusters/(?P<name>[^/]+)/?", GatewayClusterHandler, kwargs),
    ]
