"""Talking to a Dask Gateway for :mod:`.gateway` (``deploy="gateway"``): the login (``gateway_auth``), the
health check, the gateway's failures in the kit's words, and the kit's options set on the gateway's own
cluster options (or refused, naming the kit's option). Nothing here starts a cluster.
"""

from __future__ import annotations

import asyncio
import os
import urllib.error
import urllib.request
from typing import Any

import aiohttp  # dask-gateway's HTTP client (deploy/gateway.py says what to install when it is missing)
from dask_gateway import Gateway, GatewayServerError, JupyterHubAuth

from ..errors import ConnectError, OptionError
from ..options import ClusterOptions

__all__ = ["KitGateway", "on_own_loop", "open_gateway", "asked", "cluster_options", "check_options"]


def on_own_loop(client: Any) -> bool:
    """Whether this code runs on the IO loop of ``client`` (a dask-gateway Gateway or GatewayCluster)."""
    try:
        return asyncio.get_running_loop() is client.loop.asyncio_loop
    except RuntimeError:  # no running loop here, or the client's loop is stopped
        return False


class KitGateway(Gateway):
    """dask-gateway's client, closed once. dask-gateway's ``Gateway.__del__`` closes again (on a stopped loop:
    a RuntimeError traceback printed into the notebook), and closes an open client through its IO loop and waits,
    which blocks forever when the garbage collector runs it on that loop's own thread (seen with py-spy)."""

    kit_closed = False

    def close(self) -> None:
        if not self.kit_closed:
            self.kit_closed = True
            super().close()

    def __del__(self) -> None:
        if not self.kit_closed and not on_own_loop(self):
            super().__del__()


#: Kit options a gateway cluster cannot apply: the gateway's admin decides how its workers start.
_NOT_ON_GATEWAY = (
    "device_memory_limit", "rmm_pool_size", "rmm_maximum_pool_size", "rmm_async", "rmm_managed_memory",
    "enable_cudf_spill", "CUDA_VISIBLE_DEVICES", "protocol", "local_directory", "dashboard_address", "host",
)  # fmt: skip
#: Kit options that map to the gateway's cluster options of the usual names (dask-gateway's docs and daskhub).
_MAPPED = {"threads_per_worker": "worker_cores", "memory_limit": "worker_memory"}
_ADMIN = "the gateway's admin sets how its workers start (ClusterConfig.worker_cmd / worker_class)"


def _auth(options: ClusterOptions) -> Any:
    """dask-gateway's auth for ``gateway_auth`` (None: dask-gateway's config ``gateway.auth``)."""
    token = os.environ.get("JUPYTERHUB_API_TOKEN")
    auth = options.gateway_auth
    if auth == "auto":
        return JupyterHubAuth(api_token=token) if token else None
    if auth == "jupyterhub":
        if not token:
            raise OptionError(
                "gateway_auth", auth, "'jupyterhub' inside a JupyterHub server (it sets JUPYTERHUB_API_TOKEN)", "outside a hub use 'basic' or 'kerberos'"
            )
        return JupyterHubAuth(api_token=token)
    return auth  # "basic" | "kerberos": dask-gateway builds it with its config's gateway.auth.kwargs


def open_gateway(options: ClusterOptions) -> KitGateway:
    """dask-gateway's client for the options' gateway, once its health check answered (within connect_timeout).
    The caller closes it (``with open_gateway(options) as gateway:``): a ``Gateway`` left open keeps its IO-loop
    thread, and its ``__del__`` then blocks whichever thread the garbage collector runs in on that loop (once a
    new client's loop thread: it did not start within distributed's 10 s, ``assert loop is not None``)."""
    auth = _auth(options)  # its OptionError (a ValueError) names gateway_auth
    try:
        gateway = KitGateway(options.gateway_address, auth=auth)
    except ValueError as exc:
        raise OptionError("gateway_address", None, "the Dask Gateway's address", "pass gateway_address=, or set dask-gateway's config gateway.address") from exc
    except (ImportError, TypeError) as exc:
        raise OptionError("gateway_auth", options.gateway_auth, "an auth dask-gateway can build here", f"{exc}") from exc
    try:
        _health(gateway, options)
    except BaseException:
        gateway.close()
        raise
    return gateway


