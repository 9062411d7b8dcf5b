"""Session lifecycle: start, reuse, connect to and close GPU or CPU Dask clusters.

``start_cluster()`` checks every option against this machine before anything starts, starts a
``LocalCUDACluster`` (GPU) or ``LocalCluster`` (CPU) through :mod:`gpu_dask_kit.deploy.local` (whose
scheduler plugin keeps the session's registry record), wires RMM and CuPy and returns a
:class:`ClusterSession`. Re-running the same cell returns the live session; re-running it with other
options closes the old one first. ``close()`` leaves no process behind.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from typing import Any

import dask.config

from . import registry
from .deploy import connect as _connect
from .deploy import local as _local
from .environment import detect
from .errors import ClusterStartError, OptionError
from .links import link_config
from .options import ClusterOptions
from .plan import ClusterPlan, make_plan
from .processes import end_processes

__all__ = ["ClusterSession", "start_cluster", "start_cluster_with", "current_session", "close_all", "owned_session"]

_lock = threading.RLock()
_current: ClusterSession | None = None
_sessions: list[ClusterSession] = []


class ClusterSession:
    """A running kit cluster (or a connection to an existing one) and its client.

    Use it as a context manager or call :meth:`close`. ``mode`` is ``"gpu"`` or ``"cpu"``
    (``backend`` is its older name, kept for notebooks).
    """

    def __init__(
        self,
        options: ClusterOptions,
        plan: ClusterPlan | None,
        cluster: Any,
        client: Any,
        mode: str,
        notes: list[str],
        reason: str,
        record: registry.SessionRecord | None = None,
    ) -> None:
        self.options, self.plan, self.cluster, self.client = options, plan, cluster, client
        self.mode, self.notes, self.reason, self.record = mode, notes, reason, record
        self.started_at = time.time()
        self._previous_config: dict[str, Any] = {}
        self._security: Any = None
        self._dashboard_link: str | None = None
        self._closed = False

    # -- information ---------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """The older name of :attr:`mode` ("gpu" | "cpu")."""
        return self.mode

    @property
    def id(self) -> str | None:
        return self.record.id if self.record else None

    @property
    def scheduler_address(self) -> str:
        return str(self.client.scheduler.address)

    @property
    def dashboard_link(self) -> str | None:
        """distributed's dashboard link (``Client.dashboard_link``): through JupyterHub's proxy when
        ``JUPYTERHUB_SERVICE_PREFIX`` is set (see :mod:`gpu_dask_kit.links`); None without a dashboard."""
        if self.options.dashboard_address is None and not self.options.connect_mode:
            return None
        if self._dashboard_link is None:  # asked once: the port does not change while the scheduler runs
            try:
                self._dashboard_link = self.client.dashboard_link or None
            except Exception:
                return None
        return self._dashboard_link

    @property
    def n_workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    @property
    def closed(self) -> bool:
        return self._closed

    def is_alive(self) -> bool:
        """True while the client is connected and the cluster (if the kit started it) runs."""
        if self._closed or self.client.status != "running":
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

        limit = self.plan.kwargs.get("device_memory_limit") if self.plan is not None else None
        return snapshot(self.client, backend=self.mode, device_memory_limit=limit or None, fresh=True)

    def show(self, **kwargs: Any) -> Any:
        """Display the cluster controls and the memory monitor (needs ipywidgets)."""
        from .notebook.widgets import show  # the notebook layer, imported only when called

        return show(self, **kwargs)

    def _repr_html_(self) -> str:
        from .notebook.reprs import session_html  # the notebook layer, imported only when displayed

        return session_html(self)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.n_workers} workers"
        return f"<ClusterSession {self.mode} {state} scheduler={self.scheduler_address if not self._closed else '-'}>"

    # -- lifecycle -----------------------------------------------------------------------------------
    def scale(self, n_workers: int, timeout: float = 60.0) -> ClusterSession:
        """Change the number of workers to ``n_workers`` and wait until exactly that many are connected.

        Checked like ``start_cluster(n_workers=...)`` before anything changes (on a GPU machine at most one
        worker per visible GPU). The scheduler plugin updates the session's registry record, so
        ``gpu-dask-kit sessions`` and the sidebar show the new workers and can stop them.
        """
        if self._closed:
            raise ClusterStartError("This session is closed; start a new one with gpu_dask_kit.start_cluster().")
        if self.options.connect_mode or self.cluster is None:
            raise OptionError(
                "n_workers",
                n_workers,
                "scaling of a cluster the kit started",
                "this session is a connection to an existing scheduler: scale that cluster where it was started",
            )
        options = self.options.replace(n_workers=n_workers)  # type and range checks
        if options.deploy == "slurm":  # whole SLURM jobs; no check against this machine
            from .deploy.slurm_session import scale_target

            target = scale_target(self.plan, n_workers)  # type: ignore[arg-type]
        else:
            target = make_plan(options, detect(options.device)).n_workers  # hardware checks, e.g. one worker per GPU
        self.cluster.scale(target)
        if not _local.wait_for_workers(self.client, target, timeout):
            raise ClusterStartError(
                f"The cluster did not reach {options.n_workers} worker(s) within {timeout:g} s; "
                f"it has {self.n_workers}. Check the dashboard or `session.memory()`, then scale again or restart."
            )
        self.options = options
        return self

    def adapt(self, minimum: int = 0, maximum: int | None = None, **kwargs: Any) -> Any:
        """Let the cluster follow the work between ``minimum`` and ``maximum`` workers (distributed's
        adaptive scaling; on SLURM, jobs are submitted when work arrives and cancelled when idle).
        ``kwargs`` go to ``cluster.adapt`` (e.g. ``interval="1s"``). Returns distributed's ``Adaptive``."""
        if self._closed or self.options.connect_mode or self.cluster is None:
            raise ClusterStartError("adapt() needs an open session whose cluster the kit started (not a closed or connect-mode session).")
        if maximum is None or not (0 <= minimum <= maximum):
            raise OptionError("maximum", maximum, f"a number of workers >= minimum ({minimum}) >= 0", "pass e.g. adapt(minimum=0, maximum=4)")
        return self.cluster.adapt(minimum=minimum, maximum=maximum, **kwargs)

    def __enter__(self) -> ClusterSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self, timeout: float = 15.0) -> None:
        """Stop the scheduler, nannies and workers (only those the kit started), wait until their processes
        are gone, restore dask's config and remove the registry record. Idempotent."""
        global _current
        with _lock:
            if self._closed:
                return
            self._closed = True
            if _current is self:
                _current = None
            if self in _sessions:
                _sessions.remove(self)
        procs = self.record.live_processes() if self.record is not None and not self.options.connect_mode else []
        try:
            try:
                self.client.close(timeout=timeout)
            finally:
                if self.cluster is not None:
                    self.cluster.close(timeout=timeout)  # the scheduler plugin removes the record
        except Exception:
            pass  # processes are checked below whatever the cluster said
        finally:
            end_processes(procs, timeout)
            dask.config.set(self._previous_config)
            if self.record is not None:
                registry.unregister(self.record.id)


