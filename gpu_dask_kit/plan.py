"""Options + detection report -> :class:`WorkerSpec`, the ONE target-neutral description of the workers.

Pure: everything about the machine comes in the :class:`~gpu_dask_kit.environment.EnvironmentReport`
(GPUs, libraries, cores, host memory); nothing here reads the live machine or touches the file system.
Every rule is decided here (and in :mod:`gpu_dask_kit.gpu_plan`) once; the deploy targets only translate
the spec: ``LocalCUDACluster`` / ``LocalCluster`` keywords (:mod:`gpu_dask_kit.deploy.local`) and
``dask cuda worker`` arguments (:mod:`gpu_dask_kit.deploy.slurm_plan`). The plan is made once per start
and carried down; ``scale`` reads :meth:`WorkerSpec.scale_target`, it does not plan again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .environment import EnvironmentReport, LibraryInfo
from .errors import OptionError
from .gpu_plan import check_fractions, choose_allocator, resolve_sizes, rmm_libraries, selected_gpus
from .memory import format_bytes, resolve_size
from .options import OPTION_SPECS, ClusterOptions

__all__ = ["WorkerSpec", "ClusterPlan", "make_plan", "gpu_spec", "client_backends"]

_GPU_ONLY = tuple(name for name, spec in OPTION_SPECS.items() if spec.gpu_only)


#: Share of the GPU the async allocator's pool keeps reserved when idle (see WorkerSpec.rmm_release_threshold).
ASYNC_RELEASE_THRESHOLD = 0.1


@dataclass(frozen=True)
class WorkerSpec:
    """What each worker is, whatever starts it. Sizes are bytes; a float is a fraction still to be
    resolved on the worker's own GPU (SLURM: in the job, by :mod:`gpu_dask_kit.deploy.cuda_worker`)."""

    mode: str  # "gpu" | "cpu"
    n_workers: int
    threads_per_worker: int
    memory_limit: int | str  # host memory per worker in bytes; "auto": dask shares the machine's; 0: no limit
    devices: tuple[str, ...] = ()  # exact CUDA_VISIBLE_DEVICES entries, one per worker; (): CPU, or the job's GPUs
    device_memory_limit: int | float | None = None  # spill device -> host above this; None: no device spilling
    allocator: str = "none"  # "async" | "pool" | "managed" | "managed_pool" | "none" (no RMM resource)
    rmm_pool_size: int | float | None = None
    rmm_maximum_pool_size: int | float | None = None
    enable_cudf_spill: bool = False
    rmm_libraries: tuple[str, ...] = ()  # libraries that allocate through RMM on the workers ("cupy")
    workers_per_unit: int = 1  # scaling adds and removes whole units (a SLURM job of N GPU workers)
    max_workers: int | None = None  # at most this many (one per GPU; CPU: what the cores can run)

    @property
    def device_limit_bytes(self) -> int | None:
        """The spill limit in bytes where this process knows it (what the monitor and the repr show);
        None: no device spilling, or a fraction each SLURM job resolves on its own GPU."""
        limit = self.device_memory_limit
        return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None

    @property
    def rmm_release_threshold(self) -> float | None:
        """The async allocator's pool gives memory back to the GPU above this share of it at each
        synchronisation (RMM's default is never: an idle cluster would keep its high-water mark).
        dask-cuda resolves the fraction on each worker's own GPU, locally and in ``dask cuda worker``."""
        return ASYNC_RELEASE_THRESHOLD if self.allocator == "async" else None

    @property
    def rmm_track_allocations(self) -> bool:
        """Track RMM allocations so the monitor can show "RMM in use" (``get_allocated_bytes``)."""
        return self.allocator != "none"

    @property
    def cudf_spill_stats(self) -> int:
        return 1 if self.enable_cudf_spill else 0  # so the kit can report cuDF's own spilled bytes

    def scale_target(self, n_workers: int) -> int:
        """The workers ``scale(n_workers)`` ends with: whole units, checked against ``max_workers``.

        >>> WorkerSpec("gpu", 2, 1, 0, workers_per_unit=2).scale_target(3)
        4
        """
        target = math.ceil(n_workers / self.workers_per_unit) * self.workers_per_unit
        if self.max_workers is not None and target > self.max_workers:
            what = "one worker per GPU" if self.mode == "gpu" else "worker processes on this machine"
            raise OptionError("n_workers", n_workers, f"at most {self.max_workers} ({what})", "scale to fewer workers")
        return target


