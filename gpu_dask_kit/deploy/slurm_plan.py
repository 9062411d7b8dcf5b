"""The pure half of the SLURM deploy: the kit's options -> dask-jobqueue ``SLURMCluster`` keywords.

No SLURM command runs here and nothing is created; :mod:`gpu_dask_kit.deploy.slurm` checks the plan
against ``sinfo`` and submits it.
"""

from __future__ import annotations

import math
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError
from ..memory import format_bytes, parse_size

__all__ = ["SlurmPlan", "make_slurm_plan", "choose_mode", "job_memory_bytes", "DEFAULT_WORKER_MEMORY"]

#: Host memory per worker when neither memory_limit (as a size) nor job_memory says.
DEFAULT_WORKER_MEMORY = {"cpu": 2 * 2**30, "gpu": 16 * 2**30}
_MIN_WORKER_MEMORY = 64 * 2**20


@dataclass
class SlurmPlan:
    """What will be submitted: SLURMCluster keywords, the workers wanted, and why."""

    mode: str  # "gpu" | "cpu"
    kwargs: dict[str, Any]  # for dask_jobqueue.SLURMCluster
    n_workers: int
    workers_per_job: int
    job_name: str
    notes: list[str] = field(default_factory=list)
    memory_option: tuple[str, Any] = ("job_memory", None)  # the option the job's memory came from (for errors)
    reason: str = ""  # where the workers run, one sentence (set once the partition is known)
    array_backend: str = "numpy"  # dask's backends in the notebook (set by the session)
    dataframe_backend: str = "pandas"

    @property
    def job_memory_mib(self) -> int:
        return math.ceil(self.kwargs["memory"] / 2**20)

    @property
    def job_cpus(self) -> int:
        return int(self.kwargs.get("job_cpu") or self.kwargs["cores"])


def _size_arg(value: Any) -> str:
    """A size for a dask-cuda flag: fractions stay fractions (of the GPU), bytes stay bytes."""
    return repr(value) if isinstance(value, float) else str(int(value))


def _gpu_worker_args(options: Any, cupy_through_rmm: bool, rmm: bool, notes: list[str]) -> list[str]:
    args = ["--device-memory-limit", "0" if options.device_memory_limit is None else _size_arg(options.device_memory_limit)]
    pool = options.rmm_pool_size
    use_async = options.rmm_async if options.rmm_async is not None else pool is None and rmm  # None = "auto"
    if not rmm:
        wanted = [n for n in ("rmm_pool_size", "rmm_async", "rmm_managed_memory") if getattr(options, n)]
        if wanted:
            raise OptionError(
                wanted[0],
                getattr(options, wanted[0]),
                "an RMM setting only when RMM is installed (the worker jobs run this Python)",
                "install gpu-dask-kit[gpu-cu12] (or [gpu-cu13]), or drop the RMM option",
            )
        notes.append("RMM is not installed: the GPU workers use CUDA's default allocator (install gpu-dask-kit[gpu-cu12] for RMM).")
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
            raise OptionError(
                "memory_limit", limit, f"at most job_memory / workers per job ({format_bytes(job_memory // per_job)})", "lower memory_limit or raise job_memory"
            )
        memory = limit
    elif job_memory is not None:
        memory = job_memory // per_job
    else:
        memory = DEFAULT_WORKER_MEMORY[mode]
        notes.append(f"Each worker gets {memory // 2**30} GiB of host memory (set job_memory or memory_limit to change it).")
    if memory < _MIN_WORKER_MEMORY:
        raise OptionError("job_memory", options.job_memory, f"at least {_MIN_WORKER_MEMORY // 2**20} MiB per worker", "give a size with a unit, e.g. '2GiB'")
    return memory


def make_slurm_plan(
    options: Any,
    mode: str,
    *,
    job_name: str | None = None,
    cupy_through_rmm: bool = False,
    python: str | None = None,
    log_directory: str | None = None,
    rmm: bool = True,
) -> SlurmPlan:
    """SLURMCluster keywords for ``options`` (a ``ClusterOptions``) in ``mode`` "gpu" or "cpu". Pure.

    GPU: ``gpus_per_job`` GPUs per job (default 1), one ``dask cuda worker`` per GPU. CPU: one
    ``dask worker`` per job. ``n_workers`` counts workers (default: one job's worth). ``rmm``: RMM is
    installed in the jobs' Python (else the RMM options are refused and "auto" means no RMM).
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
        "account": options.account,
        "walltime": options.walltime,
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
    if options.job_cores is not None:
        kwargs["job_cpu"] = options.job_cores
    job_memory = job_memory_bytes(options.job_memory)
    if job_memory is not None:
        kwargs["job_mem"] = f"{math.ceil(job_memory / 2**20)}M"
    if mode == "gpu":
        kwargs["worker_command"] = "dask cuda worker"
        worker_args += _gpu_worker_args(options, cupy_through_rmm, rmm, notes)
        extra.insert(0, f"--gres=gpu:{per_job}")
    kwargs["worker_extra_args"] = worker_args
    kwargs["job_extra_directives"] = extra
    jobs = math.ceil((options.n_workers or per_job) / per_job)
    n_workers = jobs * per_job  # dask-jobqueue submits whole jobs
    if options.n_workers and n_workers != options.n_workers:
        notes.append(f"n_workers={options.n_workers} rounded up to {n_workers}: whole jobs of {per_job} GPU worker(s).")
    notes.append(
        f"{n_workers} worker(s) in {jobs} SLURM job(s) of {per_job} worker(s), {threads} thread(s) each"
        + (f", {per_job} GPU(s) per job." if mode == "gpu" else ".")
    )
    source = ("memory_limit", options.memory_limit) if isinstance(options.memory_limit, int) else ("job_memory", options.job_memory)
    return SlurmPlan(mode, kwargs, n_workers, per_job, kwargs["job_name"], notes, source)


def choose_mode(device: str, gpus_per_job: int | None, partition_gpus: int) -> str:
    """ "gpu" or "cpu" for a SLURM session: ``device`` when explicit, else GPU jobs when ``gpus_per_job``
    is set or the partition's nodes have GPUs.

    >>> choose_mode("auto", None, 4), choose_mode("auto", None, 0), choose_mode("cpu", None, 4), choose_mode("auto", 2, 0)
    ('gpu', 'cpu', 'cpu', 'gpu')
    """
    if device in ("gpu", "cpu"):
        return device
    return "gpu" if gpus_per_job or partition_gpus > 0 else "cpu"
