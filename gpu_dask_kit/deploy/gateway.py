"""The Dask Gateway target (``deploy="gateway"``): the user's cluster from a Dask Gateway (a JupyterHub's
daskhub / Nebari / 2i2c gateway, or any ``dask-gateway-server``), through dask-gateway's own client.

:func:`start` refuses the options a gateway cluster cannot apply, asks the gateway which cluster options it
offers and maps the kit's onto them (``threads_per_worker`` -> ``worker_cores``, ``memory_limit`` ->
``worker_memory`` in GiB, ``gateway_cluster_options`` as given), reconnects to the user's running cluster
with the same options (left by a kernel that died without closing it) or starts one, scales it to
``n_workers`` and decides the mode as for a connection: GPU when every worker is a dask-cuda worker. The
gateway gives each cluster its own TLS certificates and routes the scheduler and the dashboard through its
proxy. ``session.close()`` shuts the cluster down and waits until the gateway reports it stopped.
"""

from __future__ import annotations

import atexit
import time
import warnings
import weakref
from typing import Any

try:
    from dask_gateway import Gateway, GatewayCluster, GatewayClusterError, GatewayWarning
except ImportError as exc:  # imported only for deploy="gateway" (deploy.deployment.target_module)
    raise ImportError(f"deploy='gateway' needs dask-gateway: pip install 'gpu-dask-kit[gateway]' (or pip install dask-gateway) ({exc})") from exc

from .. import registry, scheduler_view
from ..environment import EnvironmentReport, detect
from ..errors import ClusterStartError, OptionError
from ..options import ClusterOptions
from ..plan import client_backends
from .connect import remote_mode_reason
from .deployment import Deployment, wait_for_workers
from .gateway_login import KitGateway, asked, check_options, cluster_options, on_own_loop, open_gateway

__all__ = ["KitGatewayCluster", "GatewayDeployment", "start", "user_clusters", "stop_user_cluster", "DEFAULT_WORKERS"]

DEFAULT_WORKERS = 2


class KitGatewayCluster(GatewayCluster):
    """dask-gateway's cluster with the kit's close: ``close(timeout=)`` closes the kit's client first (a client
    left open would try to reconnect to the stopped scheduler), shuts the cluster down, as closing any kit
    cluster stops its workers, and waits until the gateway reports it stopped."""

    kit_client: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            if isinstance(getattr(self, "gateway", None), Gateway):  # stopped by dask-gateway, its client left open
                self.adopt_gateway().close()
            raise
        self.adopt_gateway()

    @classmethod
    def from_name(cls, *args: Any, **kwargs: Any) -> KitGatewayCluster:
        cluster: KitGatewayCluster = super().from_name(*args, **kwargs)  # dask-gateway's: does not call __init__
        cluster.adopt_gateway()
        return cluster

    def adopt_gateway(self) -> KitGateway:
        """dask-gateway builds the cluster's own Gateway client: make it the kit's subclass (no state of its own,
        only a close that runs once and a __del__ that never blocks its own loop)."""
        self.gateway.__class__ = KitGateway
        return self.gateway

    def __del__(self) -> None:
        # dask-gateway's __del__ closes through the cluster's IO loop and waits: the garbage collector can run it on
        # that loop's own thread, which then waits for itself forever. The kit closes its clusters itself (at
        # session.close(), and at exit for the ones still open): one collected unclosed on its own loop is left to
        # the exit handler and the gateway's idle timeout.
        if not on_own_loop(self):
            super().__del__()

    def close(self, shutdown: bool | None = None, timeout: float | None = None) -> None:
        if self.kit_client is not None:
            try:
                self.kit_client.close(timeout=5 if timeout is None else timeout)
            except Exception:
                pass
        stop = self.shutdown_on_close if shutdown is None else shutdown
        if stop and self.name is not None and self.status != "closed":
            try:
                self.gateway.stop_cluster(self.name)
                _wait_stopped(self.gateway, self.name, 15.0 if timeout is None else timeout)
            except Exception:
                pass  # closed below whatever the gateway said
        super().close(shutdown=False)

    def adapt(self, minimum: int | None = None, maximum: int | None = None, active: bool = True, **kwargs: Any) -> Any:
        """dask-gateway's adaptive scaling (minimum, maximum); its period is the gateway's setting."""
        for name, value in kwargs.items():
            raise OptionError(
                name, value, "minimum and maximum only, on a Dask Gateway cluster", "its adaptive period is the admin's setting (ClusterConfig.adaptive_period)"
            )
        return super().adapt(minimum=minimum, maximum=maximum, active=active)


#: The kit's open gateway clusters, closed at interpreter exit before dask-gateway's own exit handler (which
#: would stop them with the kit's client still connected): registered after dask-gateway's, so it runs first.
_OPEN: weakref.WeakSet[KitGatewayCluster] = weakref.WeakSet()


@atexit.register
def _close_open() -> None:
    for cluster in list(_OPEN):
        try:
            cluster.close(timeout=5)
        except Exception:
            pass


