"""The GPU half of :func:`gpu_dask_kit.plan.make_plan`: which GPUs, how much of them, which allocator.

Pure, like :mod:`gpu_dask_kit.plan`: everything about the machine comes from the
:class:`~gpu_dask_kit.environment.EnvironmentReport`. The checks here are those that would otherwise fail
inside ``LocalCUDACluster`` or at worker start (issue 11 e), made before anything starts.
"""

from __future__ import annotations

from typing import Any

from .environment import EnvironmentReport, GPUInfo, find_gpu
from .errors import OptionError
from .memory import align_pool_size, describe_size, format_bytes, resolve_size
from .options import ClusterOptions

__all__ = ["gpu_kwargs", "selected_gpus", "headroom"]

_GPU_EXTRA = "install gpu-dask-kit[gpu-cu12] (or [gpu-cu13])"


def headroom(total: int) -> int:
    """GPU memory a pool must leave free for the worker's CUDA context and the cuDF/CuPy workspaces."""
    return max(512 * 2**20, total // 20)


def selected_gpus(options: ClusterOptions, report: EnvironmentReport) -> list[tuple[str, GPUInfo]]:
    """``(CUDA_VISIBLE_DEVICES entry, GPU)`` for each GPU the workers get, in order.

    Starts from the GPUs this process may use (its own CUDA_VISIBLE_DEVICES, by index or UUID, passed
    on unchanged); the ``CUDA_VISIBLE_DEVICES`` option picks among those."""
    visible = list(report.visible_gpus)
    if options.CUDA_VISIBLE_DEVICES is None:
        return visible
    chosen = []
    known = ", ".join(entry for entry, _ in visible) or "none"
    for item in options.CUDA_VISIBLE_DEVICES.split(","):
        gpu = find_gpu(report.gpus, item)
        if gpu is None or not any(g is gpu for _, g in visible):
            limited = f" (this process's CUDA_VISIBLE_DEVICES allows only {known})" if report.visible_devices is not None else ""
            raise OptionError(
                "CUDA_VISIBLE_DEVICES",
                options.CUDA_VISIBLE_DEVICES,
                f"GPU indices or UUIDs of this machine{limited} (indices: {known})",
                "see `gpu-dask-kit doctor` for the GPUs here, or leave CUDA_VISIBLE_DEVICES unset to use all",
            )
        chosen.append((item.strip(), gpu))
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


def _pool_bytes(name: str, value: Any, gpus: list[GPUInfo]) -> int:
    """A pool size in bytes that fits in the FREE memory of every selected GPU, with headroom."""
    if any(g.unified_memory for g in gpus):
        if isinstance(value, float):
            what = "a size in bytes on a unified-memory GPU (it has no device memory to take a fraction of)"
            raise OptionError(name, value, what, "give a size such as '8GiB'")
        return align_pool_size(int(value))
    smallest = min(gpus, key=lambda g: g.memory_total or 0)
    assert smallest.memory_total is not None
    nbytes = align_pool_size(_device_bytes(name, value, smallest.memory_total, smallest))
    for gpu in gpus:
        total, free = gpu.memory_total or 0, gpu.memory_free or 0
        room = max(0, free - headroom(total))
        if nbytes > room:
            raise OptionError(
                name,
                value,
                f"at most the GPU's free memory minus {format_bytes(headroom(total))} for the CUDA context and workspaces: "
                f"{format_bytes(room)} on GPU {gpu.index} ({gpu.name}, {format_bytes(free)} free of {format_bytes(total)})",
                "lower it, free the GPU (other processes use it: see nvidia-smi), or use rmm_async=True, which needs no sizing",
            )
    return nbytes


def _device_limit(options: ClusterOptions, gpus: list[GPUInfo], notes: list[str]) -> Any:
    if any(g.unified_memory for g in gpus):
        if options.device_memory_limit is None:
            notes.append("No device-to-host spilling (device_memory_limit='off').")
            return 0
        if "device_memory_limit" in options.explicit:
            raise OptionError(
                "device_memory_limit",
                options.device_memory_limit,
                "'off' (None) on a unified-memory GPU: it has no dedicated device memory to spill from",
                "leave device_memory_limit unset (dask-cuda then decides) or set it to None",
            )
        notes.append("Unified-memory GPU: dask-cuda's own default for device_memory_limit (no device spilling there).")
        return "default"
    if options.device_memory_limit is None:
        notes.append("No device-to-host spilling (device_memory_limit='off').")
        return 0
    smallest = min(gpus, key=lambda g: g.memory_total or 0)
    limit = _device_bytes("device_memory_limit", options.device_memory_limit, smallest.memory_total or 0, smallest)
    notes.append(f"Each worker spills GPU data to host memory above {format_bytes(limit)} ({describe_size(options.device_memory_limit)}).")
    return limit


def _allocator(options: ClusterOptions, report: EnvironmentReport, gpus: list[GPUInfo], kwargs: dict[str, Any], notes: list[str]) -> None:
    """RMM settings. ``rmm_async=None`` is "auto": RMM's async allocator unless a pool or managed memory
    is asked for (issue 11 f); LocalCUDACluster always gets a real bool."""
    rmm = report.libraries.get("rmm")
    has_rmm = bool(rmm and rmm.installed)
    wants_rmm = options.rmm_pool_size is not None or options.rmm_async or options.rmm_managed_memory
    if wants_rmm and not has_rmm:
        name = "rmm_pool_size" if options.rmm_pool_size is not None else ("rmm_async" if options.rmm_async else "rmm_managed_memory")
        raise OptionError(name, getattr(options, name), "an RMM setting only when RMM is installed", f"{_GPU_EXTRA}, or drop the RMM option")
    use_async = options.rmm_async
    if use_async is None:
        use_async = has_rmm and options.rmm_pool_size is None and not options.rmm_managed_memory
        if not has_rmm:
            notes.append(f"RMM is not installed: CuPy allocates with cudaMalloc; {_GPU_EXTRA} for RMM's async allocator.")
    kwargs["rmm_async"] = bool(use_async)
    kwargs["rmm_managed_memory"] = options.rmm_managed_memory
    if options.rmm_pool_size is not None:
        pool = _pool_bytes("rmm_pool_size", options.rmm_pool_size, gpus)
        kwargs["rmm_pool_size"] = pool
        note = f"Each worker allocates through an RMM pool of {format_bytes(pool)}"
        if options.rmm_maximum_pool_size is not None:
            maximum = _pool_bytes("rmm_maximum_pool_size", options.rmm_maximum_pool_size, gpus)
            if maximum < pool:
                raise OptionError("rmm_maximum_pool_size", options.rmm_maximum_pool_size, f"at least rmm_pool_size ({format_bytes(pool)})", "raise the maximum")
            kwargs["rmm_maximum_pool_size"] = maximum
            note += f", growing up to {format_bytes(maximum)}"
        notes.append(note + ".")
    elif use_async:
        auto = " (the default: no sizing, memory given back at close)" if options.rmm_async is None else ""
        notes.append(f"Each worker allocates with RMM's asynchronous allocator (cudaMallocAsync){auto}.")
    cupy = report.libraries.get("cupy")
    if has_rmm and cupy and cupy.installed:
        kwargs["rmm_allocator_external_lib_list"] = ["cupy"]
        notes.append("CuPy allocates through RMM on every worker and in this notebook.")


def gpu_kwargs(options: ClusterOptions, report: EnvironmentReport, notes: list[str]) -> dict[str, Any]:
    """LocalCUDACluster's keyword arguments (all but the host-side ones) for ``options`` on ``report``."""
    selected = selected_gpus(options, report)
    gpus = [g for _, g in selected]
    if options.n_workers is not None and options.n_workers > len(gpus):
        raise OptionError(
            "n_workers",
            options.n_workers,
            f"at most one worker per GPU ({len(gpus)} visible)",
            "leave n_workers unset for one worker per GPU, or use device='cpu' for more CPU workers",
        )
    if options.enable_cudf_spill:
        cudf = report.libraries.get("cudf")
        if not (cudf and cudf.installed):
            raise OptionError("enable_cudf_spill", True, "True only where cuDF is installed", f"{_GPU_EXTRA}, or drop enable_cudf_spill")
        if any(g.unified_memory for g in gpus):
            raise OptionError("enable_cudf_spill", True, "False on a unified-memory GPU (no dedicated device memory to spill from)", "drop enable_cudf_spill")
    n_workers = options.n_workers or len(gpus)
    kwargs: dict[str, Any] = {
        "n_workers": n_workers,
        "threads_per_worker": options.threads_per_worker or 1,
        "CUDA_VISIBLE_DEVICES": ",".join(entry for entry, _ in selected),
        "enable_cudf_spill": options.enable_cudf_spill,
    }
    if options.enable_cudf_spill:
        kwargs["cudf_spill_stats"] = 1  # so the kit can report cuDF's own spilled bytes
    if report.visible_devices is not None:
        notes.append(f"{report.visible_text()}.")
    kwargs["device_memory_limit"] = _device_limit(options, gpus, notes)
    _allocator(options, report, gpus, kwargs, notes)
    used = ", ".join(f"GPU {g.index} ({g.name}, {'unified memory' if g.unified_memory else format_bytes(g.memory_total or 0)})" for g in gpus[:n_workers])
    notes.append(f"{n_workers} worker(s), one per GPU: {used}.")
    return kwargs
