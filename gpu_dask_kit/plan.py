"""Turn checked options plus the detection report into the exact cluster arguments, before anything starts.

This is where the checks that need the machine live (a pool larger than the GPU, a GPU index that does
not exist, UCX without its package). Pure: everything about the machine comes in the
:class:`~gpu_dask_kit.environment.EnvironmentReport` (GPUs, libraries, cores, host memory); nothing here
reads the live machine or touches the file system (``deploy/local.py`` creates ``local_directory``).
It is unit-tested with fake reports of hardware we lack (two GPUs, a 16 GiB device).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .environment import EnvironmentReport
from .errors import OptionError
from .gpu_plan import gpu_kwargs
from .memory import format_bytes, resolve_size
from .options import OPTION_DOCS, ClusterOptions

__all__ = ["ClusterPlan", "make_plan"]

_GPU_ONLY = tuple(name for name, doc in OPTION_DOCS.items() if doc["gpu_only"])


@dataclass
class ClusterPlan:
    """What will be started: the mode, the constructor's keyword arguments and why."""

    mode: str  # "gpu" | "cpu"
    kwargs: dict[str, Any]  # for LocalCUDACluster / LocalCluster
    reason: str  # detection's one-sentence reason
    notes: list[str] = field(default_factory=list)  # what the kit did and why, one line each
    array_backend: str = "numpy"
    dataframe_backend: str = "pandas"
    client_cupy_rmm: bool = False  # route the client's CuPy through RMM after the workers start

    @property
    def n_workers(self) -> int:
        return int(self.kwargs["n_workers"])

    @property
    def backend(self) -> str:
        """The older name of :attr:`mode` ("gpu" | "cpu")."""
        return self.mode


#: A worker's memory_limit below this cannot even hold the worker process (a bare 1 means 1 byte).
_MIN_WORKER_MEMORY = 64 * 2**20


def _max_cpu_workers(cores: int) -> int:
    """More CPU worker processes than this only thrash a machine with ``cores`` cores."""
    return max(8, 4 * cores)


def _host_memory_limit(options: ClusterOptions, n_workers: int, total: int, notes: list[str]) -> Any:
    value = options.memory_limit
    if value is None:
        return 0
    if value == "auto":
        return "auto"
    nbytes = resolve_size(value, total)
    if nbytes > total:
        raise OptionError(
            "memory_limit",
            value,
            f"at most the machine's memory ({format_bytes(total)}) per worker",
            "lower memory_limit, or use 'auto' to share the memory between the workers",
        )
    if nbytes < _MIN_WORKER_MEMORY:
        raise OptionError(
            "memory_limit",
            value,
            f"at least {format_bytes(_MIN_WORKER_MEMORY)} per worker (a worker process alone needs about that)",
            "give a size with a unit, e.g. memory_limit='2GiB' (a bare number is bytes), or a fraction such as 0.5",
        )
    if nbytes * n_workers > total:
        notes.append(
            f"memory_limit x n_workers ({format_bytes(nbytes * n_workers)}) is more than this machine's {format_bytes(total)}: "
            "workers may run out of memory before they spill."
        )
    return nbytes


def make_plan(options: ClusterOptions, report: EnvironmentReport) -> ClusterPlan:
    """Decide the mode and the cluster's arguments; raise :class:`OptionError` for what this machine
    cannot do. Never starts anything."""
    notes: list[str] = []
    if options.device == "gpu" and report.mode != "gpu":
        raise OptionError(
            "device", "gpu", '"gpu" only where a GPU is usable; here: ' + report.reason_text, "use device='auto' (falls back to CPU) or device='cpu'"
        )
    mode = "gpu" if options.device in ("gpu", "auto") and report.mode == "gpu" else "cpu"
    if options.protocol == "ucx" and not (report.libraries.get("distributed_ucxx") and report.libraries["distributed_ucxx"].installed):
        raise OptionError(
            "protocol",
            "ucx",
            '"tcp", or "ucx" when distributed-ucxx is installed',
            "use protocol='tcp' (the default), or install distributed-ucxx for your CUDA version",
        )
    if mode == "gpu":
        kwargs = gpu_kwargs(options, report, notes)
    else:
        cores = report.cpu_count
        n_workers = options.n_workers or max(1, min(4, cores))
        if n_workers > _max_cpu_workers(cores):
            raise OptionError(
                "n_workers",
                options.n_workers,
                f"at most {_max_cpu_workers(cores)} worker processes on this {cores}-core machine",
                "use fewer workers with more threads_per_worker; more processes than cores only add memory and start-up time",
            )
        kwargs = {"n_workers": n_workers, "threads_per_worker": options.threads_per_worker or max(1, cores // n_workers), "processes": True}
        ignored = [n for n in _GPU_ONLY if n in options.explicit and getattr(options, n) not in (None, False)]
        if ignored:
            notes.append("Ignored in CPU mode: " + ", ".join(ignored) + ".")
    kwargs["memory_limit"] = _host_memory_limit(options, kwargs["n_workers"], report.host_memory_total, notes)
    kwargs.update(host=options.host, protocol=options.protocol, dashboard_address=options.dashboard_address)
    if options.dashboard_address is None:
        # The scheduler's HTTP server (health, metrics) still listens: keep it on a free loopback port.
        kwargs.update(dashboard_address=f"{options.host}:0", scheduler_kwargs={"dashboard": False})
    if options.local_directory:
        kwargs["local_directory"] = options.local_directory  # created by deploy/local.py before the start
    libs = report.libraries
    has_cudf = bool(libs.get("dask_cudf") and libs["dask_cudf"].installed)
    plan = ClusterPlan(
        mode=mode,
        kwargs=kwargs,
        reason=report.reason_text,
        notes=notes,
        array_backend="cupy" if mode == "gpu" else "numpy",
        dataframe_backend="cudf" if mode == "gpu" and has_cudf else "pandas",
        client_cupy_rmm=mode == "gpu" and "rmm_allocator_external_lib_list" in kwargs,
    )
    if mode == "gpu" and not has_cudf:
        notes.append("dask-cudf is not installed: dataframes stay pandas-backed (arrays use CuPy).")
    return plan