def _health(gateway: Gateway, options: ClusterOptions) -> None:
    """The gateway's health check, its failures said in the kit's words."""
    try:
        with urllib.request.urlopen(f"{gateway.address}/api/health", timeout=options.connect_timeout):
            pass
    except urllib.error.HTTPError as exc:
        raise ConnectError(
            f"gateway_address={gateway.address!r} answered HTTP {exc.code} at /api/health: not a working Dask Gateway. Check the address."
        ) from exc
    except (OSError, ValueError) as exc:
        raise ConnectError(
            f"gateway_address={gateway.address!r}: no Dask Gateway answered within {options.connect_timeout:g} s ({exc}). "
            "Check the address (your hub's admin has it) and that the gateway runs."
        ) from exc


def asked(gateway: Gateway, options: ClusterOptions, call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)`` on the gateway, its failures said in the kit's words."""
    try:
        return call(*args, **kwargs)
    except aiohttp.ClientResponseError as exc:
        if exc.status in (401, 403):
            raise ConnectError(
                f"gateway_auth={options.gateway_auth!r}: the Dask Gateway at {gateway.address} refused the login (HTTP {exc.status} {exc.message}). "
                "Inside a hub the hub's token is used; elsewhere the user name and password come from dask-gateway's config "
                "gateway.auth.kwargs (e.g. DASK_GATEWAY__AUTH__KWARGS__PASSWORD)."
            ) from exc
        raise ConnectError(f"The Dask Gateway at {gateway.address} answered HTTP {exc.status} {exc.message}.") from exc
    except (aiohttp.ClientError, OSError, TimeoutError, GatewayServerError) as exc:
        raise ConnectError(f"The Dask Gateway at {gateway.address} failed: {type(exc).__name__}: {exc}") from exc


def cluster_options(options: ClusterOptions, offered: Any) -> Any:
    """The gateway's cluster options (``offered``, dask-gateway's ``Options``) set from the kit's; OptionError
    naming the kit's option for one the gateway does not offer or refuses."""
    wanted: dict[str, tuple[str, Any]] = {}
    for kit, theirs in _MAPPED.items():
        value = getattr(options, kit)
        if kit in options.explicit and value not in (None, "auto"):
            if kit == "memory_limit" and not isinstance(value, int):
                raise OptionError(kit, value, 'a size such as "4GiB" with deploy="gateway"', "the gateway's worker memory is a size, not a fraction")
            wanted[theirs] = (kit, value / 2**30 if kit == "memory_limit" else value)
    wanted.update((name, ("gateway_cluster_options", value)) for name, value in options.gateway_cluster_options)
    for name, (kit, value) in wanted.items():
        shown = {name: value} if kit == "gateway_cluster_options" else getattr(options, kit)
        if name not in offered:
            available = ", ".join(offered) or "none"
            raise OptionError(kit, shown, f"an option this gateway offers ({name!r} is not one; it offers: {available})", f"leave {kit} out, or ask the admin")
        try:
            offered[name] = value
        except (ValueError, TypeError, AttributeError) as exc:
            raise OptionError(kit, shown, f"a value this gateway accepts for {name!r} ({exc})", "pick a value within the gateway's limits") from exc
    return offered


def check_options(options: ClusterOptions, security: Any) -> None:
    for name in _NOT_ON_GATEWAY:
        if name in options.explicit:
            raise OptionError(name, getattr(options, name), 'nothing with deploy="gateway": ' + _ADMIN, f"leave {name} out")
    if security not in (None, False, True):
        raise OptionError(
            "security", security, 'None or True with deploy="gateway" (the gateway gives each cluster its own TLS certificates)', "leave security out"
        )