@dataclass
class ClusterPlan:
    """What will be started: the worker spec, dask's backends in this process, and why."""

    spec: WorkerSpec
    reason: str  # detection's one-sentence reason
    notes: list[str] = field(default_factory=list)  # what the kit did and why, one line each
    array_backend: str = "numpy"
    dataframe_backend: str = "pandas"

    @property
    def mode(self) -> str:
        return self.spec.mode

    @property
    def n_workers(self) -> int:
        return self.spec.n_workers


#: A worker's memory_limit below this cannot even hold the worker process (a bare 1 means 1 byte).
MIN_WORKER_MEMORY = 64 * 2**20


def _max_cpu_workers(cores: int) -> int:
    """More CPU worker processes than this only thrash a machine with ``cores`` cores."""
    return max(8, 4 * cores)


def _host_memory_limit(options: ClusterOptions, n_workers: int, total: int, notes: list[str]) -> int | str:
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
    if nbytes < MIN_WORKER_MEMORY:
        raise OptionError(
            "memory_limit",
            value,
            f"at least {format_bytes(MIN_WORKER_MEMORY)} per worker (a worker process alone needs about that)",
            "give a size with a unit, e.g. memory_limit='2GiB' (a bare number is bytes), or a fraction such as 0.5",
        )
    if nbytes * n_workers > total:
        notes.append(
            f"memory_limit x n_workers ({format_bytes(nbytes * n_workers)}) is more than this machine's {format_bytes(total)}: "
            "workers may run out of memory before they spill."
        )
    return nbytes


def gpu_spec(options: Any, libraries: dict[str, LibraryInfo], notes: list[str], **fields: Any) -> dict[str, Any]:
    """The GPU fields of a :class:`WorkerSpec` that need no GPU (allocator, libraries through RMM, cuDF
    spilling); sizes stay as given (checked for what needs no GPU). ``fields`` are added as they are."""
    check_fractions(options)
    if options.enable_cudf_spill and not (libraries.get("cudf") and libraries["cudf"].installed):
        raise OptionError(
            "enable_cudf_spill", True, "True only where cuDF is installed", "install gpu-dask-kit[gpu-cu12] (or [gpu-cu13]), or drop enable_cudf_spill"
        )
    allocator = choose_allocator(options, libraries)
    if allocator == "async":
        release = f"above {ASYNC_RELEASE_THRESHOLD:.0%} of the GPU it gives freed memory back at each synchronisation"
        auto = f" (the default: no sizing; {release})" if options.rmm_async is None else ""
        notes.append(f"Each worker allocates with RMM's asynchronous allocator (cudaMallocAsync){auto}.")
    elif allocator in ("managed", "managed_pool"):
        notes.append("Each worker allocates CUDA managed memory through RMM (it can exceed the GPU's memory; slower).")
    return dict(
        allocator=allocator,
        rmm_libraries=rmm_libraries(allocator, libraries, notes),
        enable_cudf_spill=bool(options.enable_cudf_spill),
        device_memory_limit=options.device_memory_limit,
        rmm_pool_size=options.rmm_pool_size,
        rmm_maximum_pool_size=options.rmm_maximum_pool_size,
        **fields,
    )


