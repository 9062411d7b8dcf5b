"""The pure half of the batch-scheduler deploys (SLURM, PBS, SGE, LSF): the kit's options -> a
:class:`~gpu_dask_kit.plan.WorkerSpec` (the same planner as every target) -> dask-jobqueue cluster keywords
(``SLURMCluster``, ``PBSCluster``, ``SGECluster``, ``LSFCluster``) and ``dask cuda worker`` arguments.

What differs between the schedulers (GPU request syntax, walltime form, account keyword, options one
cannot take) is one row of :data:`gpu_dask_kit.deploy.batch.SCHEDULERS`. No scheduler command runs here
and nothing is created; :mod:`gpu_dask_kit.deploy.slurm` checks the plan and submits it. The job's GPU is not known here: sizes given as fractions are resolved
in the job, on its own GPUs, by :mod:`gpu_dask_kit.deploy.cuda_worker` (with the same rules).
"""

from __future__ import annotations

import math
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any

from ..environment import LibraryInfo
from ..errors import OptionError
from ..memory import align_pool_size, format_bytes, parse_size
from ..plan import MIN_WORKER_MEMORY, WorkerSpec, gpu_spec
from .batch import SCHEDULERS, BatchScheduler, job_request, refuse_options, scheduler_for, sge_gpu_complex, walltime_for
from .slurm_checks import parse_slurm_time

__all__ = [
    "BatchPlan",
    "SlurmPlan",
    "make_batch_plan",
    "make_slurm_plan",
    "choose_mode",
    "job_memory_bytes",
    "cuda_worker_args",
    "DEFAULT_WORKER_MEMORY",
    "WORKER_MODULE",
]

#: What a GPU job runs (``python -m ...``): resolves the sizes on the job's GPUs, then runs ``dask cuda worker``.
WORKER_MODULE = "gpu_dask_kit.deploy.cuda_worker"

#: Host memory per worker when neither memory_limit (as a size) nor job_memory says.
DEFAULT_WORKER_MEMORY = {"cpu": 2 * 2**30, "gpu": 16 * 2**30}


@dataclass
class BatchPlan:
    """What will be submitted: dask-jobqueue cluster keywords, the workers wanted, and why."""

    mode: str  # "gpu" | "cpu"
    kwargs: dict[str, Any]  # for the scheduler's dask-jobqueue cluster class (SLURMCluster, PBSCluster, ...)
    n_workers: int
    workers_per_job: int
    job_name: str
    spec: WorkerSpec = None  # type: ignore[assignment]  # set by make_slurm_plan
    notes: list[str] = field(default_factory=list)
    memory_option: tuple[str, Any] = ("job_memory", None)  # the option the job's memory came from (for errors)
    reason: str = ""  # where the workers run, one sentence (set once the partition is known)
    array_backend: str = "numpy"  # dask's backends in the notebook (set by the session)
    dataframe_backend: str = "pandas"
    scheduler_name: str = "slurm"  # the deploy value: a key of batch.SCHEDULERS

    @property
    def scheduler(self) -> BatchScheduler:
        return SCHEDULERS[self.scheduler_name]

    @property
    def job_memory_mib(self) -> int:
        return math.ceil(self.kwargs["memory"] / 2**20)

    @property
    def job_cpus(self) -> int:
        return int(self.kwargs.get("job_cpu") or self.kwargs["cores"])


#: The SLURM deploy's name for the plan (older imports).
SlurmPlan = BatchPlan


def _size_arg(value: Any) -> str:
    """A size for a dask-cuda flag: fractions stay fractions (resolved in the job), bytes stay bytes."""
    return repr(value) if isinstance(value, float) else str(int(value))


