"""Hardware and library detection: ``detect()`` -> :class:`EnvironmentReport`. Reports; never raises.

The report carries everything the pure planner needs about this machine (GPUs, libraries, cores, host
memory), so :mod:`gpu_dask_kit.plan` never reads the live machine itself. "mode" is the one word for
GPU or CPU ("gpu" | "cpu") across the kit.

NVML (``nvidia-ml-py``) is used for the GPUs: it needs the driver but creates no CUDA context, so
calling :func:`detect` in a notebook does not pin the kernel to GPU 0. GPU libraries (CuPy, RMM, cuDF,
cuML) are looked up by their installed metadata, not imported, for the same reason.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Any

import dask.config
import psutil

from . import config as _config
from .environment_libraries import LIBRARIES, cuda_major, dask_cuda_library, library, too_new
from .environment_report import EnvironmentReport, GPUInfo, GPUSample, LibraryInfo, Reason, exact_entry, find_gpu, matching_gpus

__all__ = [
    "Reason",
    "GPUInfo",
    "find_gpu",
    "matching_gpus",
    "exact_entry",
    "cuda_major",
    "LibraryInfo",
    "EnvironmentReport",
    "GPUSample",
    "detect",
    "sample_gpus",
    "choose_mode",
]

# --- NVML -------------------------------------------------------------------------------------------

_nvml_lock = threading.Lock()
_nvml_ready: bool | None = None
_nvml_failure: tuple[Reason, str] | None = None


def _nvml():
    """The NVML module (a seam for tests that fake hardware we lack)."""
    import pynvml

    return pynvml


def _init_nvml() -> tuple[Any, tuple[Reason, str] | None]:
    """Initialise NVML once per process; return the module or the reason it is unusable."""
    global _nvml_ready, _nvml_failure
    with _nvml_lock:
        if _nvml_ready is None:
            try:
                nvml = _nvml()
            except ImportError:
                _nvml_ready, _nvml_failure = False, (Reason.NO_NVML, "nvidia-ml-py is not installed, so GPUs cannot be detected (pip install nvidia-ml-py).")
            else:
                try:
                    nvml.nvmlInit()
                    _nvml_ready = True
                except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
                    _nvml_ready = False
                    name = type(exc).__name__
                    if "LibraryNotFound" in name or "DriverNotLoaded" in name or "NotFound" in name:
                        _nvml_failure = (Reason.NO_DRIVER, "no NVIDIA driver was found on this machine (NVML could not be loaded).")
                    else:
                        _nvml_failure = (Reason.NVML_ERROR, f"the NVIDIA driver did not answer ({name}: {exc}).")
        if not _nvml_ready:
            return None, _nvml_failure
        return _nvml(), None


def _reset_nvml_for_tests() -> None:
    global _nvml_ready, _nvml_failure
    with _nvml_lock:
        _nvml_ready, _nvml_failure = None, None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _memory_info(nvml, handle) -> Any:
    """NVML's memory info of one GPU, or None where NVML says "not supported": unified-memory systems
    have no dedicated device memory (dask-cuda 26.10 treats them the same way, ``utils.py:215-234``)."""
    try:
        return nvml.nvmlDeviceGetMemoryInfo(handle)
    except Exception as exc:
        if type(exc).__name__ == "NVMLError_NotSupported":
            return None
        raise


def _other_processes(nvml, handle) -> tuple[tuple[int, int], ...]:
    """(PID, bytes) of the processes NVML lists on a GPU, without this process and its descendants (its own
    workers); () where NVML cannot tell (then sharing is not seen, as nvidia-smi would not see it either)."""
    try:
        listed = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        mine = {os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))}
    except Exception:
        return ()
    return tuple(sorted((int(p.pid), int(p.usedGpuMemory or 0)) for p in listed if int(p.pid) not in mine))


def _device(nvml, handle, index: int, mig: tuple[GPUInfo, ...] = ()) -> GPUInfo:
    mem = _memory_info(nvml, handle)
    total, free = (int(mem.total), int(mem.free)) if mem is not None else (None, None)
    name, uuid = _text(nvml.nvmlDeviceGetName(handle)), _text(nvml.nvmlDeviceGetUUID(handle))
    return GPUInfo(index, name, uuid, total, free, mig, _other_processes(nvml, handle))


def _mig_slices(nvml, handle, index: int) -> tuple[GPUInfo, ...]:
    """The MIG slices of a GPU with MIG enabled (each with its own memory and MIG-... UUID); () otherwise."""
    try:
        if nvml.nvmlDeviceGetMigMode(handle)[0] != nvml.NVML_DEVICE_MIG_ENABLE:
            return ()
        count = nvml.nvmlDeviceGetMaxMigDeviceCount(handle)
    except Exception:  # NVMLError_NotSupported: a GPU without MIG
        return ()
    slices = []
    for number in range(count):
        try:
            slices.append(_device(nvml, nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, number), index))
        except Exception:  # NVMLError_NotFound: an empty slot
            continue
    return tuple(slices)


def _read_gpus(nvml) -> tuple[list[GPUInfo], str | None, str | None]:
    gpus = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        gpus.append(_device(nvml, handle, index, _mig_slices(nvml, handle, index)))
    driver = _text(nvml.nvmlSystemGetDriverVersion())
    try:
        cuda = int(nvml.nvmlSystemGetCudaDriverVersion_v2())
        cuda_text = f"{cuda // 1000}.{(cuda % 1000) // 10}"
    except Exception:
        cuda_text = None
    return gpus, driver, cuda_text


def _dask_cuda() -> LibraryInfo:
    """dask_cuda imported for real (a seam for tests that fake hardware we lack)."""
    return dask_cuda_library()


def _library(module: str) -> LibraryInfo:
    """One library by its installed metadata (a seam for tests)."""
    return library(module)


def choose_mode(
    requested: str, gpus: list, libraries: dict[str, LibraryInfo], nvml_failure: tuple[Reason, str] | None, driver_cuda: str | None = None
) -> tuple[str, Reason, str]:
    """Pure decision of the mode ``requested`` ("auto" | "gpu" | "cpu") leads to, with the reason.
    ``driver_cuda`` is the newest CUDA version the driver supports ("12.4"), from NVML.

    >>> libs = {"dask_cuda": LibraryInfo(True, "26.10", True), "cupy": LibraryInfo(True, "13.6")}
    >>> choose_mode("auto", [], libs, (Reason.NO_DRIVER, "no NVIDIA driver was found."))[:2]
    ('cpu', <Reason.NO_DRIVER: 'no_driver'>)
    >>> choose_mode("auto", ["gpu0"], libs, None)[:2]
    ('gpu', <Reason.OK: 'ok'>)
    >>> libs["cupy"] = LibraryInfo(True, "14.0", cuda_major=13, distribution="cupy-cuda13x")
    >>> choose_mode("auto", ["gpu0"], libs, None, "12.4")[2]  # doctest: +ELLIPSIS
    'CPU mode: 1 GPU(s) found, but cupy-cuda13x is built for CUDA 13 and this NVIDIA driver supports CUDA 12.4 at most; ...'
    """
    if requested == "cpu":
        unused = f", so the {len(gpus)} GPU(s) here are not used" if gpus else ""
        return "cpu", Reason.DISABLED, f"CPU mode was asked for (device='cpu'){unused}."
    if nvml_failure is not None:
        return "cpu", nvml_failure[0], f"CPU mode: {nvml_failure[1]}"
    if not gpus:
        return "cpu", Reason.NO_DEVICES, "CPU mode: the NVIDIA driver is loaded but reports no GPU."
    dask_cuda = libraries.get("dask_cuda")
    if dask_cuda is None or not dask_cuda.installed or dask_cuda.importable is False:
        why = dask_cuda.error if dask_cuda and dask_cuda.error else "it is not installed"
        return (
            "cpu",
            Reason.NO_DASK_CUDA,
            (f"CPU mode: {len(gpus)} GPU(s) found, but dask-cuda cannot be used ({why}); install gpu-dask-kit[gpu-cu12] or [gpu-cu13]."),
        )
    cupy = libraries.get("cupy")
    if cupy is None or not cupy.installed:
        return "cpu", Reason.NO_CUPY, f"CPU mode: {len(gpus)} GPU(s) found, but CuPy is not installed; install gpu-dask-kit[gpu-cu12] or [gpu-cu13]."
    newer = too_new(libraries, driver_cuda)
    if newer:
        return "cpu", Reason.CUDA_TOO_NEW, f"CPU mode: {len(gpus)} GPU(s) found, but {newer}."
    return "gpu", Reason.OK, f"GPU mode: {len(gpus)} GPU(s) found and dask-cuda {dask_cuda.version} is ready."


def detect(device: str | None = None) -> EnvironmentReport:
    """Detect GPUs, driver and libraries, and decide what ``device`` (default: the config's) means here.

    Never raises for a missing GPU or driver, and creates no CUDA context in this process.
    """
    _config.ensure_defaults()
    requested = device or dask.config.get("gpu-dask-kit.device", "auto")
    nvml, failure = _init_nvml()
    gpus: list[GPUInfo] = []
    driver = cuda = None
    if nvml is not None:
        try:
            gpus, driver, cuda = _read_gpus(nvml)
        except Exception as exc:
            failure = (Reason.NVML_ERROR, f"the NVIDIA driver did not answer ({type(exc).__name__}: {exc}).")
    libraries = {name: _library(name) for name in LIBRARIES if name != "dask_cuda"}
    libraries["dask_cuda"] = _dask_cuda() if gpus else _library("dask_cuda")
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    visible = None if raw is None else tuple(e.strip() for e in raw.split(",") if e.strip())
    report = EnvironmentReport("cpu", Reason.OK, "", tuple(gpus), driver, cuda, dict(sorted(libraries.items())), visible_devices=visible)
    usable = [g for _, g in report.visible_gpus]
    mode, reason, text = choose_mode(requested, usable, libraries, failure, cuda)
    if visible is not None and gpus and failure is None and requested != "cpu":
        if not usable:
            mode, reason = "cpu", Reason.NO_DEVICES
            text = f"CPU mode: CUDA_VISIBLE_DEVICES={raw!r} in this process names none of the {len(gpus)} GPU(s) here."
        else:
            text = text.rstrip(".") + f" ({report.visible_text()})."
    if mode == "gpu" and any(g.sized.unified_memory for g in usable):
        text = text.rstrip(".") + "; unified memory (no dedicated device memory): dask-cuda does not spill device memory there."
    return dataclasses.replace(report, mode=mode, reason=reason, reason_text=text)


def sample_gpus() -> GPUSample:
    """Live memory and utilisation of each GPU from NVML. Never raises; empty with a reason if none."""
    nvml, failure = _init_nvml()
    now = time.time()
    if nvml is None:
        return GPUSample((), failure[1] if failure else "NVML is not available.", now)
    samples = []
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            mem = _memory_info(nvml, handle)
            try:
                util = int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            except Exception:
                util = None
            samples.append(
                {
                    "index": index,
                    "name": _text(nvml.nvmlDeviceGetName(handle)),
                    "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
                    "memory_total": int(mem.total) if mem is not None else None,
                    "memory_used": int(mem.used) if mem is not None else None,
                    "utilization": util,
                }
            )
    except Exception as exc:
        return GPUSample((), f"the NVIDIA driver did not answer ({type(exc).__name__}: {exc}).", now)
    if not samples:
        return GPUSample((), "the NVIDIA driver is loaded but reports no GPU.", now)
    return GPUSample(tuple(samples), None, now)
