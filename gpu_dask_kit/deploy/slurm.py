"""Clusters whose workers are SLURM jobs: a dask-jobqueue ``SLURMCluster`` with its scheduler in this process.

:func:`make_slurm_plan` (in ``slurm_plan``, re-exported) maps the kit's options onto ``SLURMCluster`` keywords (pure); :func:`start_slurm`
checks them against ``sinfo`` before any ``sbatch``, submits, waits for the workers while saying why
jobs pend, and cancels everything when it gives up; :func:`close_slurm` cancels every job of the session
and waits until ``squeue`` no longer lists them. Scaling is dask-jobqueue's own (``cluster.scale(n)``,
``cluster.adapt(minimum=, maximum=)``). GPU jobs run ``dask cuda worker`` (one worker per GPU of the job,
through :mod:`gpu_dask_kit.deploy.cuda_worker`, which resolves sizes on the job's GPUs) with the same
worker spec as a local ``LocalCUDACluster``; CPU jobs run ``dask worker``.

The cluster is dask-jobqueue's ``SLURMCluster`` with two small additions (:func:`cluster_class`): its job
class tells ``JOB_HOOKS`` which job ids were submitted and cancelled (so the session's registry record
lists them, whatever submitted them: ``scale``, ``adapt``, a lost worker), and its ``close()`` also
cancels by job name and waits until ``squeue`` no longer lists a job of the session.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import ClusterStartError, OptionError
from .slurm_checks import missing_commands, partitions, pending_advice, preflight
from .slurm_plan import SlurmPlan, choose_mode, make_slurm_plan

__all__ = [
    "SlurmPlan",
    "make_slurm_plan",
    "choose_mode",
    "job_script",
    "start_slurm",
    "close_slurm",
    "cancel_jobs",
    "squeue_jobs",
    "cluster_class",
    "JOB_HOOKS",
]

#: The job-log folder of each cluster start_slurm made (removed at a clean close).
_LOGS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
#: job name -> ``hook(job_id, submitted)``, called when a job of that name was submitted (True) or cancelled (False).
JOB_HOOKS: dict[str, Callable[[str, bool], None]] = {}
_CLASSES: list[Any] = []


def _jobqueue() -> Any:
    try:
        import dask_jobqueue
    except ImportError as exc:
        raise OptionError("deploy", "slurm", "'slurm' where dask-jobqueue is installed", "pip install dask-jobqueue (or reinstall gpu-dask-kit)") from exc
    return dask_jobqueue


def cluster_class() -> Any:
    """dask-jobqueue's ``SLURMCluster`` whose jobs report their ids to ``JOB_HOOKS`` and whose ``close()``
    waits until ``squeue`` no longer lists a job of the cluster (made once, on first use)."""
    if _CLASSES:
        return _CLASSES[0]
    jobqueue = _jobqueue()

    class KitSLURMJob(jobqueue.slurm.SLURMJob):  # type: ignore[name-defined]
        async def start(self) -> None:
            await super().start()
            _tell(self.job_name, self.job_id, True)

        async def close(self) -> None:
            try:
                await super().close()
            finally:
                _tell(self.job_name, self.job_id, False)

    class KitSLURMCluster(jobqueue.SLURMCluster):  # type: ignore[name-defined]
        job_cls = KitSLURMJob

        def close(self, timeout: float | None = None) -> Any:
            try:
                return super().close(timeout)
            finally:
                cancel_jobs(self.job_name)  # jobs adapt or a lost worker left, and those still ending
                logs = _LOGS.pop(self, None)
                if logs:
                    shutil.rmtree(logs, ignore_errors=True)

    _CLASSES.append(KitSLURMCluster)
    return KitSLURMCluster


def _tell(job_name: str, job_id: str | None, submitted: bool) -> None:
    hook = JOB_HOOKS.get(job_name)
    if hook is not None and job_id:
        hook(str(job_id), submitted)


def job_script(plan: SlurmPlan, scheduler_address: str = "tcp://SCHEDULER:8786") -> str:
    """The batch script one worker job runs (dask-jobqueue writes it); nothing is submitted."""
    SLURMJob = _jobqueue().slurm.SLURMJob

    # log_directory left out: dask-jobqueue creates it when it builds a job, and nothing may exist before the checks pass.
    job_kwargs = {k: v for k, v in plan.kwargs.items() if k not in ("scheduler_options", "log_directory")}
    return SLURMJob(scheduler_address, name="WORKER", **job_kwargs).job_script()


def squeue_jobs(job_name: str) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of this user's jobs named ``job_name`` that ``squeue`` still lists."""
    proc = subprocess.run(["squeue", "-h", "--user", str(os.getuid()), "-n", job_name, "-o", "%i|%t|%r"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise ClusterStartError(f"squeue failed: {proc.stderr.strip()}")
    return [tuple(line.split("|", 2)) for line in proc.stdout.splitlines() if line.strip()]  # type: ignore[misc]


def _wait_for_workers(cluster: Any, plan: SlurmPlan, timeout: float, on_wait: Callable[[str], None]) -> None:
    deadline = time.monotonic() + timeout
    said = ""
    reasons: list[str] = []
    seen_jobs = False
    while True:
        have = len(cluster.scheduler_info.get("workers", {}))
        if have >= plan.n_workers:
            return
        jobs = squeue_jobs(plan.job_name)
        seen_jobs = seen_jobs or bool(jobs)
        pending = [r for _, state, r in jobs if state == "PD"]
        reasons = sorted(set(pending) - {"None"}) or sorted(set(pending))  # "None": not yet looked at by SLURM's scheduler
        if pending and reasons != ["None"]:
            text = f"Waiting for SLURM: {len(pending)} of {len(jobs)} job(s) pending ({', '.join(reasons)}): " + "; ".join(pending_advice(r) for r in reasons)
            if text != said:
                on_wait(text)
                said = text
        if time.monotonic() > deadline:
            why = (
                ("SLURM kept them pending (" + ", ".join(reasons) + "): " + "; ".join(pending_advice(r) for r in reasons))
                if reasons
                else f"the jobs ran but their workers did not reach the scheduler; see the job logs in {plan.kwargs.get('log_directory')}"
            )
            raise ClusterStartError(
                f"{have} of {plan.n_workers} SLURM worker(s) connected within start_timeout={timeout:g} s; {why}. "
                "Every job this start submitted was cancelled. Change what the reason above asks for, or raise start_timeout."
            )
        if seen_jobs and not jobs and have == 0 and all(getattr(w, "job_id", None) for w in cluster.workers.values()):
            raise ClusterStartError(f"The SLURM worker jobs ended before any worker connected; see the job logs in {plan.kwargs.get('log_directory')}.")
        time.sleep(1.0)


def start_slurm(
    options: Any,
    mode: str = "auto",
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    job_name: str | None = None,
    log_directory: str | None = None,
    scheduler_plugins: Callable[[SlurmPlan], list[Any]] | None = None,
    security: Any = None,
) -> tuple[Any, SlurmPlan]:
    """Check, submit and wait: returns ``(SLURMCluster, plan)`` once ``plan.n_workers`` workers connected.

    Every check runs before the first ``sbatch``. On any failure (timeout, jobs that die, Ctrl-C) every job
    submitted is cancelled and the scheduler closed before the error is raised. ``scheduler_plugins(plan)``,
    called once the checks passed, gives the scheduler's plugins (the kit's registry plugin);
    ``plan.reason`` says where the workers run. ``security`` (a ``Security`` with file paths) goes to
    dask-jobqueue's own TLS support: the scheduler listens on ``tls://`` and each job script passes the
    certificate's paths to its worker (``--tls-ca-file/--tls-cert/--tls-key``).
    """
    if mode == "auto":
        if missing_commands():
            raise OptionError("deploy", "slurm", "'slurm' only where SLURM's commands are installed", missing_commands() or "")
        parts = partitions()
        chosen = parts.get(options.partition) if options.partition else next((p for p in parts.values() if p.default), None)
        mode = choose_mode(options.device, options.gpus_per_job, chosen.gpus if chosen else 0)
    rmm = importlib.util.find_spec("rmm") is not None  # the jobs run this Python (sys.executable)
    cupy = importlib.util.find_spec("cupy") is not None
    name = job_name or f"gdk-{secrets.token_hex(4)}"
    logs = log_directory or os.path.join(os.path.expanduser("~"), ".cache", "gpu-dask-kit", "slurm", name)
    plan = make_slurm_plan(options, mode, job_name=name, cupy_through_rmm=cupy, log_directory=logs, rmm=rmm)
    loopback = "host" in plan.kwargs["scheduler_options"] and plan.kwargs["scheduler_options"]["host"] in ("127.0.0.1", "localhost", "::1")
    part = preflight(
        options.partition,
        options.walltime,
        plan.workers_per_job if mode == "gpu" else 0,
        plan.job_cpus,
        plan.job_memory_mib,
        loopback,
        job_script(plan),
        plan.memory_option,
    )
    what = f"dask cuda worker, {plan.workers_per_job} GPU(s) per job" if plan.mode == "gpu" else "dask worker"
    plan.reason = f"Its workers are SLURM jobs ({what}) on partition {part.name!r}, job name {plan.job_name}."
    kwargs = dict(plan.kwargs)
    if security is not None:
        kwargs["security"] = security
    if scheduler_plugins:
        kwargs["scheduler_options"] = dict(kwargs["scheduler_options"], plugins=scheduler_plugins(plan))
    cluster = cluster_class()(**kwargs)
    _LOGS[cluster] = logs
    try:
        cluster.scale(jobs=plan.n_workers // plan.workers_per_job)  # dask-jobqueue's whole-job scaling
        _wait_for_workers(cluster, plan, timeout if timeout is not None else options.start_timeout, on_wait or print)
    except BaseException:
        close_slurm(cluster, keep_logs=True)  # the error points to the logs
        raise
    return cluster, plan


def cancel_jobs(job_name: str, timeout: float = 60.0) -> None:
    """Cancel this user's jobs named ``job_name`` (a session's, also one whose owner died: ``--cleanup``)
    and wait until ``squeue`` no longer lists them."""
    if shutil.which("scancel") is None:
        return
    subprocess.run(["scancel", "--user", str(os.getuid()), "--name", job_name], capture_output=True, timeout=60)
    deadline = time.monotonic() + timeout
    while (left := squeue_jobs(job_name)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        raise ClusterStartError(
            f"SLURM still lists job(s) {', '.join(j for j, _, _ in left)} of {job_name} {timeout:g} s after scancel; see `squeue -n {job_name}`."
        )


def close_slurm(cluster: Any, timeout: float = 60.0, keep_logs: bool = False) -> None:
    """Close the scheduler, cancel every job of the session, wait until ``squeue`` no longer lists them;
    then remove the jobs' log folder (unless ``keep_logs``)."""
    logs = _LOGS.get(cluster)
    if keep_logs and logs and os.path.isdir(logs) and os.listdir(logs):
        _LOGS.pop(cluster, None)  # the jobs wrote logs and the error names the folder: keep it
    try:
        cluster.close(timeout=timeout)  # cluster_class()'s close cancels by job name and removes the logs
    finally:
        cancel_jobs(cluster.job_name, timeout)
