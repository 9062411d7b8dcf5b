"""Clusters whose workers are SLURM jobs: a dask-jobqueue ``SLURMCluster`` with its scheduler in this process.

:func:`make_slurm_plan` maps the kit's options onto ``SLURMCluster`` keywords (pure); :func:`start_slurm`
checks them against ``sinfo`` before any ``sbatch``, submits, waits for the workers while saying why
jobs pend, and cancels everything when it gives up; :func:`close_slurm` cancels every job of the session
and waits until ``squeue`` no longer lists them. Scaling is dask-jobqueue's own (``cluster.scale(n)``,
``cluster.adapt(minimum=, maximum=)``). GPU jobs run ``dask cuda worker`` (one worker per GPU of the job)
with the same RMM, spilling and CuPy settings as a local ``LocalCUDACluster``; CPU jobs run ``dask worker``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import secrets
import shutil
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import ClusterStartError, OptionError
from ..memory import format_bytes, parse_size
from .slurm_checks import missing_commands, partitions, pending_advice, preflight

__all__ = ["SlurmPlan", "make_slurm_plan", "choose_mode", "job_script", "start_slurm", "close_slurm", "job_ids", "squeue_jobs"]

#: The job-log folder of each cluster start_slurm made (removed at a clean close).
_LOGS: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()

#: Host memory per worker when neither memory_limit (as a size) nor job_memory says.
DEFAULT_WORKER_MEMORY = {"cpu": 2 * 2**30, "gpu": 16 * 2**30}
_MIN_WORKER_MEMORY = 64 * 2**20


@dataclass
class SlurmPlan:
    """What will be submitted: SLURMCluster keywords, the workers wanted, and why."""

    mode: str                       # "gpu" | "cpu"
    kwargs: dict[str, Any]          # for dask_jobqueue.SLURMCluster
    n_workers: int
    workers_per_job: int
    job_name: str
    notes: list[str] = field(default_factory=list)
    memory_option: tuple[str, Any] = ("job_memory", None)  # the option the job's memory came from (for errors)

    @property
    def job_memory_mib(self) -> int:
        return math.ceil(self.kwargs["memory"] / 2**20)

    @property
    def job_cpus(self) -> int:
        return int(self.kwargs.get("job_cpu") or self.kwargs["cores"])


def _size_arg(value: Any) -> str:
    """A size for a dask-cuda flag: fractions stay fractions (of the GPU), bytes stay bytes."""
    return repr(value) if isinstance(value, float) else str(int(value))


def _gpu_worker_args(options: Any, cupy_through_rmm: bool, notes: list[str]) -> list[str]:
    args = ["--device-memory-limit", "0" if options.device_memory_limit is None else _size_arg(options.device_memory_limit)]
    pool = options.rmm_pool_size
    use_async = options.rmm_async if options.rmm_async is not None else pool is None  # None = "auto"
    if pool is not None:
        args += ["--rmm-pool-size", _size_arg(pool if isinstance(pool, float) else pool // 256 * 256)]
        if options.rmm_maximum_pool_size is not None:
            args += ["--rmm-maximum-pool-size", _size_arg(options.rmm_maximum_pool_size)]
        notes.append("Each GPU worker allocates through an RMM pool.")
    elif use_async:
        args.append("--rmm-async")
        notes.append("Each GPU worker allocates with RMM's asynchronous allocator (memory given back at close).")
    if options.rmm_managed_memory:
        args.append("--rmm-managed-memory")
    if options.enable_cudf_spill:
        args.append("--enable-cudf-spill")
    if cupy_through_rmm:
        args += ["--set-rmm-allocator-for-libs", "cupy"]
    return args


def job_memory_bytes(value: Any) -> int | None:
    """job_memory as bytes (None stays None): a size per job, never a fraction (there is no total to take it of).

    >>> job_memory_bytes("2GiB"), job_memory_bytes(None)
    (2147483648, None)
    """
    if value is None:
        return None
    size = parse_size(value, "job_memory")
    if isinstance(size, float):
        raise OptionError("job_memory", value, 'a size per job such as "8GiB"', "a fraction has no total to be taken of on a SLURM node")
    return size


def _worker_memory(options: Any, mode: str, per_job: int, notes: list[str]) -> int:
    limit = options.memory_limit
    job_memory = job_memory_bytes(options.job_memory)
    if isinstance(limit, int) and not isinstance(limit, bool):
        if job_memory is not None and limit * per_job > job_memory:
            raise OptionError("memory_limit", limit, f"at most job_memory / workers per job ({format_bytes(job_memory // per_job)})",
                              "lower memory_limit or raise job_memory")
        memory = limit
    elif job_memory is not None:
        memory = job_memory // per_job
    else:
        memory = DEFAULT_WORKER_MEMORY[mode]
        notes.append(f"Each worker gets {memory // 2**30} GiB of host memory (set job_memory or memory_limit to change it).")
    if memory < _MIN_WORKER_MEMORY:
        raise OptionError("job_memory", options.job_memory, f"at least {_MIN_WORKER_MEMORY // 2**20} MiB per worker", "give a size with a unit, e.g. '2GiB'")
    return memory


def make_slurm_plan(options: Any, mode: str, *, job_name: str | None = None, cupy_through_rmm: bool = False,
                    python: str | None = None, log_directory: str | None = None) -> SlurmPlan:
    """SLURMCluster keywords for ``options`` (a ``ClusterOptions``) in ``mode`` "gpu" or "cpu". Pure.

    GPU: ``gpus_per_job`` GPUs per job (default 1), one ``dask cuda worker`` per GPU. CPU: one
    ``dask worker`` per job. ``n_workers`` counts workers (default: one job's worth).
    """
    notes: list[str] = []
    threads = options.threads_per_worker or (1 if mode == "gpu" else (options.job_cores or 1))
    if mode == "gpu":
        per_job = options.gpus_per_job or 1
    elif options.gpus_per_job:
        raise OptionError("gpus_per_job", options.gpus_per_job, "None in CPU mode", "drop gpus_per_job, or use device='gpu' (or 'auto') on a GPU partition")
    else:
        per_job = 1
    if options.job_cores is not None and options.job_cores < threads * per_job:
        raise OptionError("job_cores", options.job_cores, f"at least threads_per_worker x workers per job ({threads} x {per_job})",
                          "raise job_cores or lower threads_per_worker")
    memory = _worker_memory(options, mode, per_job, notes)
    extra = list(options.job_extra_directives or [])
    worker_args: list[str] = []
    loopback = options.interface is None and options.host in ("127.0.0.1", "localhost", "::1")
    if loopback:
        worker_args += ["--host", options.host]  # scheduler on loopback: workers on this machine only (checked by preflight)
    kwargs: dict[str, Any] = {
        "cores": threads * per_job, "processes": per_job, "memory": memory * per_job,
        "queue": options.partition, "account": options.account, "walltime": options.walltime,
        "job_name": job_name or f"gdk-{secrets.token_hex(4)}",
        "scheduler_options": {"dashboard_address": options.dashboard_address or f"{options.host}:0"},
        "python": python or sys.executable, "log_directory": log_directory,
        "local_directory": options.local_directory, "interface": options.interface,
        "protocol": None if options.protocol == "tcp" else options.protocol,
    }
    if options.dashboard_address is None:
        kwargs["scheduler_options"]["dashboard"] = False
    if options.interface is None:
        kwargs["scheduler_options"]["host"] = options.host
    if options.job_cores is not None:
        kwargs["job_cpu"] = options.job_cores
    if options.job_memory is not None:
        kwargs["job_mem"] = f"{math.ceil(job_memory_bytes(options.job_memory) / 2**20)}M"
    if mode == "gpu":
        kwargs["worker_command"] = "dask cuda worker"
        worker_args += _gpu_worker_args(options, cupy_through_rmm, notes)
        extra.insert(0, f"--gres=gpu:{per_job}")
    kwargs["worker_extra_args"] = worker_args
    kwargs["job_extra_directives"] = extra
    jobs = math.ceil((options.n_workers or per_job) / per_job)
    n_workers = jobs * per_job  # dask-jobqueue submits whole jobs
    if options.n_workers and n_workers != options.n_workers:
        notes.append(f"n_workers={options.n_workers} rounded up to {n_workers}: whole jobs of {per_job} GPU worker(s).")
    notes.append(f"{n_workers} worker(s) in {jobs} SLURM job(s) of {per_job} worker(s), {threads} thread(s) each"
                 + (f", {per_job} GPU(s) per job." if mode == "gpu" else "."))
    source = ("memory_limit", options.memory_limit) if isinstance(options.memory_limit, int) else ("job_memory", options.job_memory)
    return SlurmPlan(mode, kwargs, n_workers, per_job, kwargs["job_name"], notes, source)


def _jobqueue() -> Any:
    try:
        import dask_jobqueue
    except ImportError as exc:
        raise OptionError("deploy", "slurm", "'slurm' where dask-jobqueue is installed", "pip install dask-jobqueue (or reinstall gpu-dask-kit)") from exc
    return dask_jobqueue


def job_script(plan: SlurmPlan, scheduler_address: str = "tcp://SCHEDULER:8786") -> str:
    """The batch script one worker job runs (dask-jobqueue writes it); nothing is submitted."""
    SLURMJob = _jobqueue().slurm.SLURMJob

    # log_directory left out: dask-jobqueue creates it when it builds a job, and nothing may exist before the checks pass.
    job_kwargs = {k: v for k, v in plan.kwargs.items() if k not in ("scheduler_options", "log_directory")}
    return SLURMJob(scheduler_address, name="WORKER", **job_kwargs).job_script()


def squeue_jobs(job_name: str) -> list[tuple[str, str, str]]:
    """(job id, state, reason) of this user's jobs named ``job_name`` that ``squeue`` still lists."""
    proc = subprocess.run(["squeue", "-h", "--user", str(os.getuid()), "-n", job_name, "-o", "%i|%t|%r"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise ClusterStartError(f"squeue failed: {proc.stderr.strip()}")
    return [tuple(line.split("|", 2)) for line in proc.stdout.splitlines() if line.strip()]  # type: ignore[misc]


def job_ids(cluster: Any) -> list[str]:
    """Every SLURM job id of the session that ``squeue`` still lists (running, pending or ending)."""
    ids = {j for j, _, _ in squeue_jobs(cluster.job_name)}
    ids |= {w.job_id for w in cluster.workers.values() if getattr(w, "job_id", None)}
    return sorted(ids, key=int)


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
            why = ("SLURM kept them pending (" + ", ".join(reasons) + "): " + "; ".join(pending_advice(r) for r in reasons)) if reasons else \
                  f"the jobs ran but their workers did not reach the scheduler; see the job logs in {plan.kwargs.get('log_directory')}"
            raise ClusterStartError(f"{have} of {plan.n_workers} SLURM worker(s) connected within start_timeout={timeout:g} s; {why}. "
                                    "Every job this start submitted was cancelled. Change what SLURM names, or raise start_timeout.")
        if seen_jobs and not jobs and have == 0 and all(getattr(w, "job_id", None) for w in cluster.workers.values()):
            raise ClusterStartError(f"The SLURM worker jobs ended before any worker connected; see the job logs in {plan.kwargs.get('log_directory')}.")
        time.sleep(1.0)


def choose_mode(device: str, gpus_per_job: int | None, partition_gpus: int) -> str:
    """"gpu" or "cpu" for a SLURM session: ``device`` when explicit, else GPU jobs when ``gpus_per_job``
    is set or the partition's nodes have GPUs.

    >>> choose_mode("auto", None, 4), choose_mode("auto", None, 0), choose_mode("cpu", None, 4), choose_mode("auto", 2, 0)
    ('gpu', 'cpu', 'cpu', 'gpu')
    """
    if device in ("gpu", "cpu"):
        return device
    return "gpu" if gpus_per_job or partition_gpus > 0 else "cpu"


def start_slurm(options: Any, mode: str = "auto", *, timeout: float | None = None, on_wait: Callable[[str], None] | None = None,
                job_name: str | None = None, log_directory: str | None = None) -> tuple[Any, SlurmPlan]:
    """Check, submit and wait: returns ``(SLURMCluster, plan)`` once ``plan.n_workers`` workers connected.

    Every check runs before the first ``sbatch``. On any failure (timeout, jobs that die, Ctrl-C) every job
    submitted is cancelled and the scheduler closed before the error is raised.
    """
    if mode == "auto":
        if missing_commands():
            raise OptionError("deploy", "slurm", "'slurm' only where SLURM's commands are installed", missing_commands() or "")
        parts = partitions()
        chosen = parts.get(options.partition) if options.partition else next((p for p in parts.values() if p.default), None)
        mode = choose_mode(getattr(options, "device", "auto"), options.gpus_per_job, chosen.gpus if chosen else 0)
    cupy_rmm = mode == "gpu" and importlib.util.find_spec("cupy") is not None and importlib.util.find_spec("rmm") is not None
    name = job_name or f"gdk-{secrets.token_hex(4)}"
    logs = log_directory or os.path.join(os.path.expanduser("~"), ".cache", "gpu-dask-kit", "slurm", name)
    plan = make_slurm_plan(options, mode, job_name=name, cupy_through_rmm=cupy_rmm, log_directory=logs)
    loopback = "host" in plan.kwargs["scheduler_options"] and plan.kwargs["scheduler_options"]["host"] in ("127.0.0.1", "localhost", "::1")
    preflight(options.partition, options.walltime, plan.workers_per_job if mode == "gpu" else 0, plan.job_cpus,
              plan.job_memory_mib, loopback, job_script(plan), plan.memory_option)
    cluster = _jobqueue().SLURMCluster(**plan.kwargs)
    _LOGS[cluster] = logs
    try:
        cluster.scale(plan.n_workers)
        _wait_for_workers(cluster, plan, timeout if timeout is not None else getattr(options, "start_timeout", 120.0), on_wait or print)
    except BaseException:
        close_slurm(cluster, keep_logs=True)  # the error points to the logs
        raise
    return cluster, plan


def close_slurm(cluster: Any, timeout: float = 60.0, keep_logs: bool = False) -> None:
    """Close the scheduler, cancel every job of the session, wait until ``squeue`` no longer lists them;
    then remove the jobs' log folder (unless ``keep_logs``)."""
    name = cluster.job_name
    try:
        cluster.close(timeout=timeout)
    finally:
        if shutil.which("scancel"):
            subprocess.run(["scancel", "--user", str(os.getuid()), "--name", name], capture_output=True, timeout=60)
            deadline = time.monotonic() + timeout
            while (left := squeue_jobs(name)) and time.monotonic() < deadline:
                time.sleep(0.5)
            if left:
                raise ClusterStartError(f"SLURM still lists job(s) {', '.join(j for j, _, _ in left)} of {name} {timeout:g} s after scancel; see `squeue -n {name}`.")
    logs = _LOGS.pop(cluster, None)
    if logs and not keep_logs:
        shutil.rmtree(logs, ignore_errors=True)
