"""Session lifecycle: start, reuse, connect to and close GPU or CPU Dask clusters.

``start_cluster()`` checks every option (and a script's ``__main__`` guard: :mod:`gpu_dask_kit.guard`)
before anything starts, starts a ``LocalCUDACluster`` (GPU) or ``LocalCluster`` (CPU) through
:mod:`gpu_dask_kit.launch` and returns a :class:`ClusterSession`. Re-running the same cell reuses what runs
(:mod:`gpu_dask_kit.reuse`); ``close()`` leaves no process behind.
"""

from __future__ import annotations

import atexit
import contextlib
import time
import warnings
from typing import Any

import dask.config

from . import aio as _aio
from . import clients, guard, lockfree, registry, scheduler_view, session_info
from . import launch as _launch
from . import reuse as _reuse
from . import session_state as state
from .deploy.deployment import Deployment
from .errors import ClusterStartError, KitWarning, OptionError
from .options import ClusterOptions
from .plan import ClusterPlan
from .processes import end_processes
from .session_info import SessionInfo

__all__ = ["ClusterSession", "start_cluster", "start_cluster_with", "start_session", "current_session", "close_all", "owned_session"]


class ClusterSession(SessionInfo):
    """A running kit cluster (or a connection to an existing one) and its client.

    Use it as a context manager or call :meth:`close`. ``mode`` is ``"gpu"`` or ``"cpu"``.
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
        *,
        previous_config: dict[str, Any] | None = None,
        security: Any = None,
        deployment: Deployment | None = None,
    ) -> None:
        self.options, self.plan, self.cluster, self.client = options, plan, cluster, client
        self.adaptive: Any = None  # distributed's Adaptive while adapt() is on (stopped by scale())
        self.mode, self.notes, self.reason, self.record = mode, notes, reason, record
        self.started_at = time.time()
        self.security = security  # what the session was started with (compared on reuse)
        self.kit_client = client  # the kit's own (synchronous) client; ``client`` is the user's
        self.async_client: Any = None  # set by ``start_cluster(asynchronous=True)`` (see aio)
        self.replaced_by: ClusterSession | None = None  # the session a later start_cluster() replaced it with
        self.deployment = deployment  # how it was started: the target's scale rule and close
        self._previous_config = previous_config or {}
        self._dashboard_link: str | None = None
        self._closed = False

    # -- notebook layer (imported only when called) --------------------------------------------------
    def show(self, **kwargs: Any) -> Any:
        """Display the cluster controls and the memory monitor (needs ipywidgets)."""
        from .notebook.widgets import show  # the notebook layer, imported only when called

        return show(self, **kwargs)

    def _repr_html_(self) -> str:
        from .notebook.reprs import session_html  # the notebook layer, imported only when displayed

        return session_html(self)

    # -- lifecycle -----------------------------------------------------------------------------------
    def scale(self, n_workers: int, timeout: float = 60.0) -> ClusterSession:
        """Change the number of workers to ``n_workers`` and wait until exactly that many are connected.

        Checked like ``start_cluster(n_workers=...)`` before anything changes (on a GPU machine at most one
        worker per visible GPU). The scheduler plugin updates the session's registry record, so
        ``gpu-dask-kit sessions`` and the sidebar show the new workers and can stop them.
        """
        if self._closed:  # (SessionClosedError: in a notebook the kit's hint names the cell that started it)
            raise clients.SessionClosedError("This session is closed, so it cannot scale: start it again, then scale it.")
        if self.options.connect_mode or self.cluster is None or self.deployment is None:
            hint = "this session is a connection to an existing scheduler: scale that cluster where it was started"
            raise OptionError("n_workers", n_workers, "scaling of a cluster the kit started", hint)
        options = self.options.replace(n_workers=n_workers)  # type and range checks
        adaptive, self.adaptive = self.adaptive, None
        if adaptive is not None:  # a fixed number asked for: adaptive scaling would undo it
            adaptive.stop(reason="session.scale")
        reached = self.deployment.scale(int(options.n_workers or 1), timeout)  # the start's rule: one per GPU, whole jobs
        if reached and adaptive is not None:
            reached = self._undo_last_adapt(self.deployment, adaptive, int(options.n_workers or 1), timeout)
        if not reached:
            raise ClusterStartError(
                f"The cluster did not reach {options.n_workers} worker(s) within {timeout:g} s; "
                f"it has {self.n_workers}. Check the dashboard or `session.memory()`, then scale again or restart."
            )
        self.options = options
        return self

    def _undo_last_adapt(self, deployment: Any, adaptive: Any, n_workers: int, timeout: float) -> bool:
        """An adapt cycle under way when adaptive scaling stopped can still ask for its own number after the scale
        (it awaits the scheduler first: more than one interval on a loaded machine). Watch the cluster's plan (the
        workers its spec asks for) for a few intervals, at least 2 s, and scale back whenever it changes."""
        interval = float(getattr(adaptive, "interval", 1.0))
        planned = set(getattr(self.cluster, "plan", ()))
        deadline = time.monotonic() + max(5 * interval, 2.0)
        while time.monotonic() < deadline:
            time.sleep(interval)
            if set(getattr(self.cluster, "plan", ())) != planned:
                if not deployment.scale(n_workers, timeout):
                    return False
                planned = set(getattr(self.cluster, "plan", ()))
        return True

    def adapt(self, minimum: int = 0, maximum: int | None = None, **kwargs: Any) -> Any:
        """Let the cluster follow the work between ``minimum`` and ``maximum`` workers (distributed's
        adaptive scaling; on SLURM, jobs are submitted when work arrives and cancelled when idle).
        ``kwargs`` go to ``cluster.adapt`` (e.g. ``interval="1s"``). Returns distributed's ``Adaptive``."""
        if self._closed:
            raise clients.SessionClosedError("This session is closed, so it cannot adapt: start it again, then call adapt().")
        if self.options.connect_mode or self.cluster is None:
            raise ClusterStartError("adapt() needs an open session whose cluster the kit started (not a closed or connect-mode session).")
        if maximum is None or not (0 <= minimum <= maximum):
            raise OptionError("maximum", maximum, f"a number of workers >= minimum ({minimum}) >= 0", "pass e.g. adapt(minimum=0, maximum=4)")
        self.adaptive = self.cluster.adapt(minimum=minimum, maximum=maximum, **kwargs)
        return self.adaptive

    def renew_client(self) -> Any:
        """A new client for the running cluster (after ``client.close()`` left the cluster running)."""
        self.kit_client = self.client = scheduler_view.new_client(self.cluster, set_as_default=True)
        self._dashboard_link = None
        return self.client

    def __enter__(self) -> ClusterSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close_now()

    async def __aenter__(self) -> ClusterSession:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await _aio.close(self, 15.0)

    def close(self, timeout: float = 15.0) -> Any:
        """Stop the scheduler, nannies and workers (only those the kit started), wait until their processes
        are gone, restore dask's config and remove the registry record. Idempotent. A later ``.compute()``
        raises :class:`~gpu_dask_kit.clients.SessionClosedError` instead of running on local threads.

        In asynchronous mode it starts the close and returns an awaitable (``await session.close()`` waits;
        without ``await`` it still closes). On a session that a later ``start_cluster()`` replaced, it says so
        and closes the current one: a stale ``session`` in a last cell must not leave workers running."""
        successor = self.successor()
        if successor is not None:
            print(session_info.replaced_message(self, successor))
            return successor.close(timeout)
        if self.asynchronous:
            return _aio.close_soon(self, timeout)
        self.close_now(timeout)
        return None

    def close_now(self, timeout: float = 15.0) -> None:
        """Close this session synchronously, whatever its mode (see :meth:`close`)."""
        with state.lock:
            if not state.forget(self):
                return
            self._closed = True
        procs = self.record.live_processes() if self.record is not None and not self.options.connect_mode else []
        # Workers about to stop: heartbeat errors then are noise. Not when the client has lost the scheduler (it waits
        # for a reconnect that cannot come: 30 s).
        if not self.options.connect_mode and not self.asynchronous and self.kit_client.status == "running":
            with contextlib.suppress(Exception):
                self.kit_client.run(_quiet_while_stopping, on_error="ignore")  # (Client.run passes other keywords on)
        if _scheduler_stopped_elsewhere(self.cluster):
            self.cluster.shutdown_scheduler = False  # SpecCluster's close would otherwise ask it to stop: 30 s to time out
        try:
            try:
                self.kit_client.close(timeout=timeout)
            finally:
                if self.cluster is not None:
                    self.cluster.close(timeout=timeout)  # the scheduler plugin removes the record
        except Exception:
            pass  # processes are checked below whatever the cluster said
        finally:
            end_processes(procs, timeout)
            dask.config.set(self._previous_config)
            clients.install_closed_scheduler()
            if self.record is not None:
                registry.unregister(self.record.id)


