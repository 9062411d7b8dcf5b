"""Per-user runtime registry of live kit sessions: one JSON file per session, readable by its user only.

Records only: this module writes, reads and removes records; it ends no process and shuts down no
cluster (that is :func:`gpu_dask_kit.session.shutdown_session`). The kit's scheduler plugin
(:mod:`gpu_dask_kit.plugins`) writes the record of every cluster the kit starts and keeps it in step
with the workers. A record names the session's worker processes (pid + start time), so that cleanup
only ever ends those processes, never a recycled pid (the folder also holds each TLS session's
credentials, ``tls-<id>/``, removed with its record); a SLURM session's record also names its job name
and job ids (``slurm_job_name``, ``slurm_job_ids``), so that cleanup can cancel its jobs.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import socket
import tempfile
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dask.config
import psutil

from . import config as _config
from .processes import process_identity, same_process

__all__ = [
    "SessionRecord",
    "runtime_dir",
    "new_record",
    "register",
    "update",
    "save",
    "unregister",
    "list_sessions",
    "get_session",
    "validate_session_id",
    "credentials_dir",
    "prune_dead",
    "process_identity",
]

_ID = re.compile(r"^[0-9a-f]{32}$")


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


def credentials_dir(session_id: str) -> Path:
    """The folder of a session's TLS credentials (:mod:`gpu_dask_kit.credentials`), removed with its record."""
    return runtime_dir() / f"tls-{validate_session_id(session_id)}"


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


@dataclass
class SessionRecord:
    """One live (or stale) session as the registry knows it."""

    id: str
    owner: dict[str, Any]
    scheduler_address: str | None
    dashboard_link: str | None
    mode: str  # "gpu" | "cpu"
    n_workers: int
    options: dict[str, Any]
    started_by: str = "notebook"  # how the session was started: "notebook", "script", "labextension", "connect"...
    started: str = field(default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))
    processes: list[dict[str, Any]] = field(default_factory=list)
    host: str = field(default_factory=socket.gethostname)
    slurm_job_name: str | None = None  # deploy="slurm": the name every worker job of the session carries
    slurm_job_ids: list[str] = field(default_factory=list)  # its jobs submitted and not yet cancelled

    @property
    def owner_pid(self) -> int:
        return int(self.owner["pid"])

    @property
    def alive(self) -> bool:
        """True while the process that started the session runs."""
        return same_process(self.owner) is not None

    def live_processes(self) -> list[psutil.Process]:
        """The recorded worker processes that still run."""
        return [p for p in (same_process(i) for i in self.processes) if p is not None]

    def to_dict(self) -> dict[str, Any]:
        """The JSON model of ``GET /gpu-dask-kit/api/sessions`` items and ``gpu-dask-kit sessions --json``."""
        data = asdict(self)
        alive = self.alive
        data.update(owner_pid=self.owner_pid, alive=alive, stale=not alive)
        return data

    @property
    def path(self) -> Path:
        return runtime_dir() / f"session-{self.id}.json"


def new_record(
    *,
    scheduler_address: str | None,
    dashboard_link: str | None,
    mode: str,
    n_workers: int,
    options: dict[str, Any],
    started_by: str = "notebook",
    worker_pids: list[int] | None = None,
) -> SessionRecord:
    """A record of a session owned by this process, not yet written (``mode`` is "gpu" | "cpu"; ``started_by``
    says how: "notebook", "script", "labextension", "connect"...)."""
    return SessionRecord(
        id=uuid.uuid4().hex,
        owner=process_identity(os.getpid()) or {"pid": os.getpid(), "create_time": 0.0},
        scheduler_address=scheduler_address,
        dashboard_link=dashboard_link,
        mode=mode,
        n_workers=n_workers,
        options=options,
        started_by=started_by,
        processes=[i for i in (process_identity(p) for p in worker_pids or []) if i],
    )


def register(**fields: Any) -> SessionRecord:
    """Write a record for a session this process owns (``fields`` as for :func:`new_record`); the file is
    created 0600 in a 0700 folder."""
    record = new_record(**fields)
    save(record)
    return record


def save(record: SessionRecord) -> None:
    """Write (or rewrite) a record."""
    _write(record)


def update(record: SessionRecord) -> None:
    """Rewrite a record that is still registered (e.g. after scaling changed the worker processes)."""
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
    """Remove a record and the session's credentials (idempotent)."""
    shutil.rmtree(credentials_dir(session_id), ignore_errors=True)
    try:
        (runtime_dir() / f"session-{session_id}.json").unlink()
    except FileNotFoundError:
        pass


def _load(path: Path) -> SessionRecord | None:
    try:
        if path.stat().st_uid != os.getuid():
            return None
        data = json.loads(path.read_text())
        if "backend" in data:  # a record written before the key was renamed to "mode"
            data.setdefault("mode", data.pop("backend"))
        if "kind" in data:  # a record written before the key was renamed to "started_by"
            data.setdefault("started_by", data.pop("kind"))
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


def prune_dead() -> list[str]:
    """Remove, without signalling anything, the records whose owner and recorded processes are all gone.

    A Jupyter kernel restart ends the kernel before its ``atexit`` hook can unregister its session; once
    nothing of that session runs, its record is noise. SLURM sessions are left to ``--cleanup`` (and to
    the next SLURM start), which ask ``squeue`` whether their jobs are gone. Returns the removed ids.
    """
    removed = []
    for record in list_sessions():
        try:
            if not record.alive and not record.live_processes() and not record.slurm_job_name:
                unregister(record.id)
                removed.append(record.id)
        except (OSError, ValueError):
            pass
    return removed
