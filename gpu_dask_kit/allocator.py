"""What a process's GPU memory set-up is (run on workers with ``client.run``). Heavy imports stay inside.

The workers get their RMM resource and CuPy allocator from dask-cuda itself (``RMMSetup``, from the
plan's allocator and ``rmm_allocator_external_lib_list=["cupy"]``, which calls dask-cuda's
``enable_rmm_memory_for_library``). The notebook's own CuPy keeps CuPy's memory pool: RMM has no pool
in that process, so routing CuPy through it there would make every allocation a cudaMalloc.
"""

from __future__ import annotations

__all__ = ["cupy_allocator_name", "rmm_resource_name"]


def cupy_allocator_name() -> str:
    """The qualified name of CuPy's current allocator in this process (run it on workers with client.run).

    Returns "cupy not installed" where CuPy is missing, so it is safe on CPU workers too.
    """
    try:
        import cupy
    except ImportError:
        return "cupy not installed"
    allocator = cupy.cuda.get_allocator()
    func = getattr(allocator, "__func__", allocator)
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def rmm_resource_name() -> str:
    """The class name of the resource that RMM allocates from in this process (e.g. PoolMemoryResource),
    looking through adaptors that only watch it: the kit's workers run under dask-cuda's
    ``TrackingResourceAdaptor`` (``rmm_track_allocations``), which tells nothing of the allocator."""
    try:
        import rmm
    except ImportError:
        return "rmm not installed"
    resource = rmm.mr.get_current_device_resource()
    while type(resource).__name__ in _WATCHING_ADAPTORS and getattr(resource, "upstream_mr", None) is not None:
        resource = resource.upstream_mr
    return type(resource).__name__


#: RMM adaptors that pass every allocation to their upstream resource unchanged (they count or log).
_WATCHING_ADAPTORS = frozenset({"TrackingResourceAdaptor", "StatisticsResourceAdaptor", "LoggingResourceAdaptor"})
