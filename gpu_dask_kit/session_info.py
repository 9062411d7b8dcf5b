"""What a :class:`~gpu_dask_kit.session.ClusterSession` tells about itself: its cluster, workers, links
and memory. Reads only; the lifecycle (start, reuse, scale, close) is in :mod:`gpu_dask_kit.session`."""

from __future__ import annotations

from typing import Any

from . import clients

__all__ = ["SessionInfo"]


class SessionInfo:
    """Read-only properties of a session (the base of ``ClusterSession``)."""

    options: Any
    plan: Any
    cluster: Any
    client: Any
    record: Any
    mode: str
    reason: str
    _kit_client: Any
    _async_client: Any
    _dashboard_link: str | None
    _closed: bool

    @property
    def backend(self) -> str:
        """The older name of :attr:`mode` ("gpu" | "cpu")."""
        return self.mode

    @property
    def id(self) -> str | None:
        return self.record.id if self.record else None

    @property
    def scheduler_address(self) -> str:
        return str(self._kit_client.scheduler.address)

    @property
    def dashboard_link(self) -> str | None:
        """distributed's dashboard link (``Client.dashboard_link``): through JupyterHub's proxy when
        ``JUPYTERHUB_SERVICE_PREFIX`` is set (see :mod:`gpu_dask_kit.links`); None without a dashboard."""
        if self.options.dashboard_address is None and not self.options.connect_mode:
            return None
        if self._dashboard_link is None:  # asked once: the port does not change while the scheduler runs
            try:
                self._dashboard_link = self._kit_client.dashboard_link or None
            except Exception:
                return None
        return self._dashboard_link

    @property
    def n_workers(self) -> int:
        return len(self._kit_client.scheduler_info(n_workers=-1)["workers"])

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def asynchronous(self) -> bool:
        """True when ``client`` is an asynchronous client (``start_cluster(asynchronous=True)``)."""
        return self._async_client is not None and self.client is self._async_client

    def is_alive(self) -> bool:
        """True while the client is connected and the cluster (if the kit started it) runs."""
        if self._closed or self._kit_client.status != "running":
            return False
        status = getattr(getattr(self.cluster, "status", None), "name", "running")
        return self.cluster is None or status == "running"

    def summary(self) -> str:
        """One line: what runs, with how many workers, and why that mode."""
        what = "Connected to" if self.options.connect_mode else "Started"
        kind = "GPU (LocalCUDACluster)" if self.mode == "gpu" and not self.options.connect_mode and self.options.deploy == "local" else self.mode.upper()
        return f"{what} a {kind} cluster with {self.n_workers} worker(s). {self.reason}"

    def memory(self) -> Any:
        """Memory per worker (device, host, spilled, RMM pool) as plain data; see :mod:`gpu_dask_kit.monitor`."""
        from .monitor import snapshot

        clients.warn_if_foreign(self)  # a Client(...) made after start_cluster() computes elsewhere
        limit = self.plan.kwargs.get("device_memory_limit") if self.plan is not None else None
        return snapshot(self._kit_client, backend=self.mode, device_memory_limit=limit or None, fresh=True)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.n_workers} workers"
        return f"<ClusterSession {self.mode} {state} scheduler={self.scheduler_address if not self._closed else '-'}>"
