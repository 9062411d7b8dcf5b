"""Session lifecycle: start, reuse, connect to and close GPU or CPU Dask clusters.

``start_cluster()`` checks every option against this machine before anything starts, starts a
``LocalCUDACluster`` (GPU) or ``LocalCluster`` (CPU), wires RMM and CuPy, records the session in the
per-user registry, and returns a :class:`ClusterSession`. Re-running the same cell returns the live
session; re-running it with other options closes the old one first. ``close()`` leaves no process behind.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from typing import Any

import dask.config
import psutil

from . import registry, tracking
from .backend import EnvironmentReport, detect
from .errors import ClusterStartError, ConnectError, OptionError
from .links import dashboard_link_for
from .options import ClusterOptions
from .plan import ClusterPlan, make_plan

__all__ = ["ClusterSession", "start_cluster", "current_session", "build_cluster", "close_all"]

_lock = threading.RLock()
_current: "ClusterSession | None" = None
_sessions: list["ClusterSession"] = []


def build_cluster(options: ClusterOptions, *, asynchronous: bool = False, report: EnvironmentReport | None = None,
                  plan: ClusterPlan | None = None, security: Any = None):
    """Construct (start) the kit's LocalCUDACluster or LocalCluster for ``options``; not registered.

    With ``asynchronous=True`` the result must be awaited (dask-labextension's factory does that).
    ``security`` (a ``distributed.security.Security``, or True for temporary self-signed certificates)
    makes the scheduler, workers and client talk TLS (``tls://``) instead of plain TCP.
    """
    plan = plan or make_plan(options, report or detect(options.device))
    kwargs = dict(plan.kwargs, asynchronous=asynchronous, death_timeout=_DEATH_TIMEOUT)
    if security is not None and security is not False:
        kwargs.update(security=security, protocol="tls://")
    if plan.backend == "gpu":
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(**kwargs)
    from distributed import LocalCluster

    return LocalCluster(**kwargs)


#: Seconds a worker waits for a vanished scheduler (e.g. a killed kernel) before it exits by itself.
_DEATH_TIMEOUT = 10


class ClusterSession:
    """A running kit cluster (or a connection to an existing one) and its client.

    Use it as a context manager or call :meth:`close`. ``backend`` is ``"gpu"`` or ``"cpu"``.
    """

    def __init__(self, options: ClusterOptions, plan: ClusterPlan | None, cluster: Any, client: Any,
                 backend: str, notes: list[str], reason: str) -> None:
        self.options = options
        self.plan = plan
        self.cluster = cluster
        self.client = client
        self.backend = backend
        self.notes = notes
        self.reason = reason
        self.started_at = time.time()
        self.record: registry.SessionRecord | None = None
        self._worker_procs: list[psutil.Process] = []
        self._previous_config: dict[str, Any] = {}
        self._security: Any = None
        self._dashboard_port: int | None = None
        self._closed = False

    # -- information ---------------------------------------------------------------------------------
    @property
    def id(self) -> str | None:
        return self.record.id if self.record else None

    @property
    def scheduler_address(self) -> str:
        return self.client.scheduler.address

    @property
    def dashboard_link(self) -> str | None:
        """The dashboard URL, through JupyterHub's proxy when ``JUPYTERHUB_SERVICE_PREFIX`` is set."""
        if self.options.dashboard_address is None and not self.options.connect_mode:
            return None
        port = self._dashboard_port
        if port is None:
            try:  # asked once: the port does not change while the scheduler runs
                port = self._dashboard_port = self.client.scheduler_info(n_workers=0).get("services", {}).get("dashboard")
            except Exception:
                port = None
        if port is None:
            return None
        host = self.options.host if not self.options.connect_mode else self.scheduler_address.split("://")[-1].rsplit(":", 1)[0]
        return dashboard_link_for(host, port)

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
        """One line: what runs, with how many workers, and why that backend."""
        what = "Connected to" if self.options.connect_mode else "Started"
        kind = "GPU (LocalCUDACluster)" if self.backend == "gpu" and not self.options.connect_mode else self.backend.upper()
        return f"{what} a {kind} cluster with {self.n_workers} worker(s). {self.reason}"

    def memory(self):
        """Memory per worker (device, host, spilled, RMM pool) as plain data; see :mod:`gpu_dask_kit.monitor`."""
        from .monitor import snapshot

        return snapshot(self.client, backend=self.backend)

    def show(self, **kwargs: Any):
        """Display the cluster controls and the memory monitor (needs ipywidgets)."""
        from .notebook.widgets import show

        return show(self, **kwargs)

    def _repr_html_(self) -> str:
        from .reprs import session_html

        return session_html(self)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.n_workers} workers"
        return f"<ClusterSession {self.backend} {state} scheduler={self.client.scheduler.address if not self._closed else '-'}>"

    # -- lifecycle -----------------------------------------------------------------------------------
    def scale(self, n_workers: int, timeout: float = 60.0) -> "ClusterSession":
        """Change the number of workers to ``n_workers`` and wait until exactly that many are connected.

        Checked like ``start_cluster(n_workers=...)`` before anything changes (on a GPU machine at most one
        worker per visible GPU). The session's registry record follows, so ``gpu-dask-kit sessions`` and the
        sidebar show the new workers and can stop them.
        """
        if self._closed:
            raise ClusterStartError("This session is closed; start a new one with gpu_dask_kit.start_cluster().")
        if self.options.connect_mode or self.cluster is None:
            raise OptionError("n_workers", n_workers, "scaling of a cluster the kit started",
                              "this session is a connection to an existing scheduler: scale that cluster where it was started")
        options = self.options.replace(n_workers=n_workers)  # type and range checks
        make_plan(options, detect(options.device))  # hardware checks, e.g. one worker per GPU
        self.cluster.scale(options.n_workers)
        deadline = time.monotonic() + timeout
        while self.n_workers != options.n_workers:
            if time.monotonic() > deadline:
                raise ClusterStartError(f"The cluster did not reach {options.n_workers} worker(s) within {timeout:g} s; "
                                        f"it has {self.n_workers}. Check the dashboard or `session.memory()`, then scale again or restart.")
            time.sleep(0.1)
        self.options = options
        known = {p.pid for p in self._worker_procs}
        self._worker_procs += [p for p in _local_worker_processes(self.cluster, self.client) if p.pid not in known]
        if self.record is not None:
            tracking.sync_record(self.record, tracking.worker_pids(self.cluster))
        return self

    def __enter__(self) -> "ClusterSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self, timeout: float = 15.0) -> None:
        """Stop the scheduler, nannies and workers (only those the kit started), wait until their processes
        are gone, restore dask's array/dataframe backends and remove the registry record. Idempotent."""
        global _current
        with _lock:
            if self._closed:
                return
            self._closed = True
            if _current is self:
                _current = None
            if self in _sessions:
                _sessions.remove(self)
        try:
            if self.options.connect_mode:
                self.client.close(timeout=timeout)
            else:
                try:
                    self.client.close(timeout=timeout)
                finally:
                    self.cluster.close(timeout=timeout)
        except Exception:
            pass  # processes are checked below whatever the cluster said
        finally:
            recorded = self.record.live_processes() if self.record is not None else []
            registry.end_processes(list({p.pid: p for p in self._worker_procs + recorded}.values()), timeout)
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
    """:func:`start_cluster` for an already-built :class:`ClusterOptions`."""
    global _current
    with _lock:
        live = current_session()
        if live is not None:
            if live.options == opts and live._security == security:
                if verbose:
                    print(f"Reusing the running {live.backend.upper()} cluster (same options); close() it to start afresh.")
                return live
            changed = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in opts.changed_from(live.options).items()) or "security"
            if verbose:
                print(f"Closing the running {live.backend.upper()} cluster first, because options changed ({changed}).")
            live.close()
        session = _connect(opts, security) if opts.connect_mode else _start_local(opts, kind, security)
        session._security = security
        _current = session
        _sessions.append(session)
    from .hints import install

    install()  # in IPython: out-of-memory / KilledWorker tracebacks get a plain-language hint
    if verbose:
        print(session.summary())
        for note in session.notes:
            print("  " + note)
        link = session.dashboard_link
        if link:
            print(f"  Dashboard: {link}")
    return session


