"""Stop a session whoever owns it, and clean up the sessions whose owner died.

Used by ``gpu-dask-kit sessions --stop/--cleanup`` and the server's ``DELETE sessions/<id>``. A session
of this process is closed through its own ``close()``. Otherwise the scheduler is asked to shut down;
a SLURM session's jobs are cancelled (by the job name in its record) until ``squeue`` no longer lists
them; worker processes the record names that still run after ``timeout`` are terminated, then killed.
Only recorded processes are ever signalled, and a cluster the kit only connected to is never stopped.
"""

from __future__ import annotations

import os

from . import credentials, registry
from .processes import end_processes
from .session import owned_session

__all__ = ["shutdown_session", "cleanup_stale"]


def shutdown_session(session_id: str, timeout: float = 10.0) -> None:
    """Stop a session's cluster (stale ones too), then remove its record.

    ``ValueError`` for a malformed id, ``KeyError`` for an unknown one.
    """
    record = registry.get_session(session_id)
    session = owned_session(session_id)
    if session is not None and record.owner_pid == os.getpid():
        session.close(timeout=timeout)
    else:
        _shutdown_remote(record, timeout)
    registry.unregister(session_id)


def _shutdown_remote(record: registry.SessionRecord, timeout: float) -> None:
    # The scheduler of a cluster the kit started lives in the owner process: when that is gone, so is the
    # scheduler, and connecting would only wait for a timeout.
    if record.scheduler_address and record.started_by != "connect" and record.alive:
        try:
            from distributed import Client

            with Client(record.scheduler_address, timeout=min(timeout, 5), set_as_default=False, security=credentials.for_record(record)) as client:
                client.shutdown()
        except Exception:
            pass  # the scheduler is gone already: end the recorded processes below
    if record.started_by == "connect":
        return  # the kit did not start that cluster: never stop somebody else's scheduler
    if record.slurm_job_name:
        from .deploy.slurm_session import cancel_session_jobs  # SLURM's commands, only for SLURM sessions

        cancel_session_jobs(record)
    end_processes(record.live_processes(), timeout)


def cleanup_stale(timeout: float = 10.0) -> list[registry.SessionRecord]:
    """Shut down every session whose owner process is gone; return the records removed."""
    removed = []
    for record in registry.list_sessions():
        if not record.alive:
            try:
                shutdown_session(record.id, timeout=timeout)
            except KeyError:
                continue
            removed.append(record)
    return removed
