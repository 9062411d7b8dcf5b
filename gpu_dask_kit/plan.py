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

from .environment import EnvironmentReport, GPUInfo
from .errors import OptionError
from .memory import align_pool_size, describe_size, format_bytes, resolve_size
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


def _selected_gpus(options: ClusterOptions, report: EnvironmentReport) -> list[GPUInfo]:
    if options.CUDA_VISIBLE_DEVICES is None:
        return list(report.gpus)
    chosen = []
    known = ", ".join(str(g.index) for g in report.gpus) or "none"
    for item in options.CUDA_VISIBLE_DEVICES.split(","):
        match = [g for g in report.gpus if (item.isdigit() and g.index == int(item)) or g.uuid == item]
        if not match:
            raise OptionError(
                "CUDA_VISIBLE_DEVICES",
                options.CUDA_VISIBLE_DEVICES,
                f"GPU indices or UUIDs of this machine (indices: {known})",
                "see `gpu-dask-kit doctor` for the GPUs here, or leave CUDA_VISIBLE_DEVICES unset to use all",
            )
        chosen.append(match[0])
    return chosen


def _device_bytes(name: str, value: Any, total: int, device: GPUInfo) -> int:
    nbytes = resolve_size(value, total)
    if nbytes > total:
        raise OptionError(
            name,
            value,
            f"at most the GPU's memory ({format_bytes(total)} on GPU {device.index}, {device.name}), or a fraction such as 0.8",
            "lower it, or give a fraction of the GPU",
        )
    return nbytes


def _gpu_kwargs(options: ClusterOptions, report: EnvironmentReport, plan_notes: list[str]) -> dict[str, Any]:
    gpus = _selected_gpus(options, report)
    smallest = min(gpus, key=lambda g: g.memory_total)
    total = smallest.memory_total
    libs = report.libraries
    if options.n_workers is not None and options.n_workers > len(gpus):
        raise OptionError(
            "n_workers",
            options.n_workers,
            f"at most one worker per GPU ({len(gpus)} visible)",
            "leave n_workers unset for one worker per GPU, or use device='cpu' for more CPU workers",
        )
    n_workers = options.n_workers or len(gpus)
    kwargs: dict[str, Any] = {
        "n_workers": n_workers,
        "threads_per_worker": options.threads_per_worker or 1,
        "CUDA_VISIBLE_DEVICES": ",".join(str(g.index) for g in gpus),
        "rmm_async": options.rmm_async,
        "rmm_managed_memory": options.rmm_managed_memory,
        "enable_cudf_spill": options.enable_cudf_spill,
    }
    if options.device_memory_limit is None:
        kwargs["device_memory_limit"] = 0
        plan_notes.append("No device-to-host spilling (device_memory_limit='off').")
    else:
        limit = _device_bytes("device_memory_limit", options.device_memory_limit, total, smallest)
        kwargs["device_memory_limit"] = limit
        plan_notes.append(f"Each worker spills GPU data to host memory above {format_bytes(limit)} ({describe_size(options.device_memory_limit)}).")
    wants_rmm = options.rmm_pool_size is not None or options.rmm_async or options.rmm_managed_memory
    rmm = libs.get("rmm")
    if wants_rmm and not (rmm and rmm.installed):
        name = "rmm_pool_size" if options.rmm_pool_size is not None else ("rmm_async" if options.rmm_async else "rmm_managed_memory")
        raise OptionError(
            name, getattr(options, name), "an RMM setting only when RMM is installed", "install gpu-dask-kit[gpu-cu12] (or [gpu-cu13]), or drop the RMM option"
        )
    if options.rmm_pool_size is not None:
        pool = align_pool_size(_device_bytes("rmm_pool_size", options.rmm_pool_size, total, smallest))
        kwargs["rmm_pool_size"] = pool
        note = f"Each worker allocates through an RMM pool of {format_bytes(pool)}"
        if options.rmm_maximum_pool_size is not None:
            maximum = align_pool_size(_device_bytes("rmm_maximum_pool_size", options.rmm_maximum_pool_size, total, smallest))
            if maximum < pool:
                raise OptionError("rmm_maximum_pool_size", options.rmm_maximum_pool_size, f"at least rmm_pool_size ({format_bytes(pool)})", "raise the maximum")
            kwargs["rmm_maximum_pool_size"] = maximum
            note += f", growing up to {format_bytes(maximum)}"
        plan_notes.append(note + ".")
    elif options.rmm_async:
        plan_notes.append("Each worker allocates with RMM's asynchronous allocator (cudaMallocAsync).")
    cupy = libs.get("cupy")
    if rmm and rmm.installed and cupy and cupy.installed:
        kwargs["rmm_allocator_external_lib_list"] = ["cupy"]
        plan_notes.append("CuPy allocates through RMM on every worker and in this notebook.")
    used = ", ".join(f"GPU {g.index} ({g.name}, {format_bytes(g.memory_total)})" for g in gpus[:n_workers])
    plan_notes.append(f"{n_workers} worker(s), one per GPU: {used}.")
    return kwargs


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
        kwargs = _gpu_kwargs(options, report, notes)
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
