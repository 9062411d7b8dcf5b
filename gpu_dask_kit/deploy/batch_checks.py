"""What PBS, SGE and LSF say, asked before anything is submitted and while jobs run (SLURM's own, richer
checks are :mod:`.slurm_checks`): the commands on PATH, the queue, SGE's verify-only submit, which jobs are
still listed, and cancelling by job id. Which command does what is the scheduler's row in
:data:`gpu_dask_kit.deploy.batch.SCHEDULERS`.
"""

from __future__ import annotations

import shutil
import subprocess

from ..errors import ClusterStartError, OptionError
from .batch import BatchScheduler

__all__ = ["missing_commands", "preflight", "listed_jobs", "cancel_ids"]

#: LSF states of a job that has ended (``bjobs`` lists ended jobs for a while).
_LSF_ENDED = {"DONE", "EXIT", "ZOMBI", "UNKWN"}


def missing_commands(scheduler: BatchScheduler) -> str | None:
    """None when the scheduler's commands are on PATH, else a sentence saying what to do."""
    missing = [c for c in scheduler.commands if shutil.which(c) is None]
    if not missing:
        return None
    return f"{scheduler.title}'s commands ({', '.join(missing)}) are not on this machine's PATH: {scheduler.install}"


def _run(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterStartError(f"`{' '.join(cmd)}` failed ({exc}); does the batch scheduler answer?") from exc


def preflight(scheduler: BatchScheduler, queue: str | None, script: str) -> None:
    """Check a worker job without submitting it: the commands exist, the queue is one the scheduler lists
    (``qstat -Q``, ``qconf -sq``, ``bqueues``), and, where the scheduler offers a verify-only submit (SGE's
    ``qsub -w v``), that it would accept the job script. Raises OptionError / ClusterStartError; submits nothing."""
    problem = missing_commands(scheduler)
    if problem:
        raise OptionError("deploy", scheduler.name, f"'{scheduler.name}' only where {scheduler.title}'s commands are installed", problem)
    if queue is not None and scheduler.queue_check:
        proc = _run([*scheduler.queue_check, queue])
        if proc.returncode != 0:
            said = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "; ")
            listing = " ".join(scheduler.queue_check[:1] + (("-sql",) if scheduler.name == "sge" else scheduler.queue_check[1:]))
            raise OptionError("partition", queue, f"a queue `{listing}` lists ({scheduler.title} says: {said})", "pick one of the queues it lists")
    if scheduler.verify:
        proc = _run(list(scheduler.verify), stdin=script)
        if proc.returncode != 0:
            said = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "; ")
            raise ClusterStartError(
                f"{scheduler.title} refuses the worker job ({said}); check queue, account, gpus_per_job and job_extra_directives. Nothing was submitted."
            )


def listed_jobs(scheduler: BatchScheduler, job_ids: list[str]) -> list[str]:
    """The ids of ``job_ids`` the scheduler still lists as queued or running (PBS ``qstat ID``, SGE
    ``qstat -j ID``, LSF ``bjobs ID`` with a state other than DONE/EXIT)."""
    left = []
    for job_id in job_ids:
        if scheduler.name == "sge":
            proc = _run([scheduler.status, "-j", job_id])
            alive = proc.returncode == 0
        elif scheduler.name == "lsf":
            proc = _run([scheduler.status, "-noheader", "-o", "stat", job_id])
            alive = proc.returncode == 0 and bool(proc.stdout.split()) and proc.stdout.split()[0] not in _LSF_ENDED
        else:
            proc = _run([scheduler.status, job_id])
            alive = proc.returncode == 0
        if alive:
            left.append(job_id)
    return left


def cancel_ids(scheduler: BatchScheduler, job_ids: list[str]) -> None:
    """Ask the scheduler to cancel ``job_ids`` (``qdel``, ``bkill``); ids already gone are no error."""
    if job_ids and shutil.which(scheduler.cancel) is not None:
        _run([scheduler.cancel, *job_ids])