def cuda_worker_args(spec: WorkerSpec) -> list[str]:
    """``dask cuda worker`` arguments for ``spec`` (the CLI twin of :func:`gpu_dask_kit.deploy.local.gpu_kwargs`).

    >>> cuda_worker_args(WorkerSpec("gpu", 1, 1, 0, allocator="managed", rmm_libraries=("cupy",)))
    ['--device-memory-limit', '0', '--rmm-managed-memory', '--rmm-track-allocations', '--set-rmm-allocator-for-libs', 'cupy']
    """
    limit = spec.device_memory_limit
    args = ["--device-memory-limit", "0" if limit is None else _size_arg(limit)]
    for flag, value in (("--rmm-pool-size", spec.rmm_pool_size), ("--rmm-maximum-pool-size", spec.rmm_maximum_pool_size)):
        if value is not None:
            args += [flag, _size_arg(value if isinstance(value, float) else align_pool_size(value))]
    if spec.allocator == "async":
        args += ["--rmm-async", "--rmm-release-threshold", _size_arg(spec.rmm_release_threshold)]
    if spec.allocator in ("managed", "managed_pool"):
        args.append("--rmm-managed-memory")
    if spec.enable_cudf_spill:
        args += ["--enable-cudf-spill", "--cudf-spill-stats", str(spec.cudf_spill_stats)]
    if spec.rmm_track_allocations:
        args.append("--rmm-track-allocations")
    if spec.rmm_libraries:
        args += ["--set-rmm-allocator-for-libs", ",".join(spec.rmm_libraries)]
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
        raise OptionError("job_memory", value, 'a size per job such as "8GiB"', "a fraction has no total to be taken of on a batch node")
    return size


def _worker_memory(options: Any, mode: str, per_job: int, notes: list[str]) -> int:
    limit = options.memory_limit
    job_memory = job_memory_bytes(options.job_memory)
    if isinstance(limit, int) and not isinstance(limit, bool):
        if job_memory is not None and limit * per_job > job_memory:
            raise OptionError(
                "memory_limit", limit, f"at most job_memory / workers per job ({format_bytes(job_memory // per_job)})", "lower memory_limit or raise job_memory"
            )
        memory = limit
    elif job_memory is not None:
        memory = job_memory // per_job
    else:
        memory = DEFAULT_WORKER_MEMORY[mode]
        notes.append(f"Each worker gets {memory // 2**30} GiB of host memory (set job_memory or memory_limit to change it).")
    if memory < MIN_WORKER_MEMORY:
        raise OptionError("job_memory", options.job_memory, f"at least {MIN_WORKER_MEMORY // 2**20} MiB per worker", "give a size with a unit, e.g. '2GiB'")
    return memory