def _backend_config(array_backend: str, dataframe_backend: str) -> dict[str, Any]:
    return {"array.backend": array_backend, "dataframe.backend": dataframe_backend}


def _start_local(opts: ClusterOptions, kind: str, security: Any = None) -> ClusterSession:
    report = detect(opts.device)
    plan = make_plan(opts, report)  # raises OptionError before anything starts
    from distributed import Client

    cluster = client = None
    try:
        cluster = build_cluster(opts, plan=plan, security=security)
        client = Client(cluster, set_as_default=True)
        client.wait_for_workers(plan.n_workers, timeout=120)
        from .workers import PLUGIN_NAME, IgnoreInterrupt

        client.register_plugin(IgnoreInterrupt(), name=PLUGIN_NAME)  # the stop button must not kill workers
        if plan.client_cupy_rmm:
            from .allocator import use_rmm_for_cupy

            use_rmm_for_cupy()  # only now: no CUDA context in this process before the workers exist
        session = ClusterSession(opts, plan, cluster, client, plan.backend, list(plan.notes), plan.reason)
        session._worker_procs = _local_worker_processes(cluster, client)
        new_config = _backend_config(plan.array_backend, plan.dataframe_backend)
        session._previous_config = {k: dask.config.get(k, None) for k in new_config}
        dask.config.set(new_config)
        registry.prune_dead()  # e.g. the record of the kernel before a restart, with nothing left running
        dashboard = session.dashboard_link
        session.record = registry.register(
            scheduler_address=client.scheduler.address, dashboard_link=dashboard, backend=plan.backend,
            n_workers=plan.n_workers, options=opts.to_dict(), kind=kind,
            worker_pids=[p.pid for p in session._worker_procs], closer=session.close)
        tracking.follow_workers(cluster, session.record)
        return session
    except BaseException as exc:
        _abort(client, cluster)
        if isinstance(exc, (OptionError, KeyboardInterrupt)):
            raise
        raise ClusterStartError(f"The {plan.backend.upper()} cluster did not start ({type(exc).__name__}: {exc}). "
                                "Everything that was started has been stopped; run `gpu-dask-kit doctor` to check this machine.") from exc


