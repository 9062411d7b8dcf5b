"""Process-side GPU memory set-up: route CuPy through RMM. Heavy imports stay inside the functions.

The workers get their RMM resource and CuPy allocator from dask-cuda itself (``rmm_pool_size`` /
``rmm_async`` / ``rmm_allocator_external_lib_list=["cupy"]``); the client process needs its own call,
made only after the workers exist so that no CUDA context is created here before them.
"""

from __future__ import annotations

__all__ = ["use_rmm_for_cupy", "cupy_allocator_name"]


def use_rmm_for_cupy() -> None:
    """Make CuPy allocate through RMM's current device resource in this process."""
    import cupy
    from rmm.allocators.cupy import rmm_cupy_allocator

    cupy.cuda.set_allocator(rmm_cupy_allocator)


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
    """The class name of RMM's current device memory resource in this process (e.g. PoolMemoryResource)."""
    try:
        import rmm
    except ImportError:
        return "rmm not installed"
    return type(rmm.mr.get_current_device_resource()).__name__
