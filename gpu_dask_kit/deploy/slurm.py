"""Clusters whose workers are batch jobs (SLURM, PBS, SGE, LSF): a dask-jobqueue cluster (``SLURMCluster``,
``PBSCluster``, ``SGECluster``, ``LSFCluster``) with its scheduler in this process.

:func:`make_batch_plan` (in ``slurm_plan``, re-exported) maps the kit's options onto the cluster's keywords
(pure); :func:`start_batch` checks them before the first submit (SLURM: ``sinfo`` and ``sbatch --test-only``;
PBS/SGE/LSF: the commands, the queue, SGE's ``qsub -w v``), submits, waits for the workers (on SLURM saying
why jobs pend), and cancels everything when it gives up; :func:`close_batch` cancels every job of the session
and waits until the scheduler no longer lists them. Scaling is dask-jobqueue's own (``cluster.scale(n)``,
``cluster.adapt(minimum=, maximum=)``). GPU jobs run ``dask cuda worker`` (one worker per GPU of the job,
through :mod:`gpu_dask_kit.deploy.cuda_worker`, which resolves sizes on the job's GPUs) with the same worker
spec as a local ``LocalCUDACluster``; CPU jobs run ``dask worker``. What differs between the schedulers is
one row of :data:`gpu_dask_kit.deploy.batch.SCHEDULERS`.

The cluster is dask-jobqueue's own with two small additions (:func:`cluster_class`): its job class tells
``JOB_HOOKS`` which job ids were submitted and cancelled (so the session's registry record lists them,
whatever submitted them: ``scale``, ``adapt``, a lost worker), and its ``close()`` also cancels every job
of the session (SLURM: by job name) and waits until the scheduler no longer lists one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import secrets
import shutil
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import ClusterStartError, OptionError
from . import batch_checks
from .batch import SCHEDULERS, BatchScheduler
from .batch_jobs import JOB_HOOKS, cancel_jobs, session_jobs, squeue_jobs, tell
from .slurm_checks import missing_commands, partitions, pending_advice, preflight
from .slurm_plan import BatchPlan, SlurmPlan, choose_mode, make_batch_plan, make_slurm_plan

__all__ = [
    "BatchPlan",
    "SlurmPlan",
    "make_batch_plan",
    "make_slurm_plan",
    "choose_mode",
    "job_script",
    "start_batch",
    "start_slurm",
    "close_batch",
    "close_slurm",
    "cancel_jobs",
    "session_jobs",
    "squeue_jobs",
    "cluster_class",
    "JOB_HOOKS",
]

#: The job-log folder of each cluster start_batch made (removed at a clean close).
_LOGS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_CLASSES: dict[str, Any] = {}


def _jobqueue(scheduler: str = "slurm") -> Any:
    try:
        return importlib.import_module(f"dask_jobqueue.{SCHEDULERS[scheduler].module}")
    except ImportError as exc:
        raise OptionError(
            "deploy", scheduler, f"'{scheduler}' where dask-jobqueue is installed", "pip install dask-jobqueue (or reinstall gpu-dask-kit)"
        ) from exc


class _ReportingJob:
    """Mixed into dask-jobqueue's job class: tells ``JOB_HOOKS`` the ids submitted and cancelled."""

    job_name: str
    job_id: str | None

    async def start(self) -> None:
        await super().start()  # type: ignore[misc]
        tell(self.job_name, self.job_id, True)

    async def close(self) -> None:
        try:
            await super().close()  # type: ignore[misc]
        finally:
            tell(self.job_name, self.job_id, False)


class _CancellingCluster:
    """Mixed into dask-jobqueue's cluster class: ``close()`` also cancels every job of the session."""

    job_name: str
    kit_scheduler = "slurm"

    def close(self, timeout: float | None = None) -> Any:
        name = self.job_name  # before the log folder is removed (reading it builds a job object, which makes the folder)
        try:
            return super().close(timeout)  # type: ignore[misc]
        finally:
            cancel_jobs(name, scheduler=self.kit_scheduler)  # jobs adapt or a lost worker left, and those still ending
            logs = _LOGS.pop(self, None)
            if logs:
                shutil.rmtree(logs, ignore_errors=True)