def current_session() -> ClusterSession | None:
    """The live session of this process (the last one started), or None."""
    with _lock:
        if _current is not None and _current.is_alive():
            return _current
        return None


def start_cluster(*, verbose: bool = True, security: Any = None, **options: Any) -> ClusterSession:
    """Start (or reuse) a GPU or CPU Dask cluster and its client. Keywords are :class:`ClusterOptions` fields.

    ``verbose`` prints one line saying what was done and why. ``security`` (a
    ``distributed.security.Security``) is used to connect to a TLS scheduler in connect mode; for a cluster
    the kit starts, it (or ``security=True``: temporary self-signed certificates) switches the scheduler,
    workers and client to TLS, so that other users of a shared machine cannot use the cluster.
    Every option is checked against this machine before any process starts.
    """
    opts = ClusterOptions.from_config(**options)
    return start_cluster_with(opts, verbose=verbose, security=security)


def start_cluster_with(opts: ClusterOptions, *, verbose: bool = True, security: Any = None, kind: str = "notebook") -> ClusterSession:
    """:func:`start_cluster` for an already-built :class:`ClusterOptions` (the reuse / replace policy)."""
    global _current
    with _lock:
        live = current_session()
        if live is not None:
            if live.options == opts and live._security == security:
                if verbose:
                    print(f"Reusing the running {live.mode.upper()} cluster (same options); close() it to start afresh.")
                return live
            changed = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in opts.changed_from(live.options).items()) or "security"
            if verbose:
                print(f"Closing the running {live.mode.upper()} cluster first, because options changed ({changed}).")
            live.close()
        session = _connect_session(opts, security) if opts.connect_mode else _start_local(opts, kind, security)
        session._security = security
        _current = session
        _sessions.append(session)
    _load_hints()
    if verbose:
        link = session.dashboard_link
        print("\n  ".join([session.summary(), *session.notes] + ([f"Dashboard: {link}"] if link else [])))
    return session


