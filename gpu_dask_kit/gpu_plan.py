"""The GPU rules of :mod:`gpu_dask_kit.plan`: which GPUs, how much of them, which allocator.

Pure, like :mod:`gpu_dask_kit.plan`: everything about the machine comes from the
:class:`~gpu_dask_kit.environment.EnvironmentReport` (or, in a SLURM job, from the job's own report:
:mod:`gpu_dask_kit.deploy.cuda_worker`). Every rule is decided here once, for every target: async vs
pool vs managed, which libraries go through RMM, alignment, fractions, the room a pool must leave, the
unified-memory and MIG cases. The checks are those that would otherwise fail inside dask-cuda at worker
start, made before anything starts.
"""

from __future__ import annotations

import getpass
import sys
import zlib
from typing import Any

from .environment import EnvironmentReport, GPUInfo, LibraryInfo, exact_entry, matching_gpus
from .errors import OptionError
from .memory import align_pool_size, describe_size, format_bytes, resolve_size
from .options import ClusterOptions

__all__ = [
    "selected_gpus",
    "shared_gpus",
    "sharing_notes",
    "headroom",
    "choose_allocator",
    "rmm_libraries",
    "check_fractions",
    "resolve_sizes",
    "MAX_POOL_FRACTION",
]

_GPU_EXTRA = "install gpu-dask-kit[gpu-cu12] (or [gpu-cu13])"
#: A pool fraction above this never fits: the pool must leave ``headroom`` (at least 1/20 of the GPU).
MAX_POOL_FRACTION = 0.95


