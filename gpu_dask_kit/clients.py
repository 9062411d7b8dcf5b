"""Which cluster Dask computes on: the kit's session, another client's cluster, or none (after close).

- :func:`warn_if_foreign`: a notebook that makes its own ``Client(...)`` after ``start_cluster()`` computes
  on that client's cluster while the kit's one sits idle; ``current_session()``, ``session.memory()`` and
  the hints describe the kit's cluster. Said once per such client (a :class:`KitWarning`), at those calls
  and, in IPython, at the end of the cell that made the client.
- :func:`closed_scheduler`: after ``session.close()`` dask's default scheduler is this function, so a later
  ``.compute()`` raises "the cluster is closed" instead of silently running on local threads. Any client
  made later (the kit's next session, or the user's own) takes over as usual.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import dask.config

from . import credentials
from .errors import ClusterStartError, KitWarning

__all__ = [
    "SessionClosedError",
    "closed_scheduler",
    "install_closed_scheduler",
    "clear_closed_scheduler",
    "foreign_default_client",
    "warn_if_foreign",
    "watch_ipython",
    "connection_hint",
]

_warned: set[str] = set()


class SessionClosedError(ClusterStartError):
    """A computation (or a scale) was asked for after the kit's session was closed, with no other cluster running."""


def closed_scheduler(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    """dask's scheduler after ``session.close()``: a client made since then runs it, else a clear error."""
    try:
        from distributed import get_client

        client = get_client()  # a client made after the close (or, inside a task, the worker's client)
    except (ImportError, ValueError):
        client = None
    if client is not None and client.status == "running":
        return client.get(dsk, keys, **kwargs)
    raise SessionClosedError(
        "The gpu-dask-kit cluster was closed (session.close()), so this computation has nowhere to run and its dashboard "
        "link no longer works. Start a cluster again with `session = gpu_dask_kit.start_cluster()`, or compute on this "
        "process's threads on purpose with `dask.config.set(scheduler='threads')` (work written for a cluster, such as "
        "a P2P shuffle, still needs one)."
    )


def install_closed_scheduler() -> None:
    """Make a later ``.compute()`` say the cluster is closed (unless the user chose a scheduler)."""
    if dask.config.get("scheduler", None) in (None, "dask.distributed", "distributed"):
        dask.config.set(scheduler=closed_scheduler)


def clear_closed_scheduler() -> None:
    """Before the kit starts a cluster: no closed-scheduler marker goes to the new workers' config."""
    if dask.config.get("scheduler", None) is closed_scheduler:
        dask.config.set(scheduler=None)


def foreign_default_client(session: Any) -> Any:
    """Dask's default client when it is running and connected to another scheduler than ``session``'s."""
    try:
        from distributed import default_client  # distributed: imported when a cluster runs

        client = default_client()
    except (ImportError, ValueError):  # no client at all
        return None
    if client is session.client or client is session.kit_client or client.status != "running":
        return None
    try:
        if getattr(client.scheduler, "address", None) == session.scheduler_address:
            return None
    except Exception:
        return None
    return client


def warn_if_foreign(session: Any, stacklevel: int = 3) -> Any:
    """Warn (once per client) when computations go to another client's cluster than ``session``'s."""
    if session is None or session.closed:
        return None
    client = foreign_default_client(session)
    if client is None or client.id in _warned:
        return client
    _warned.add(client.id)
    warnings.warn(
        f"Dask's default client is now {client.id} at {client.scheduler.address}, made after start_cluster(): .compute() "
        f"and .persist() run on its cluster, while current_session(), session.memory() and the kit's hints describe the "
        f"kit's cluster at {session.scheduler_address}, now idle. Two clusters are running: keep one, e.g. use "
        "session.client instead of a new Client(), or session.close() to keep yours.",
        KitWarning,
        stacklevel=stacklevel,
    )
    return client


def connection_hint(exc: BaseException) -> str | None:
    """One sentence for a ``Client(...)`` that failed on a TLS scheduler of the kit (None for other errors):
    without certificate (distributed's ``TypeError`` about ``ssl_context``), or by ``tcp://`` (reset)."""
    if isinstance(exc, TypeError) and "TLS expects a `ssl_context`" in str(exc):
        return (
            "gpu-dask-kit: this scheduler talks TLS (every cluster the kit starts does, so that no other account can use it) "
            "and this Client has no certificate. Use `session.client`, or `gpu_dask_kit.start_cluster(scheduler_address=ADDRESS)`, "
            "which finds your own session's certificate; for a scheduler someone else started, pass "
            "security=Security(...) with the certificates they gave you."
        )
    record = credentials.tls_session(str(exc)) if isinstance(exc, OSError) else None
    if record is None:
        return None
    plain = "tcp://" + (record.scheduler_address or "").removeprefix("tls://")
    return (
        f"gpu-dask-kit: {plain} is your session {record.id}, whose scheduler talks TLS only. Use `session.client` in its "
        f"notebook, or `gpu_dask_kit.start_cluster(scheduler_address={record.scheduler_address!r})` anywhere else as this "
        "user: the kit finds the session's certificate."
    )


def load_ipython_hooks(current: Callable[[], Any]) -> None:
    """In IPython: out-of-memory / KilledWorker tracebacks get a plain-language hint (an IPython extension),
    and a cell that makes another default client is told so (:func:`watch_ipython`)."""
    ipython = sys.modules.get("IPython")  # never import IPython: a script or a test is not a shell
    if ipython is not None and ipython.get_ipython() is not None:
        ipython.get_ipython().extension_manager.load_extension("gpu_dask_kit.notebook.hints")
        watch_ipython(current)


def watch_ipython(current: Callable[[], Any]) -> None:
    """In IPython: after each cell, say it when that cell made another default client (see above)."""
    ipython = sys.modules.get("IPython")  # never import IPython: a script or a test is not a shell
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "_gpu_dask_kit_client_watch", False):
        return
    shell.events.register("post_run_cell", lambda *_: warn_if_foreign(current(), stacklevel=2))
    shell._gpu_dask_kit_client_watch = True