def _load_hints() -> None:
    """In IPython: out-of-memory / KilledWorker tracebacks get a plain-language hint (an IPython extension)."""
    ipython = sys.modules.get("IPython")  # never import IPython: a script or a test is not a shell
    if ipython is not None and ipython.get_ipython() is not None:
        ipython.get_ipython().extension_manager.load_extension("gpu_dask_kit.notebook.hints")


def _start_local(opts: ClusterOptions, kind: str, security: Any = None) -> ClusterSession:
    if opts.deploy == "slurm":
        return _start_slurm(opts, kind, security)
    plan = make_plan(opts, detect(opts.device))  # raises OptionError before anything starts
    config = {**link_config(), "array.backend": plan.array_backend, "dataframe.backend": plan.dataframe_backend}
    previous = {k: dask.config.get(k, None) for k in config}
    registry.prune_dead()  # e.g. the record of the kernel before a restart, with nothing left running
    dask.config.set(config)  # the scheduler plugin formats the record's dashboard link with it
    try:
        cluster, client, record = _local.start(opts, plan, kind=kind, security=security)
    except BaseException as exc:
        dask.config.set(previous)
        if isinstance(exc, (OptionError, KeyboardInterrupt)):
            raise
        raise ClusterStartError(
            f"The {plan.mode.upper()} cluster did not start ({type(exc).__name__}: {exc}). "
            "Everything that was started has been stopped; run `gpu-dask-kit doctor` to check this machine."
        ) from exc
    if plan.client_cupy_rmm:
        from .allocator import use_rmm_for_cupy

        use_rmm_for_cupy()  # only now: no CUDA context in this process before the workers exist
    session = ClusterSession(opts, plan, cluster, client, plan.mode, list(plan.notes), plan.reason, record)
    session._previous_config = previous
    return session


def _start_slurm(opts: ClusterOptions, kind: str, security: Any) -> ClusterSession:
    """deploy="slurm": the workers are SLURM jobs (deploy/slurm_session.py); the session is the same."""
    from .deploy import slurm_session  # dask-jobqueue: imported only for SLURM sessions

    previous = {k: dask.config.get(k, None) for k in (*link_config(), "array.backend", "dataframe.backend")}
    dask.config.set(link_config())  # the scheduler plugin formats the record's dashboard link with it
    try:
        cluster, client, record, plan = slurm_session.start(opts, kind=kind, security=security)
    except BaseException:
        dask.config.set(previous)
        raise
    dask.config.set({"array.backend": plan.array_backend, "dataframe.backend": plan.dataframe_backend})
    session = ClusterSession(opts, plan, cluster, client, plan.mode, list(plan.notes), plan.reason, record)  # type: ignore[arg-type]
    session._previous_config = previous
    return session


def _connect_session(opts: ClusterOptions, security: Any) -> ClusterSession:
    previous = {k: dask.config.get(k, None) for k in (*link_config(), "array.backend", "dataframe.backend")}
    dask.config.set(link_config())
    try:
        client = _connect.connect(opts, security)
    except BaseException:
        dask.config.set(previous)
        raise
    mode, reason = _connect.remote_mode_reason(client)
    array, dataframe = _connect.remote_backends(mode)
    dask.config.set({"array.backend": array, "dataframe.backend": dataframe})
    session = ClusterSession(opts, None, None, client, mode, [], reason)
    session._previous_config = previous
    session.record = registry.register(
        scheduler_address=client.scheduler.address,
        dashboard_link=session.dashboard_link,
        backend=mode,
        n_workers=session.n_workers,
        options=opts.to_dict(),
        kind="connect",
    )
    return session


def owned_session(session_id: str) -> ClusterSession | None:
    """The open session of this process with this registry id, or None."""
    with _lock:
        return next((s for s in _sessions if s.id == session_id), None)


def close_all() -> None:
    """Close every session this process started (called at interpreter exit)."""
    for session in list(_sessions):
        try:
            session.close(timeout=5)
        except Exception:
            pass


atexit.register(close_all)