def _scheduler_stopped_elsewhere(cluster: Any) -> bool:
    """The cluster's own (in-process) scheduler is closed already: another process shut it down (the sidebar,
    ``gpu-dask-kit sessions --cleanup``)."""
    from distributed.core import Status

    return getattr(getattr(cluster, "scheduler", None), "status", None) in (Status.closing, Status.closed)


def _quiet_while_stopping() -> None:
    """On a worker the kit is about to stop: distributed's loggers keep only CRITICAL, so that the stop does not print
    "Failed to communicate with scheduler during heartbeat" tracebacks into the notebook (learner review 11, 02 cell 32)."""
    import logging

    for name in ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def current_session() -> ClusterSession | None:
    """The live session of this process (the last one started), or None. Warns (once) when dask's default
    client is another one, made after ``start_cluster()``: the session then describes the kit's idle cluster."""
    session = _live()
    clients.warn_if_foreign(session)
    return session


def _live() -> ClusterSession | None:
    return state.current(alive=True)


def start_cluster(*, verbose: bool = True, security: Any = None, asynchronous: bool = False, **options: Any) -> Any:
    """Start (or reuse) a GPU or CPU Dask cluster and its client. Keywords are :class:`ClusterOptions` fields.

    ``verbose`` prints one line saying what was done and why. ``security``: by default (True) a cluster the
    kit starts talks TLS with credentials of its own, so that no other account of a shared machine can use
    it; ``security=False`` is plain TCP (warned about where other accounts exist). A
    ``distributed.security.Security`` is used as given (e.g. to connect to a TLS scheduler you started).
    ``asynchronous=True`` returns an awaitable for ``async`` code (``session = await start_cluster(
    asynchronous=True)``; ``session.client`` is then an asynchronous client; see :mod:`gpu_dask_kit.aio`).
    Every option is checked against this machine before any process starts.
    """
    if not isinstance(asynchronous, bool):
        raise OptionError("asynchronous", asynchronous, "True or False", "pass asynchronous=True in async code, else leave it out")
    if isinstance(security, (bool, str)):  # the option (checked with the others); a Security object is used as given
        options, security = {**options, "security": security}, None
    elif security is not None and not hasattr(security, "get_connection_args"):
        raise OptionError(
            "security", security, "True, False or a distributed.security.Security", "leave it out: the default is TLS with the session's own credentials"
        )
    opts = ClusterOptions.from_config(**options)
    if not asynchronous:
        session = start_cluster_with(opts, verbose=verbose, security=security)
        if session.client is not session.kit_client:  # an asynchronous session, reused by synchronous code
            session.client = _aio.make_default(session.kit_client)
        return session
    guard.check_start(opts)  # here, in the caller's thread: the start itself runs in another one
    return _aio.AsyncStart(lambda: start_cluster_with(opts, verbose=verbose, security=security, asynchronous=True))