def _wait_stopped(gateway: Any, name: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gateway.get_cluster(name).status.name in ("STOPPED", "FAILED"):
            return True
        time.sleep(0.2)
    return False


class GatewayDeployment(Deployment):
    """A gateway cluster: scaled to any number of workers the gateway allows (no local plan)."""

    def scale_target(self, n_workers: int) -> int:
        return int(n_workers)

    def scale(self, n_workers: int, timeout: float = 60.0) -> bool:
        _scale(self.cluster, n_workers)
        reached = wait_for_workers(self.client, n_workers, timeout)
        self.record.n_workers = len(scheduler_view.workers(self.client))
        registry.update(self.record)  # `gpu-dask-kit sessions` and the sidebar show the new count
        return reached


def user_clusters(options: ClusterOptions) -> list[Any]:
    """The user's pending and running clusters on the options' gateway (dask-gateway's ``ClusterReport``:
    name, status, dashboard_link, options): e.g. one a dead kernel left."""
    with open_gateway(options) as gateway:
        return list(asked(gateway, options, gateway.list_clusters))


def stop_user_cluster(options: ClusterOptions, name: str, timeout: float = 15.0) -> bool:
    """Shut down the user's gateway cluster ``name``; True once the gateway reports it stopped."""
    with open_gateway(options) as gateway:
        asked(gateway, options, gateway.stop_cluster, name)
        return _wait_stopped(gateway, name, timeout)


def _scale(cluster: Any, n_workers: int) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GatewayWarning)
        cluster.scale(n_workers)
    limits = [str(w.message) for w in caught if issubclass(w.category, GatewayWarning)]
    if limits:
        raise OptionError("n_workers", n_workers, f"a number of workers this gateway allows ({limits[0]})", "ask for fewer workers, or ask the admin")


def start(options: ClusterOptions, *, started_by: str = "notebook", security: Any = None, report: EnvironmentReport | None = None) -> Deployment:
    """Reconnect to the user's running cluster with these options, or start one; scale; decide the mode (the deploy interface)."""
    check_options(options, security)
    with open_gateway(options) as gateway:
        wanted = cluster_options(options, asked(gateway, options, gateway.cluster_options, use_local_defaults=False))
        running = [r for r in asked(gateway, options, gateway.list_clusters) if r.options == dict(wanted)]
        where = {"address": gateway.address, "proxy_address": gateway.proxy_address, "auth": gateway.auth}
    notes: list[str] = []
    try:
        if running:
            found = max(running, key=lambda r: r.start_time)
            cluster = KitGatewayCluster.from_name(found.name, shutdown_on_close=True, **where)
            notes.append(f"Reconnected to your running gateway cluster {found.name} (started {found.start_time:%H:%M:%S}) instead of starting a second.")
        else:
            cluster = KitGatewayCluster(cluster_options=wanted, shutdown_on_close=True, **where)
    except (GatewayClusterError, ValueError) as exc:
        raise ClusterStartError(f"The Dask Gateway at {where['address']} did not start the cluster: {exc}. Ask the admin for its log.") from exc
    return _attach(cluster, options, started_by, report, notes, created=not running)


def _attach(cluster: Any, options: ClusterOptions, started_by: str, report: EnvironmentReport | None, notes: list[str], created: bool) -> Deployment:
    client = None
    try:
        client = cluster.kit_client = cluster.get_client(set_as_default=True)
        _OPEN.add(cluster)
        have = len(scheduler_view.workers(client))
        n_workers = options.n_workers or (have if not created and have else DEFAULT_WORKERS)
        if n_workers != have:
            _scale(cluster, n_workers)
        if not wait_for_workers(client, n_workers, options.start_timeout):
            after = "it has been shut down" if created else "it runs on as before"
            raise ClusterStartError(f"The gateway cluster did not reach {n_workers} worker(s) within {options.start_timeout:g} s; {after}. Ask the admin.")
        mode, reason = remote_mode_reason(client)
        if options.device == "gpu" and mode != "gpu":
            raise OptionError(
                "device", "gpu", "a gateway whose workers are dask-cuda workers (`dask cuda worker`)", f"{reason} Use device='auto' or 'cpu', or ask the admin"
            )
        if options.device == "cpu" and mode == "gpu":
            mode, reason = "cpu", reason + " device='cpu': dask's backends stay NumPy and pandas."
        array, dataframe = client_backends(mode, report or detect("auto"), notes)
        record = registry.register(
            scheduler_address=cluster.scheduler_address,
            dashboard_link=cluster.dashboard_link,
            mode=mode,
            n_workers=n_workers,
            options=options.to_dict(),
            started_by=started_by,
        )
    except BaseException:
        if client is not None:
            client.close()
        cluster.close(shutdown=created)  # a cluster this start found running stays as it was
        raise
    return GatewayDeployment("gateway", mode, reason, client, record, cluster, None, notes, array, dataframe)
