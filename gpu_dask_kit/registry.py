"""Per-user runtime registry of live kit sessions: one JSON file per session, readable by its user only.

The registry lets ``gpu-dask-kit sessions``, the JupyterLab sidebar and ``--cleanup`` find clusters
whatever process started them, and stop the ones whose owner died. A record names the processes the
session started (pid + start time), so cleanup only ever ends those processes, never a recycled pid.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import socket
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import dask.config
import psutil

from . import config as _config

__all__ = [
    "SessionRecord", "runtime_dir", "register", "unregister", "list_sessions", "get_session",
    "validate_session_id", "shutdown_session", "cleanup_stale", "process_identity",
]

_ID = re.compile(r"^[0-9a-f]{32}$")
#: Functions that close a session owned by this process, by session id (set by cluster.py).
_local_closers: dict[str, Callable[[], None]] = {}


def runtime_dir() -> Path:
    """Where the registry lives: ``$GPU_DASK_KIT_RUNTIME_DIR``, the ``gpu-dask-kit.runtime-dir`` config,
    ``$XDG_RUNTIME_DIR/gpu-dask-kit`` or ``~/.local/share/gpu-dask-kit/runtime``."""
    _config.ensure_defaults()
    explicit = os.environ.get("GPU_DASK_KIT_RUNTIME_DIR") or dask.config.get("gpu-dask-kit.runtime-dir", None)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg) and os.access(xdg, os.W_OK):
        return Path(xdg) / "gpu-dask-kit"
    return Path.home() / ".local" / "share" / "gpu-dask-kit" / "runtime"


def _ensure_dir() -> Path:
    path = runtime_dir()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def validate_session_id(value: Any) -> str:
    """Check a session id (32 lowercase hex characters).

    >>> validate_session_id("0" * 32) == "0" * 32
    True
    >>> validate_session_id("../etc/passwd")
    Traceback (most recent call last):
    ...
    ValueError: session id '../etc/passwd' is not valid: expected 32 lowercase hex characters, as listed by `gpu-dask-kit sessions`.
    """
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ValueError(f"session id {value!r} is not valid: expected 32 lowercase hex characters, as listed by `gpu-dask-kit sessions`.")
    return value


def process_identity(pid: int) -> dict[str, Any] | None:
    """``{"pid", "create_time"}`` of a running process, or None."""
    try:
        return {"pid": pid, "create_time": psutil.Process(pid).create_time()}
    except psutil.Error:
        return None


def _same_process(identity: dict[str, Any]) -> psutil.Process | None:
    """The process if it still runs and is the one recorded (not a recycled pid)."""
    try:
        proc = psutil.Process(int(identity["pid"]))
        if abs(proc.create_time() - float(identity["create_time"])) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE:
            return proc
    except (psutil.Error, KeyError, TypeError, ValueError):
        pass
    return None


@dataclass
class SessionRecord:
    """One live (or stale) session as the registry knows it."""

    id: str
    owner: dict[str, Any]
    scheduler_address: str | None
    dashboard_link: str | None
    backend: str
    n_workers: int
    options: dict[str, Any]
    kind: str = "notebook"
    started: str = field(default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    processes: list[dict[str, Any]] = field(default_factory=list)
    host: str = field(default_factory=socket.gethostname)

    @property
    def owner_pid(self) -> int:
        return int(self.owner["pid"])

    @property
    def alive(self) -> bool:
        """True while the process that started the session runs."""
        return _same_process(self.owner) is not None

    def live_processes(self) -> list[psutil.Process]:
        """The recorded worker processes that still run."""
        return [p for p in (_same_process(i) for i in self.processes) if p is not None]

    def to_dict(self) -> dict[str, Any]:
        """The JSON model of ``GET /gpu-dask-kit/api/sessions`` items and ``gpu-dask-kit sessions --json``."""
        data = asdict(self)
        alive = self.alive
        data.update(owner_pid=self.owner_pid, alive=alive, stale=not alive)
        return data

    @property
    def path(self) -> Path:
        return runtime_dir() / f"session-{self.id}.json"


def register(*, scheduler_address: str | None, dashboard_link: str | None, backend: str, n_workers: int,
             options: dict[str, Any], kind: str = "notebook", worker_pids: list[int] | None = None,
             closer: Callable[[], None] | None = None) -> SessionRecord:
    """Write a record for a session this process owns; the file is created 0600 in a 0700 folder."""
    record = SessionRecord(
        id=uuid.uuid4().hex, owner=process_identity(os.getpid()) or {"pid": os.getpid(), "create_time": 0.0},
        scheduler_address=scheduler_address, dashboard_link=dashboard_link, backend=backend,
        n_workers=n_workers, options=options, kind=kind,
        processes=[i for i in (process_identity(p) for p in worker_pids or []) if i],
    )
    _write(record)
    if closer is not None:
        _local_closers[record.id] = closer
    return record


def update(record: SessionRecord) -> None:
    """Rewrite a record (e.g. after scaling changed the worker processes)."""
    if record.path.exists():
        _write(record)


def _write(record: SessionRecord) -> None:
    directory = _ensure_dir()
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(record), f, indent=1, default=str)
        os.replace(tmp, directory / f"session-{record.id}.json")
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def unregister(session_id: str) -> None:
    """Remove a record (idempotent)."""
    validate_session_id(session_id)
    _local_closers.pop(session_id, None)
    try:
        (runtime_dir() / f"session-{session_id}.json").unlink()
    except FileNotFoundError:
        pass


def _load(path: Path) -> SessionRecord | None:
    try:
        if path.stat().st_uid != os.getuid():
            return None
        data = json.loads(path.read_text())
        record = SessionRecord(**data)
        validate_session_id(record.id)
        return record
    except (OSError, ValueError, TypeError):
        return None


def list_sessions() -> list[SessionRecord]:
    """Every session of this user on this machine, oldest first (stale ones included)."""
    directory = runtime_dir()
    if not directory.is_dir():
        return []
    records = [r for r in (_load(p) for p in sorted(directory.glob("session-*.json"))) if r is not None]
    return sorted(records, key=lambda r: r.started)


def get_session(session_id: str) -> SessionRecord:
    """The record of ``session_id``; ``ValueError`` for a malformed id, ``KeyError`` for an unknown one."""
    validate_session_id(session_id)
    record = _load(runtime_dir() / f"session-{session_id}.json")
    if record is None:
        raise KeyError(f"no session {session_id} in {runtime_dir()}; `gpu-dask-kit sessions` lists the live ones.")
    return record


def shutdown_session(session_id: str, timeout: float = 10.0) -> None:
    """Stop a session's cluster, whoever owns it (stale ones too), then remove its record.

    A session owned by this process is closed through its own ``close()``. Otherwise the scheduler is
    asked to shut down; worker processes the record names that are still running after ``timeout``
    are terminated, then killed. Only recorded processes are ever signalled.
    """
    record = get_session(session_id)
    closer = _local_closers.get(session_id)
    if closer is not None and record.owner_pid == os.getpid():
        closer()
    else:
        _shutdown_remote(record, timeout)
    unregister(session_id)


def _shutdown_remote(record: SessionRecord, timeout: float) -> None:
    # The scheduler of a cluster the kit started lives in the owner process: when that is gone, so is the
    # scheduler, and connecting would only wait for a timeout.
    if record.scheduler_address and record.kind != "connect" and record.alive:
        try:
            from distributed import Client

            with Client(record.scheduler_address, timeout=min(timeout, 5), set_as_default=False) as client:
                client.shutdown()
        except Exception:
            pass  # the scheduler is gone already: end the recorded processes below
    if record.kind == "connect":
        return  # the kit did not start that cluster: never stop somebody else's scheduler
    end_processes(record.live_processes(), timeout)


def end_processes(procs: list[psutil.Process], timeout: float, grace: float = 3.0) -> list[int]:
    """Wait up to ``timeout`` s for these processes to exit (a zombie counts as exited); terminate the
    ones still running, wait ``grace`` s, kill what is left. Returns the PIDs that had to be ended.
    Only the given processes are ever signalled."""
    deadline = time.monotonic() + timeout
    alive, interval = _running(procs), 0.005
    while alive and time.monotonic() < deadline:
        time.sleep(interval)
        alive, interval = _running(alive), min(interval * 2, 0.1)
    for proc in alive:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, left = psutil.wait_procs(alive, timeout=grace)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return [p.pid for p in alive]


def _running(procs: list[psutil.Process]) -> list[psutil.Process]:
    running = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                running.append(proc)
        except psutil.Error:
            pass
    return running


def prune_dead() -> list[str]:
    """Remove, without signalling anything, the records whose owner and recorded processes are all gone.

    A Jupyter kernel restart ends the kernel before its ``atexit`` hook can unregister its session; once
    nothing of that session runs, its record is noise. Returns the removed ids.
    """
    removed = []
    for record in list_sessions():
        try:
            if not record.alive and not record.live_processes():
                unregister(record.id)
                removed.append(record.id)
        except (OSError, ValueError):
            pass
    return removed


def cleanup_stale(timeout: float = 10.0) -> list[SessionRecord]:
    """Shut down every session whose owner process is gone; return the records removed."""
    removed = []
    for record in list_sessions():
        if not record.alive:
            try:
                shutdown_session(record.id, timeout=timeout)
            except KeyError:
                continue
            removed.append(record)
    return removed