def start_cluster_with(
    opts: ClusterOptions, *, verbose: bool = True, security: Any = None, started_by: str = "notebook", asynchronous: bool = False
) -> ClusterSession:
    """:func:`start_cluster` for an already-built :class:`ClusterOptions`: reuse or replace this process's
    session (:mod:`gpu_dask_kit.reuse`), else start one with :func:`start_session` and make it current."""
    guard.check_start(opts)  # in a worker importing a script, or a script without its guard: nothing starts
    with state.lock:
        live = state.current()
        if live is not None:
            decision = _reuse.decide(live, opts, security, close_call="await session.close()" if asynchronous else "session.close()")
            if verbose and decision.message:
                print(decision.message)
            if decision.reuse is not None:
                return decision.reuse
            live.close_now()
        session = start_session(opts, started_by=started_by, security=security)
        if live is not None:
            live.replaced_by = session
        state.set_current(session)
    clients.load_ipython_hooks(_live)  # hints under out-of-memory tracebacks; another default client
    if verbose:
        print(session.start_message())
    elif session.ignored_options():
        warnings.warn(session.ignored_note(), KitWarning, stacklevel=3)
    return session


def start_session(opts: ClusterOptions, *, started_by: str, security: Any = None) -> ClusterSession:
    """The one path every entry point starts a cluster through (a notebook cell, a widget, a script,
    dask-labextension's "+ NEW"): the script guard, dask's config saved and set (restored on close), the
    instructor's ``deploy`` setting, CuPy through RMM, the kit's scheduler plugins. Reuses nothing and does not
    make the session this process's current one (:func:`start_cluster_with` does)."""
    guard.check_start(opts)
    lockfree.install()  # Python 3.11: a LocalCluster's in-process scheduler and dask's cached properties deadlock
    deployment, previous = _launch.start(opts, started_by, security)
    session = ClusterSession(
        opts,
        deployment.plan,
        deployment.cluster,
        deployment.client,
        deployment.mode,
        list(deployment.notes),
        deployment.reason,
        deployment.record,
        previous_config=previous,
        security=security,
        deployment=deployment,
    )
    # A gateway's scheduler runs the gateway's image, which need not have the kit: no kit plugin there.
    if session.cluster is not None and deployment.target != "gateway":
        try:
            from .resource_check import ResourceCheck  # a SchedulerPlugin: distributed, imported when a cluster runs

            session.kit_client.register_plugin(ResourceCheck())  # refuse tasks asking for resources no worker has
        except BaseException:
            session.close_now()
            raise
    elif session.ignored_options():
        session.notes.append(session.ignored_note())
    state.add(session)
    return session


def owned_session(session_id: str) -> ClusterSession | None:
    """The open session of this process with this registry id, or None."""
    return state.owned(session_id)


def close_all() -> None:
    """Close every session this process started (called at interpreter exit)."""
    for session in state.open_sessions():
        try:
            session.close_now(timeout=5)
        except Exception:
            pass


atexit.register(close_all)