def make_batch_plan(
    options: Any,
    mode: str,
    *,
    job_name: str | None = None,
    cupy_through_rmm: bool = False,
    python: str | None = None,
    log_directory: str | None = None,
    rmm: bool = True,
    libraries: dict[str, LibraryInfo] | None = None,
) -> BatchPlan:
    """dask-jobqueue keywords for ``options`` (a ``ClusterOptions``; ``options.deploy`` names the scheduler,
    SLURM when it names none) in ``mode`` "gpu" or "cpu". Pure.

    GPU: ``gpus_per_job`` GPUs per job (default 1), one ``dask cuda worker`` per GPU (run through
    :data:`WORKER_MODULE`). CPU: one ``dask worker`` per job. ``n_workers`` counts workers (default: one
    job's worth). ``libraries``: what the jobs' Python (this one) has installed, as in a detection report
    (or the older flags ``rmm`` / ``cupy_through_rmm``: RMM / CuPy installed; cuDF assumed).
    """
    scheduler = scheduler_for(options.deploy if options.deploy in SCHEDULERS else "slurm")
    refuse_options(scheduler, options)
    notes: list[str] = []
    threads = options.threads_per_worker or (1 if mode == "gpu" else (options.job_cores or 1))
    if mode == "gpu":
        per_job = options.gpus_per_job or 1
    elif options.gpus_per_job:
        raise OptionError(
            "gpus_per_job", options.gpus_per_job, "None in CPU mode", "drop gpus_per_job, or use device='gpu' (or 'auto') on a GPU partition or queue"
        )
    else:
        per_job = 1
    if options.job_cores is not None and options.job_cores < threads * per_job:
        raise OptionError(
            "job_cores",
            options.job_cores,
            f"at least threads_per_worker x workers per job ({threads} x {per_job})",
            "raise job_cores or lower threads_per_worker",
        )
    memory = _worker_memory(options, mode, per_job, notes)
    extra = list(options.job_extra_directives or [])
    worker_args: list[str] = []
    loopback = options.interface is None and options.host in ("127.0.0.1", "localhost", "::1")
    if loopback:
        worker_args += ["--host", options.host]  # scheduler on loopback: workers on this machine only (checked by preflight)
    kwargs: dict[str, Any] = {
        "cores": threads * per_job,
        "processes": per_job,
        "memory": memory * per_job,
        "queue": options.partition,
        scheduler.account_keyword: options.account,
        "walltime": options.walltime if scheduler.name == "slurm" else walltime_for(scheduler, parse_slurm_time(options.walltime)),
        "job_name": job_name or f"gdk-{secrets.token_hex(4)}",
        "scheduler_options": {"dashboard_address": options.dashboard_address or f"{options.host}:0"},
        "python": python or sys.executable,
        "log_directory": log_directory,
        "local_directory": options.local_directory,
        "interface": options.interface,
        "protocol": None if options.protocol == "tcp" else options.protocol,
    }
    if options.dashboard_address is None:
        kwargs["scheduler_options"]["dashboard"] = False
    if options.interface is None:
        kwargs["scheduler_options"]["host"] = options.host
    jobs = math.ceil((options.n_workers or per_job) / per_job)
    n_workers = jobs * per_job  # dask-jobqueue submits whole jobs
    if mode == "gpu":
        if libraries is None:
            libraries = {"rmm": LibraryInfo(rmm, None), "cupy": LibraryInfo(cupy_through_rmm, None), "cudf": LibraryInfo(True, None)}
        rmm = bool(libraries.get("rmm") and libraries["rmm"].installed)
        fields = gpu_spec(options, libraries, notes, workers_per_unit=per_job)
        spec = WorkerSpec("gpu", n_workers, threads, memory, **fields)
        kwargs["worker_command"] = WORKER_MODULE
        worker_args += cuda_worker_args(spec)
        if not rmm:
            notes.append("RMM is not installed: the GPU workers use CUDA's default allocator (install gpu-dask-kit[gpu-cu12] for RMM).")
        if any(isinstance(v, float) for v in (spec.device_memory_limit, spec.rmm_pool_size, spec.rmm_maximum_pool_size)):
            notes.append("Sizes given as fractions are resolved in each job on its own GPU(s), with the same checks as a local start.")
    else:
        spec = WorkerSpec("cpu", n_workers, threads, memory)
    job_request(
        scheduler,
        kwargs,
        extra,
        cpus=options.job_cores,
        memory=job_memory_bytes(options.job_memory),
        gpus=per_job if mode == "gpu" else 0,
        gpu_complex=sge_gpu_complex() if scheduler.name == "sge" and mode == "gpu" else "gpu",
    )
    kwargs["worker_extra_args"] = worker_args
    kwargs["job_extra_directives"] = extra
    if options.n_workers and n_workers != options.n_workers:
        notes.append(f"n_workers={options.n_workers} rounded up to {n_workers}: whole jobs of {per_job} GPU worker(s).")
    notes.append(
        f"{n_workers} worker(s) in {jobs} {scheduler.title} job(s) of {per_job} worker(s), {threads} thread(s) each"
        + (f", {per_job} GPU(s) per job." if mode == "gpu" else ".")
    )
    source = ("memory_limit", options.memory_limit) if isinstance(options.memory_limit, int) else ("job_memory", options.job_memory)
    return BatchPlan(mode, kwargs, n_workers, per_job, kwargs["job_name"], spec, notes, source, scheduler_name=scheduler.name)


#: The SLURM deploy's name for the planner (it plans for whichever scheduler ``options.deploy`` names).
make_slurm_plan = make_batch_plan


def choose_mode(device: str, gpus_per_job: int | None, partition_gpus: int) -> str:
    """ "gpu" or "cpu" for a batch session: ``device`` when explicit, else GPU jobs when ``gpus_per_job``
    is set or the partition's nodes have GPUs (as far as the scheduler tells: SLURM's ``sinfo``; 0 elsewhere).

    >>> choose_mode("auto", None, 4), choose_mode("auto", None, 0), choose_mode("cpu", None, 4), choose_mode("auto", 2, 0)
    ('gpu', 'cpu', 'cpu', 'gpu')
    """
    if device in ("gpu", "cpu"):
        return device
    return "gpu" if gpus_per_job or partition_gpus > 0 else "cpu"
