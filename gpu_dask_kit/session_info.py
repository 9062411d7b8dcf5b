"""What a :class:`~gpu_dask_kit.session.ClusterSession` tells about itself: its cluster, workers, links
and memory. Reads only; the lifecycle (start, reuse, scale, close) is in :mod:`gpu_dask_kit.session`."""

from __future__ import annotations

import warnings
from typing import Any

from . import clients, scheduler_view

__all__ = ["SessionInfo", "CONNECT_OPTIONS", "plain_reason", "replaced_message"]

#: The options connect mode uses; any other given explicitly is ignored there (the workers run elsewhere).
CONNECT_OPTIONS = frozenset({"scheduler_address", "scheduler_file", "connect_timeout"})
_NO_GPU_WORDS = ("NVML", "NVIDIA driver", "nvidia-ml-py")


class SessionInfo:
    """Read-only properties of a session (the base of ``ClusterSession``)."""

    options: Any
    plan: Any
    cluster: Any
    client: Any
    record: Any
    mode: str
    reason: str
    notes: list[str]
    replaced_by: Any
    kit_client: Any
    async_client: Any
    started_at: float
    _dashboard_link: str | None
    _closed: bool

    @property
    def backend(self) -> str:
        """Deprecated: the older name of :attr:`mode` ("gpu" | "cpu")."""
        warnings.warn('session.backend is deprecated; use session.mode ("gpu" or "cpu").', DeprecationWarning, stacklevel=2)
        return self.mode

    @property
    def id(self) -> str | None:
        return self.record.id if self.record else None

    @property
    def scheduler_address(self) -> str:
        return str(self.kit_client.scheduler.address)

    @property
    def dashboard_link(self) -> str | None:
        """distributed's dashboard link (``Client.dashboard_link``): through JupyterHub's proxy when
        ``JUPYTERHUB_SERVICE_PREFIX`` is set (see :mod:`gpu_dask_kit.links`); None without a dashboard."""
        if self.options.dashboard_address is None and not self.options.connect_mode:
            return None
        if self._dashboard_link is None:  # asked once: the port does not change while the scheduler runs
            try:
                self._dashboard_link = self.kit_client.dashboard_link or None
            except Exception:
                return None
        return self._dashboard_link

    @property
    def n_workers(self) -> int:
        return len(scheduler_view.workers(self.kit_client))

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def asynchronous(self) -> bool:
        """True when ``client`` is an asynchronous client (``start_cluster(asynchronous=True)``)."""
        return self.async_client is not None and self.client is self.async_client

    def successor(self) -> Any:
        """The open session that replaced this one (through later ``start_cluster()`` calls), or None."""
        later = self.replaced_by
        while later is not None and later.replaced_by is not None:
            later = later.replaced_by
        return later if later is not None and not later.closed else None

    def is_alive(self) -> bool:
        """True while the client is connected and the cluster (if the kit started it) runs."""
        if self._closed or self.kit_client.status != "running":
            return False
        status = getattr(getattr(self.cluster, "status", None), "name", "running")
        return self.cluster is None or status == "running"

    def summary(self) -> str:
        """One line: what runs, with how many workers, and why that mode (in plain words; the detection
        detail is in ``gpu-dask-kit doctor``)."""
        what = "Connected to" if self.options.connect_mode else "Started"
        label = "GPU (LocalCUDACluster)" if self.mode == "gpu" and not self.options.connect_mode and self.options.deploy == "local" else self.mode.upper()
        why = self.reason if self.options.connect_mode else plain_reason(self.mode, self.reason)
        return f"{what} a {label} cluster with {self.n_workers} worker(s). {why}"

    def start_message(self) -> str:
        """What ``start_cluster(verbose=True)`` prints: the summary, the kit's notes and the dashboard link."""
        link = self.dashboard_link
        where = [f"Dashboard: {link}  (this cluster's own address: a fixed localhost:8787 link may show nothing)"] if link else []
        summary = self.summary()
        notes = [n for n in self.notes if n not in summary]  # a connection's reason already carries its notes
        return "\n  ".join([summary, *notes, *where])

    def ignored_options(self) -> dict[str, Any]:
        """In connect mode: the options given explicitly that it cannot apply (the workers run elsewhere)."""
        if not self.options.connect_mode:
            return {}
        return {n: getattr(self.options, n) for n in sorted(self.options.explicit - CONNECT_OPTIONS)}

    def ignored_note(self) -> str:
        given = ", ".join(f"{name}={value!r}" for name, value in self.ignored_options().items())
        return (
            f"Ignored in connect mode: {given}. The workers were started elsewhere with their own settings; give these "
            "where they are started (e.g. `dask worker --nworkers N --memory-limit 4GiB`, `dask cuda worker --rmm-pool-size 1GiB`)."
        )

    def memory(self) -> Any:
        """Memory per worker (device, host, spilled, RMM pool) as plain data; see :mod:`gpu_dask_kit.monitor`."""
        from .monitor import snapshot

        clients.warn_if_foreign(self)  # a Client(...) made after start_cluster() computes elsewhere
        limit = self.plan.spec.device_limit_bytes if self.plan is not None else None
        return snapshot(self.kit_client, mode=self.mode, device_memory_limit=limit, fresh=True)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.n_workers} workers"
        return f"<ClusterSession {self.mode} {state} scheduler={self.scheduler_address if not self._closed else '-'}>"


def plain_reason(mode: str, reason: str) -> str:
    """Why the session runs in ``mode``, in words a CPU user understands (the detection text otherwise).

    >>> plain_reason("cpu", "CPU mode: no NVIDIA driver was found on this machine (NVML could not be loaded).")[:49]
    'No GPU was found here, so the workers are CPU wor'
    >>> plain_reason("cpu", "CPU mode was asked for (device='cpu').")
    "CPU mode was asked for (device='cpu')."
    """
    if mode != "cpu" or not any(word in reason for word in _NO_GPU_WORDS):
        return reason
    return (
        "No GPU was found here, so the workers are CPU workers (NumPy and pandas); the same code runs on GPUs on a "
        "machine with an NVIDIA GPU and gpu-dask-kit[gpu-cu12] installed (`gpu-dask-kit doctor` says what it found)."
    )


def replaced_message(stale: Any, current: Any) -> str:
    """What ``close()`` on a session that a later ``start_cluster()`` replaced says (it closes the current one)."""
    return (
        f"This session had already been replaced by a later start_cluster() (a {current.mode.upper()} cluster with "
        f"{current.n_workers} worker(s), the current session): closing that one, so that no workers are left running."
    )
