"""The memory figures a GPU worker reports at each heartbeat: each means one thing, and reading them
changes no library state.

============================  =====================================================================
figure                        meaning and source
============================  =====================================================================
``device_data``               bytes of task results the worker holds ON the device in dask-cuda's
                              store (``DeviceHostFile.device_buffer``: its LRU's ``total_weight``,
                              or the sizes of its values when there is no spill limit), plus the
                              unspilled part of cuDF-managed objects (``DeviceHostFile.others``)
``device_memory_limit``       the store's spill limit (``device_buffer.n``); None when there is none
                              (``device_memory_limit`` off, or a unified-memory GPU: no DeviceHostFile)
``spilled_to_host``           bytes that left the device and sit in host memory: the store's
                              device-serialized values (keys in ``device_keys`` found in the host
                              LRU, at its weights) plus the buffers cuDF's own spilling moved
``spilled_to_disk``           bytes on disk in the worker's store, whatever their origin: distributed's
                              ``spilled_total`` where the store has it, else the files under
                              ``DeviceHostFile.disk_func_path`` (device-serialized values that moved
                              on from host to disk stay counted here)
``rmm_used``                  bytes allocated through RMM now (``get_allocated_bytes`` of a tracking
                              adaptor, ``rmm_track_allocations=True``); None when nothing tracks them
``rmm_pool_size``             bytes the RMM pool has reserved from the device (``pool_size()`` of a
                              ``PoolMemoryResource``); None for the async allocator (CUDA's pool
                              cannot be read through RMM) and without a pool
============================  =====================================================================

NVML's used memory is a figure of the whole GPU (all processes, the pools' reservations, CUDA contexts):
the monitor shows it only as "GPU total in use"; it comes from distributed's own ``gpu_memory_used``.

cuDF's spill manager is read only after dask-cuda has created it: ``get_global_manager()`` *creates* the
manager on its first call and so fixes ``cudf.set_option("spill", ...)`` from then on (issue 23, defect
11). dask-cuda puts an object into ``DeviceHostFile.others`` only after its own ``get_global_manager()``
call returned a manager, so a non-empty ``others`` means the call here only reads.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from dask.sizeof import sizeof

__all__ = ["store_figures", "rmm_figures", "cudf_spilled", "disk_bytes"]

#: How far the adaptor chain is walked (cuDF's spilling, dask-cuda's tracking/limiting adaptors).
_CHAIN = 16


def _sizes(values: Iterable[Any]) -> int:
    return int(sum(sizeof(v) for v in values))


def disk_bytes(path: str | None) -> int:
    """Bytes of the files under ``path`` (0 when it does not exist)."""
    total = 0
    if not path or not os.path.isdir(path):
        return 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass  # removed while walking: unspilled or deleted
    return total


def cudf_spilled(data: Any) -> int:
    """Bytes cuDF's spill manager moved to host, when the manager already exists (else 0)."""
    if "cudf" not in sys.modules or not getattr(data, "others", None):
        return 0
    from cudf.core.buffer.spill_manager import get_global_manager

    manager = get_global_manager()  # dask-cuda created it before it put anything into `others`
    return int(sum(b.nbytes for b in manager.buffers() if b.is_spilled)) if manager is not None else 0


def _device_data(data: Any, cudf_host: int) -> int:
    buffer = data.device_buffer
    fast = getattr(buffer, "fast", None)
    held = int(fast.total_weight) if fast is not None else _sizes(list(buffer.values()))
    others = _sizes(list(data.others.values())) if getattr(data, "others", None) else 0
    return held + max(0, others - cudf_host)


def _host_from_device(data: Any) -> int:
    keys = list(data.device_keys)
    fast = getattr(data.host_buffer, "fast", None)
    if fast is not None:
        weights = fast.weights
        return int(sum(weights.get(k, 0) for k in keys))
    host = data.host
    return _sizes(host[k] for k in keys if k in host)


def store_figures(data: Any) -> dict[str, int | None]:
    """``device_data``, ``device_memory_limit``, ``spilled_to_host``, ``spilled_to_disk`` of a worker's
    store (``worker.data``); device figures are None for a store that is not dask-cuda's."""
    if hasattr(data, "spilled_total"):  # distributed's SpillBuffer (unified memory: dask's own spilling)
        _memory, disk = data.spilled_total
        return {"device_data": None, "device_memory_limit": None, "spilled_to_host": 0, "spilled_to_disk": int(disk)}
    if not hasattr(data, "device_buffer"):  # a plain dict: nothing spills
        return {"device_data": None, "device_memory_limit": None, "spilled_to_host": 0, "spilled_to_disk": 0}
    cudf_host = cudf_spilled(data)
    limit = getattr(data.device_buffer, "n", None)
    return {
        "device_data": _device_data(data, cudf_host),
        "device_memory_limit": int(limit) if limit else None,
        "spilled_to_host": _host_from_device(data) + cudf_host,
        "spilled_to_disk": disk_bytes(getattr(data, "disk_func_path", None)) if getattr(data, "disk", None) is not None else 0,
    }


def _walk(resource: Any, method: str) -> int | None:
    """``resource.<method>()`` of the first resource in the adaptor chain that has it (None if none)."""
    for _ in range(_CHAIN):
        if resource is None:
            return None
        if hasattr(resource, method):
            return int(getattr(resource, method)())
        resource = getattr(resource, "upstream_mr", None)
    return None


def rmm_figures() -> dict[str, int | None]:
    """``rmm_used`` and ``rmm_pool_size`` of this process's current RMM resource (None when RMM was
    never imported here: the worker does not allocate through it)."""
    rmm = sys.modules.get("rmm")
    if rmm is None:
        return {"rmm_used": None, "rmm_pool_size": None}
    resource = rmm.mr.get_current_device_resource()
    return {"rmm_used": _walk(resource, "get_allocated_bytes"), "rmm_pool_size": _walk(resource, "pool_size")}