def _local_gpu_spec(options: ClusterOptions, report: EnvironmentReport, memory: Any, notes: list[str]) -> WorkerSpec:
    selected = selected_gpus(options, report)
    devices = [g for _, g in selected]
    if options.n_workers is not None and options.n_workers > len(devices):
        raise OptionError(
            "n_workers",
            options.n_workers,
            f"at most one worker per GPU ({len(devices)} visible)",
            "leave n_workers unset for one worker per GPU, or use device='cpu' for more CPU workers",
        )
    if options.enable_cudf_spill and any(d.unified_memory for d in devices):
        raise OptionError("enable_cudf_spill", True, "False on a unified-memory GPU (no dedicated device memory to spill from)", "drop enable_cudf_spill")
    n_workers = options.n_workers or len(devices)
    if report.visible_devices is not None:
        notes.append(f"{report.visible_text()}.")
    fields = gpu_spec(options, report.libraries, notes, devices=tuple(e for e, _ in selected), max_workers=len(devices))
    fields.update(resolve_sizes(options, devices, notes))
    used = ", ".join(f"{d.describe()}, {'unified memory' if d.unified_memory else format_bytes(d.memory_total or 0)}" for d in devices[:n_workers])
    notes.append(f"{n_workers} worker(s), one per GPU: {used}.")
    return WorkerSpec("gpu", n_workers, options.threads_per_worker or 1, memory(n_workers), **fields)


def client_backends(worker_mode: str, report: EnvironmentReport, notes: list[str]) -> tuple[str, str]:
    """dask's array and dataframe backends in THIS process for workers of ``worker_mode``: CuPy/cuDF only
    where this process can use them too (a login node or a laptop connected to GPU workers cannot)."""
    if worker_mode != "gpu":
        return "numpy", "pandas"
    if report.mode != "gpu":
        notes.append(
            "This notebook's machine cannot use a GPU, so dask's array and dataframe backends here stay NumPy and pandas "
            f"({report.reason_text}); move data to the GPUs inside tasks (e.g. x.map_blocks(cupy.asarray))."
        )
        return "numpy", "pandas"
    cudf = report.libraries.get("dask_cudf")
    if not (cudf and cudf.installed):
        notes.append("dask-cudf is not installed: dataframes stay pandas-backed (arrays use CuPy).")
        return "cupy", "pandas"
    return "cupy", "cudf"


def make_plan(options: ClusterOptions, report: EnvironmentReport) -> ClusterPlan:
    """Decide the mode and the worker spec; raise :class:`OptionError` for what this machine cannot do.
    Never starts anything."""
    notes: list[str] = []
    if options.device == "gpu" and report.mode != "gpu":
        raise OptionError(
            "device", "gpu", '"gpu" only where a GPU is usable; here: ' + report.reason_text, "use device='auto' (falls back to CPU) or device='cpu'"
        )
    mode = "gpu" if options.device in ("gpu", "auto") and report.mode == "gpu" else "cpu"
    ucxx = report.libraries.get("distributed_ucxx")
    if options.protocol == "ucx" and not (ucxx and ucxx.installed):
        raise OptionError(
            "protocol",
            "ucx",
            '"tcp", or "ucx" when distributed-ucxx is installed',
            "use protocol='tcp' (the default), or install distributed-ucxx for your CUDA version",
        )
    total = report.host_memory_total

    def memory(n_workers: int) -> int | str:
        return _host_memory_limit(options, n_workers, total, notes)

    if mode == "gpu":
        spec = _local_gpu_spec(options, report, memory, notes)
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
        spec = WorkerSpec("cpu", n_workers, options.threads_per_worker or max(1, cores // n_workers), memory(n_workers), max_workers=_max_cpu_workers(cores))
        ignored = [n for n in _GPU_ONLY if n in options.explicit and getattr(options, n) not in (None, False, OPTION_SPECS[n].default)]
        if ignored:
            notes.append("Ignored in CPU mode: " + ", ".join(ignored) + ".")
    array, dataframe = client_backends(mode, report, notes)
    return ClusterPlan(spec, report.reason_text, notes, array, dataframe)
