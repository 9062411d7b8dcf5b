"""The jobs of a batch session: which ids were submitted, which the scheduler still lists, cancelling them.

SLURM lists and cancels jobs by name (``squeue -n``, ``scancel --name``); PBS, SGE and LSF by id, so the
ids the session's jobs report (:func:`tell`, called by the job class of :func:`gpu_dask_kit.deploy.slurm.cluster_class`)
are kept here by job name, and a session's record keeps them for a cleanup from another process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable

from ..errors import ClusterStartError
from . import batch_checks
from .batch import SCHEDULERS

__all__ = ["JOB_HOOKS", "tell", "squeue_jobs", "session_jobs", "cancel_jobs"]

#: job name -> ``hook(job_id, submitted)``, called when a job of that name was submitted (True) or cancelled (False).
JOB_HOOKS: dict[str, Callable[[str, bool], None]] = {}
#: job name -> every job id submitted under it in this process (PBS/SGE/LSF list jobs by id, not by name).
_SUBMITTED: dict[str, set[str]] = {}


def tell(job_name: str, job_id: str | None, submitted: bool) -> None:
    """Called by the jobs: remember a submitted id, and tell the session's hook (its registry record)."""
    if job_id and submitted:
        _SUBMITTED.setdefault(job_name, set()).add(str(job_id))
    hook = JOB_HOOKS.get(job_name)
    if hook is not None and job_id:
        hook(str(job_id), submitted)


def squeue_jobs(job_name: str) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of this user's jobs named ``job_name`` that ``squeue`` still lists."""
    proc = subprocess.run(["squeue", "-h", "--user", str(os.getuid()), "-n", job_name, "-o", "%i|%t|%r"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise ClusterStartError(f"squeue failed: {proc.stderr.strip()}")
    return [tuple(line.split("|", 2)) for line in proc.stdout.splitlines() if line.strip()]  # type: ignore[misc]


def session_jobs(job_name: str, scheduler: str = "slurm", job_ids: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of the session's jobs the scheduler still lists (state and reason: SLURM's only).
    PBS/SGE/LSF are asked about the ids submitted under ``job_name`` in this process and ``job_ids``."""
    if scheduler == "slurm":
        return squeue_jobs(job_name)
    ids = sorted(_SUBMITTED.get(job_name, set()) | set(job_ids), key=lambda i: (len(i), i))
    return [(i, "", "") for i in batch_checks.listed_jobs(SCHEDULERS[scheduler], ids)]


def cancel_jobs(job_name: str, timeout: float = 60.0, *, scheduler: str = "slurm", job_ids: tuple[str, ...] = ()) -> None:
    """Cancel this user's jobs of session ``job_name`` (a session's, also one whose owner died: ``--cleanup``)
    and wait until the scheduler no longer lists them. SLURM cancels by name; PBS/SGE/LSF by id (those
    submitted in this process and ``job_ids``, e.g. from the session's record)."""
    row = SCHEDULERS[scheduler]
    if shutil.which(row.cancel) is None:
        return
    if scheduler == "slurm":
        subprocess.run(["scancel", "--user", str(os.getuid()), "--name", job_name], capture_output=True, timeout=60)
    else:
        batch_checks.cancel_ids(row, [j for j, _, _ in session_jobs(job_name, scheduler, job_ids)])
    deadline = time.monotonic() + timeout
    while (left := session_jobs(job_name, scheduler, job_ids)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        see = f"squeue -n {job_name}" if scheduler == "slurm" else f"{row.status} {' '.join(j for j, _, _ in left)}"
        raise ClusterStartError(
            f"{row.title} still lists job(s) {', '.join(j for j, _, _ in left)} of {job_name} {timeout:g} s after {row.cancel}; see `{see}`."
        )