def cluster_class(scheduler: str = "slurm") -> Any:
    """dask-jobqueue's cluster class of ``scheduler`` whose jobs report their ids to ``JOB_HOOKS`` and whose
    ``close()`` waits until the scheduler no longer lists a job of the cluster (made once per scheduler)."""
    if scheduler not in _CLASSES:
        row = SCHEDULERS[scheduler]
        module = _jobqueue(scheduler)
        job = type(f"Kit{row.job}", (_ReportingJob, getattr(module, row.job)), {})
        attrs = {"job_cls": job, "kit_scheduler": scheduler}
        _CLASSES[scheduler] = type(f"Kit{row.cluster}", (_CancellingCluster, getattr(module, row.cluster)), attrs)
    return _CLASSES[scheduler]


def job_script(plan: BatchPlan, scheduler_address: str = "tcp://SCHEDULER:8786") -> str:
    """The batch script one worker job runs (dask-jobqueue writes it); nothing is submitted."""
    row = plan.scheduler
    job_cls = getattr(_jobqueue(row.name), row.job)

    # log_directory left out: dask-jobqueue creates it when it builds a job, and nothing may exist before the checks pass.
    job_kwargs = {k: v for k, v in plan.kwargs.items() if k not in ("scheduler_options", "log_directory")}
    return str(job_cls(scheduler_address, name="WORKER", **job_kwargs).job_script())


def _wait_for_workers(cluster: Any, plan: BatchPlan, timeout: float, on_wait: Callable[[str], None]) -> None:
    row = plan.scheduler
    deadline = time.monotonic() + timeout
    said = ""
    reasons: list[str] = []
    seen_jobs = False
    while True:
        have = len(cluster.scheduler_info.get("workers", {}))
        if have >= plan.n_workers:
            return
        jobs = session_jobs(plan.job_name, row.name)
        seen_jobs = seen_jobs or bool(jobs)
        pending = [r for _, state, r in jobs if state == "PD"]  # SLURM's state and reason; PBS/SGE/LSF report neither here
        reasons = sorted(set(pending) - {"None"}) or sorted(set(pending))  # "None": not yet looked at by SLURM's scheduler
        if pending and reasons != ["None"]:
            text = f"Waiting for SLURM: {len(pending)} of {len(jobs)} job(s) pending ({', '.join(reasons)}): " + "; ".join(pending_advice(r) for r in reasons)
            if text != said:
                on_wait(text)
                said = text
        if time.monotonic() > deadline:
            logs = plan.kwargs.get("log_directory")
            why = (
                ("SLURM kept them pending (" + ", ".join(reasons) + "): " + "; ".join(pending_advice(r) for r in reasons))
                if reasons
                else f"the jobs ran but their workers did not reach the scheduler; see the job logs in {logs}"
                if row.name == "slurm"
                else f"they were still queued (see `{row.status}`) or their workers did not reach the scheduler (see the job logs in {logs})"
            )
            raise ClusterStartError(
                f"{have} of {plan.n_workers} {row.title} worker(s) connected within start_timeout={timeout:g} s; {why}. "
                "Every job this start submitted was cancelled. Change what the reason above asks for, or raise start_timeout."
            )
        if seen_jobs and not jobs and have == 0 and all(getattr(w, "job_id", None) for w in cluster.workers.values()):
            raise ClusterStartError(f"The {row.title} worker jobs ended before any worker connected; see the job logs in {plan.kwargs.get('log_directory')}.")
        time.sleep(1.0)


def _check(options: Any, plan: BatchPlan, mode: str) -> str:
    """The pre-flight checks of ``plan`` (nothing is submitted); returns where the jobs go, for the reason."""
    row = plan.scheduler
    if row.name != "slurm":
        batch_checks.preflight(row, options.partition, job_script(plan))
        return f"queue {options.partition!r}" if options.partition else "the default queue"
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
    return f"partition {part.name!r}"