def headroom(total: int) -> int:
    """GPU memory a pool must leave free for the worker's CUDA context and the cuDF/CuPy workspaces."""
    return max(512 * 2**20, total // 20)


def selected_gpus(options: ClusterOptions, report: EnvironmentReport) -> list[tuple[str, GPUInfo]]:
    """``(CUDA_VISIBLE_DEVICES entry, device)`` for each worker, in order; entries are exact (a UUID
    prefix becomes the UUID) and a MIG-enabled GPU named by index gets its first slice's MIG UUID.

    Starts from the GPUs this process may use (its own CUDA_VISIBLE_DEVICES); the ``CUDA_VISIBLE_DEVICES``
    option picks among those."""
    visible = list(report.visible_gpus)
    chosen = visible
    if options.CUDA_VISIBLE_DEVICES is not None:
        chosen = []
        known = ", ".join(entry for entry, _ in visible) or "none"
        for item in options.CUDA_VISIBLE_DEVICES.split(","):
            found = matching_gpus(report.gpus, item)
            if len(found) > 1:
                names = ", ".join(g.uuid for g in found)
                raise OptionError(
                    "CUDA_VISIBLE_DEVICES",
                    options.CUDA_VISIBLE_DEVICES,
                    f"entries that name one GPU each ({item.strip()!r} fits more than one GPU: {names})",
                    "give more of the UUID",
                )
            if not found or not any(g is found[0] for _, g in visible):
                limited = f" (this process's CUDA_VISIBLE_DEVICES allows only {known})" if report.visible_devices is not None else ""
                raise OptionError(
                    "CUDA_VISIBLE_DEVICES",
                    options.CUDA_VISIBLE_DEVICES,
                    f"GPU indices, GPU-... or MIG-... UUIDs of this machine{limited} (indices: {known})",
                    "see `gpu-dask-kit doctor` for the GPUs here, or leave CUDA_VISIBLE_DEVICES unset to use all",
                )
            chosen.append((exact_entry(item, found[0]), found[0]))
    if options.CUDA_VISIBLE_DEVICES is None and options.gpus_per_user is not None:
        chosen = shared_gpus(chosen, options.gpus_per_user, options.gpu_assignment, getpass.getuser())
    return [(gpu.mig[0].uuid, gpu.mig[0]) if gpu.mig else (entry, gpu) for entry, gpu in chosen]


def shared_gpus(visible: list[tuple[str, GPUInfo]], count: int, rule: str, user: str) -> list[tuple[str, GPUInfo]]:
    """The ``count`` GPUs of one user on a shared machine (the instructor's ``gpus_per_user``), in index order:
    'least-loaded' takes those whose other processes hold the least memory (then the fewest processes);
    'by-user' takes ``count`` consecutive GPUs from a place fixed by the user name (the same every time).

    >>> gpus = [(str(i), GPUInfo(i, "G", f"GPU-{i}", 16, 16 - used, others=((100 + i, used),) if used else ())) for i, used in enumerate([8, 0, 4, 0])]
    >>> [e for e, _ in shared_gpus(gpus, 2, "least-loaded", "ann")], [e for e, _ in shared_gpus(gpus, 2, "by-user", "ann")]
    (['1', '3'], ['0', '3'])
    """
    if count > len(visible):
        raise OptionError("gpus_per_user", count, f"at most the {len(visible)} GPU(s) this process may use", "lower gpus_per_user (an instructor setting)")
    if rule == "by-user":
        start = zlib.crc32(user.encode()) % len(visible)
        picked = [visible[(start + i) % len(visible)] for i in range(count)]
    else:
        picked = sorted(visible, key=lambda e: (e[1].others_bytes, len(e[1].others), e[1].index))[:count]
    return sorted(picked, key=lambda e: e[1].index)


def sharing_notes(options: Any, devices: list[GPUInfo], notes: list[str]) -> None:
    """Say which GPUs a shared machine's rule gave this user, and warn where other processes use them
    (``options`` of a SLURM job's worker, which carry only the sizes, have no sharing rule)."""
    per_user = options.gpus_per_user if isinstance(options, ClusterOptions) else None
    if per_user is not None:
        names = ", ".join(f"GPU {d.index}" for d in devices)
        notes.append(f"Shared machine: {per_user} GPU(s) per user ({options.gpu_assignment}): {names}.")
    for device in devices:
        if device.others:
            pids = ", ".join(str(pid) for pid, _ in device.others)
            notes.append(
                f"Warning: {device.describe()} is in use by {len(device.others)} other process(es) (PIDs {pids}, "
                f"{format_bytes(device.others_bytes)}): another user may be on it, so sizes are taken of its "
                f"{format_bytes(device.memory_free or 0)} free. "
                + ("" if per_user is not None else "An instructor can give each user their own GPUs with gpus_per_user.")
            )


def _base(device: GPUInfo) -> int:
    """What a fraction of a GPU is taken of: its free memory when other processes use it, else all of it."""
    total = device.memory_total or 0
    return min(total, device.memory_free or 0) if device.others else total


def choose_allocator(options: Any, libraries: dict[str, LibraryInfo]) -> str:
    """ "async" | "pool" | "managed" | "managed_pool" | "none": what RMM does on each worker.

    ``rmm_async=None`` is "auto": RMM's async allocator unless a pool or managed memory is asked for
    (never async together with managed memory: dask-cuda's RMMSetup refuses that)."""
    rmm = libraries.get("rmm")
    if not (rmm and rmm.installed):
        wanted = [n for n in ("rmm_pool_size", "rmm_async", "rmm_managed_memory") if getattr(options, n) not in (None, False)]
        if wanted:
            raise OptionError(wanted[0], getattr(options, wanted[0]), "an RMM setting only when RMM is installed", f"{_GPU_EXTRA}, or drop the RMM option")
        return "none"
    if options.rmm_managed_memory:
        return "managed_pool" if options.rmm_pool_size is not None else "managed"
    if options.rmm_pool_size is not None:
        return "pool"
    return "none" if options.rmm_async is False else "async"


def rmm_libraries(allocator: str, libraries: dict[str, LibraryInfo], notes: list[str]) -> tuple[str, ...]:
    """The libraries the workers route through RMM: CuPy, only where RMM has a resource of its own
    (without one, RMM's default is cudaMalloc/cudaFree per allocation and CuPy would lose its pool)."""
    cupy = libraries.get("cupy")
    if allocator == "none":
        rmm = libraries.get("rmm")
        why = "no RMM allocator was asked for (rmm_async=False, no pool)" if rmm and rmm.installed else f"RMM is not installed ({_GPU_EXTRA} for RMM)"
        cudf = libraries.get("cudf")
        if cudf and cudf.installed:
            # dask-cuda's CUDFSetup plugin imports cuDF on every worker at start, and cuDF's import
            # calls cupy.cuda.set_allocator(rmm_cupy_allocator), whatever the kit asked for.
            notes.append(
                f"CuPy allocates through RMM's default resource on the workers, one cudaMalloc per array: {why}, and "
                "dask-cuda imports cuDF on every worker at start, which routes CuPy through RMM. For speed, leave "
                "rmm_async at its default (True) or give rmm_pool_size."
            )
            return ()
        notes.append(f"CuPy keeps its own memory pool on the workers: {why}.")
        return ()
    if not (cupy and cupy.installed):
        return ()
    what = {
        "async": "through RMM's asynchronous allocator (cudaMallocAsync)",
        "pool": "from the RMM pool",
        "managed": "CUDA managed memory through RMM (one cudaMallocManaged per allocation, no pool: slower, but data may exceed the GPU)",
        "managed_pool": "from the RMM pool of managed memory",
    }[allocator]
    notes.append(f"CuPy allocates {what} on every worker; {_notebook_cupy()}.")
    return ("cupy",)


def _notebook_cupy() -> str:
    """What CuPy allocates from in this process: its own pool, unless cuDF was imported here (cuDF's
    ``__init__`` calls ``cupy.cuda.set_allocator(rmm_cupy_allocator)``: one cudaMalloc per array
    through RMM's default resource, the notebook has no pool)."""
    if "cudf" in sys.modules:
        return "in this notebook cuDF, imported here, routes it through RMM (cuDF does that at import)"
    return "in this notebook it keeps its own memory pool until cuDF is imported here (cuDF routes CuPy through RMM at import)"


def check_fractions(options: Any) -> None:
    """The size checks that need no GPU (every target, before anything starts)."""
    for name in ("rmm_pool_size", "rmm_maximum_pool_size"):
        value = getattr(options, name)
        if isinstance(value, float) and value > MAX_POOL_FRACTION:
            raise OptionError(
                name,
                value,
                f"at most {MAX_POOL_FRACTION} of the GPU (a pool must leave at least 1/20 of it free for the CUDA context and workspaces)",
                "lower it, or use rmm_async=True, which needs no sizing",
            )
        if isinstance(value, int) and value < _SMALLEST_POOL:
            _too_small_pool(name, value, value)


def _too_small_pool(name: str, value: Any, nbytes: int) -> None:
    """Below 1 MiB RMM's 256-byte alignment made '--rmm-pool-size 0': no pool at all, and no error."""
    raise OptionError(
        name,
        value,
        f"a pool of at least {format_bytes(_SMALLEST_POOL)} ({value!r} is {nbytes} bytes)",
        "give a size with its unit such as '8GiB' or a fraction such as 0.5",
    )


def _device_bytes(name: str, value: Any, device: GPUInfo) -> int:
    total = device.memory_total or 0
    nbytes = resolve_size(value, _base(device))
    if nbytes > total:
        raise OptionError(
            name,
            value,
            f"at most the GPU's memory ({format_bytes(total)} on {device.describe()}), or a fraction such as 0.8",
            "lower it, or give a fraction of the GPU",
        )
    return nbytes


def _pool_bytes(name: str, value: Any, devices: list[GPUInfo]) -> int:
    """A pool size in bytes that fits in the FREE memory of every device, with headroom, and of at
    least 1 MiB (below that, RMM's 256-byte alignment made '--rmm-pool-size 0': no pool at all)."""
    nbytes = _fitting_pool_bytes(name, value, devices)
    if nbytes < _SMALLEST_POOL:
        _too_small_pool(name, value, nbytes)
    return nbytes


_SMALLEST_POOL = 2**20


def _fitting_pool_bytes(name: str, value: Any, devices: list[GPUInfo]) -> int:
    if any(d.unified_memory for d in devices):
        if isinstance(value, float):
            raise OptionError(
                name, value, "a size in bytes on a unified-memory GPU (it has no device memory to take a fraction of)", "give a size such as '8GiB'"
            )
        return align_pool_size(int(value))
    smallest = min(devices, key=_base)
    nbytes = align_pool_size(_device_bytes(name, value, smallest))
    for device in devices:
        total, free = device.memory_total or 0, device.memory_free or 0
        room = max(0, free - headroom(total))
        if nbytes > room:
            raise OptionError(
                name,
                value,
                f"at most the GPU's free memory minus {format_bytes(headroom(total))} for the CUDA context and workspaces: "
                f"{format_bytes(room)} on {device.describe()}, {format_bytes(free)} free of {format_bytes(total)}",
                "lower it, free the GPU (other processes use it: see nvidia-smi), or use rmm_async=True, which needs no sizing",
            )
    return nbytes


def resolve_sizes(options: Any, devices: list[GPUInfo], notes: list[str]) -> dict[str, int | None]:
    """``device_memory_limit``, ``rmm_pool_size`` and ``rmm_maximum_pool_size`` in bytes for workers on
    ``devices`` (a fraction is taken of the smallest; pools aligned to 256 bytes and checked against the
    free memory). ``device_memory_limit`` None: no device-to-host spilling (also on unified memory)."""
    check_fractions(options)
    sharing_notes(options, devices, notes)
    sizes: dict[str, int | None] = {"device_memory_limit": None, "rmm_pool_size": None, "rmm_maximum_pool_size": None}
    if any(d.unified_memory for d in devices):
        if options.device_memory_limit is not None and "device_memory_limit" in options.explicit:
            raise OptionError(
                "device_memory_limit",
                options.device_memory_limit,
                "'off' (None) on a unified-memory GPU: it has no dedicated device memory to spill from",
                "leave device_memory_limit unset or set it to None",
            )
        notes.append("Unified-memory GPU: no device-to-host spilling (there is no dedicated device memory to spill from).")
    elif options.device_memory_limit is None:
        notes.append("No device-to-host spilling (device_memory_limit='off').")
    else:
        smallest = min(devices, key=_base)
        limit = _device_bytes("device_memory_limit", options.device_memory_limit, smallest)
        sizes["device_memory_limit"] = limit
        notes.append(f"Each worker spills GPU data to host memory above {format_bytes(limit)} ({describe_size(options.device_memory_limit)}).")
    if options.rmm_pool_size is not None:
        pool = sizes["rmm_pool_size"] = _pool_bytes("rmm_pool_size", options.rmm_pool_size, devices)
        note = f"Each worker allocates through an RMM pool of {format_bytes(pool)}"
        if options.rmm_maximum_pool_size is not None:
            maximum = _pool_bytes("rmm_maximum_pool_size", options.rmm_maximum_pool_size, devices)
            if maximum < pool:
                raise OptionError("rmm_maximum_pool_size", options.rmm_maximum_pool_size, f"at least rmm_pool_size ({format_bytes(pool)})", "raise the maximum")
            sizes["rmm_maximum_pool_size"] = maximum
            note += f", growing up to {format_bytes(maximum)}"
        notes.append(note + ".")
    return sizes