def _abort(client: Any, cluster: Any) -> None:
    procs = []
    if client is not None:
        try:
            procs = _worker_processes(client)
        except Exception:
            pass
    for closable in (client, cluster):
        if closable is not None:
            try:
                closable.close()
            except Exception:
                pass
    registry.end_processes(procs, 10)


def _local_worker_processes(cluster: Any, client: Any) -> list[psutil.Process]:
    """Worker processes of a cluster the kit started: from its in-process scheduler, else asked of the workers."""
    return _processes(tracking.worker_pids(cluster)) or _worker_processes(client)


def _worker_processes(client: Any) -> list[psutil.Process]:
    return _processes(client.run(os.getpid).values())


def _processes(pids: Any) -> list[psutil.Process]:
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return procs


def _scheduler_file_address(path: str) -> str | None:
    """The address in a scheduler file, checked; None while the file does not exist yet (the client waits)."""
    import json

    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConnectError(f"scheduler_file={path!r} cannot be read ({exc.strerror or exc}). Check the path and its permissions.") from exc
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ConnectError(f"scheduler_file={path!r} is not a scheduler file: expected the JSON object that "
                           "`dask scheduler --scheduler-file PATH` writes, with an \"address\" such as \"tcp://10.0.0.5:8786\". "
                           "Point scheduler_file at that file, or pass scheduler_address instead.")
    return address


def _connect(opts: ClusterOptions, security: Any) -> ClusterSession:
    from distributed import Client

    target = opts.scheduler_file or opts.scheduler_address
    param = "scheduler_file" if opts.scheduler_file else "scheduler_address"
    address = _scheduler_file_address(opts.scheduler_file) if opts.scheduler_file else opts.scheduler_address
    if address and address.startswith("tls://") and security is None and not dask.config.get("distributed.comm.tls.ca-file", None):
        raise ConnectError(f"{param}={target!r}: this scheduler uses TLS ({address}), so the kit needs its certificates: pass "
                           "security=Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) "
                           "(from distributed.security import Security), or ask whoever started the scheduler for them.")
    try:
        if opts.scheduler_file:
            client = Client(scheduler_file=opts.scheduler_file, timeout=opts.connect_timeout, security=security, set_as_default=True)
        else:
            client = Client(opts.scheduler_address, timeout=opts.connect_timeout, security=security, set_as_default=True)
    except (OSError, TimeoutError, ValueError, TypeError, AssertionError) as exc:
        raise ConnectError(f"{param}={target!r}: no scheduler answered within {opts.connect_timeout:g} s ({type(exc).__name__}: {exc}). "
                           "Check the address (the scheduler prints it at start), that the scheduler runs, and TLS settings (security=) for tls:// addresses.") from exc
    try:
        client.wait_for_workers(1, timeout=opts.connect_timeout)
    except (TimeoutError, OSError) as exc:
        client.close()
        raise ConnectError(f"{param}={target!r}: the scheduler answered but no worker joined within {opts.connect_timeout:g} s. "
                           "Start workers (`dask worker ADDRESS` or `dask cuda worker ADDRESS`), or raise connect_timeout.") from exc
    backend = _remote_backend(client)
    reason = f"{'GPU' if backend == 'gpu' else 'CPU'} workers reported by the scheduler at {client.scheduler.address}."
    session = ClusterSession(opts, None, None, client, backend, [], reason)
    new_config = _backend_config("cupy" if backend == "gpu" else "numpy", "cudf" if backend == "gpu" and _has("dask_cudf") else "pandas")
    session._previous_config = {k: dask.config.get(k, None) for k in new_config}
    dask.config.set(new_config)
    session.record = registry.register(scheduler_address=client.scheduler.address, dashboard_link=session.dashboard_link,
                                       backend=backend, n_workers=session.n_workers, options=opts.to_dict(), kind="connect",
                                       closer=session.close)
    return session


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _remote_backend(client: Any) -> str:
    """"gpu" if the workers report GPUs (distributed's NVML diagnostics), else "cpu"."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    return "gpu" if any(w.get("gpu") or (w.get("metrics") or {}).get("gpu") for w in workers) else "cpu"


def close_all() -> None:
    """Close every session this process started (called at interpreter exit)."""
    for session in list(_sessions):
        try:
            session.close(timeout=5)
        except Exception:
            pass


atexit.register(close_all)