def _auto_mode(options: Any, row: BatchScheduler) -> str:
    """The mode for device="auto": SLURM's partition tells whether its nodes have GPUs; PBS/SGE/LSF: only gpus_per_job."""
    problem = missing_commands() if row.name == "slurm" else batch_checks.missing_commands(row)
    if problem:
        raise OptionError("deploy", row.name, f"'{row.name}' only where {row.title}'s commands are installed", problem)
    if row.name != "slurm":
        return choose_mode(options.device, options.gpus_per_job, 0)
    parts = partitions()
    chosen = parts.get(options.partition) if options.partition else next((p for p in parts.values() if p.default), None)
    return choose_mode(options.device, options.gpus_per_job, chosen.gpus if chosen else 0)


def start_batch(
    options: Any,
    mode: str = "auto",
    *,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    job_name: str | None = None,
    log_directory: str | None = None,
    scheduler_plugins: Callable[[BatchPlan], list[Any]] | None = None,
    security: Any = None,
) -> tuple[Any, BatchPlan]:
    """Check, submit and wait: returns ``(cluster, plan)`` once ``plan.n_workers`` workers connected; the
    scheduler is ``options.deploy`` (SLURM when it names no batch scheduler).

    Every check runs before the first submit. On any failure (timeout, jobs that die, Ctrl-C) every job
    submitted is cancelled and the scheduler closed before the error is raised. ``scheduler_plugins(plan)``,
    called once the checks passed, gives the scheduler's plugins (the kit's registry plugin);
    ``plan.reason`` says where the workers run. ``security`` (a ``Security`` with file paths) goes to
    dask-jobqueue's own TLS support: the scheduler listens on ``tls://`` and each job script passes the
    certificate's paths to its worker (``--tls-ca-file/--tls-cert/--tls-key``).
    """
    row = SCHEDULERS[options.deploy if options.deploy in SCHEDULERS else "slurm"]
    if mode == "auto":
        mode = _auto_mode(options, row)
    rmm = importlib.util.find_spec("rmm") is not None  # the jobs run this Python (sys.executable)
    cupy = importlib.util.find_spec("cupy") is not None
    name = job_name or f"gdk-{secrets.token_hex(4)}"
    logs = log_directory or os.path.join(os.path.expanduser("~"), ".cache", "gpu-dask-kit", row.name, name)
    plan = make_batch_plan(options, mode, job_name=name, cupy_through_rmm=cupy, log_directory=logs, rmm=rmm)
    where = _check(options, plan, mode)
    what = f"dask cuda worker, {plan.workers_per_job} GPU(s) per job" if plan.mode == "gpu" else "dask worker"
    plan.reason = f"Its workers are {row.title} jobs ({what}) on {where}, job name {plan.job_name}."
    kwargs = dict(plan.kwargs)
    if security is not None:
        kwargs["security"] = security
    if scheduler_plugins:
        kwargs["scheduler_options"] = dict(kwargs["scheduler_options"], plugins=scheduler_plugins(plan))
    cluster = cluster_class(row.name)(**kwargs)
    _LOGS[cluster] = logs
    try:
        cluster.scale(jobs=plan.n_workers // plan.workers_per_job)  # dask-jobqueue's whole-job scaling
        _wait_for_workers(cluster, plan, timeout if timeout is not None else options.start_timeout, on_wait or print)
    except BaseException:
        close_batch(cluster, keep_logs=True)  # the error points to the logs
        raise
    return cluster, plan


#: The SLURM deploy's name for :func:`start_batch` (which submits to whichever scheduler ``options.deploy`` names).
start_slurm = start_batch


def close_batch(cluster: Any, timeout: float = 60.0, keep_logs: bool = False) -> None:
    """Close the scheduler, cancel every job of the session, wait until the scheduler no longer lists them;
    then remove the jobs' log folder (unless ``keep_logs``)."""
    logs = _LOGS.get(cluster)
    if keep_logs and logs and os.path.isdir(logs) and os.listdir(logs):
        _LOGS.pop(cluster, None)  # the jobs wrote logs and the error names the folder: keep it
    name = cluster.job_name  # read before close: dask-jobqueue builds a job object for it, which makes the log folder again
    try:
        cluster.close(timeout=timeout)  # cluster_class()'s close cancels the jobs and removes the logs
    finally:
        cancel_jobs(name, timeout, scheduler=getattr(cluster, "kit_scheduler", "slurm"))


#: The SLURM deploy's name for :func:`close_batch`.
close_slurm = close_batch
