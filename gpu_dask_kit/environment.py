"""Hardware and library detection: ``detect()`` -> :class:`EnvironmentReport`. Reports; never raises.

The report carries everything the pure planner needs about this machine (GPUs, libraries, cores, host
memory), so :mod:`gpu_dask_kit.plan` never reads the live machine itself. "mode" is the one word for
GPU or CPU ("gpu" | "cpu") across the kit.

NVML (``nvidia-ml-py``) is used for the GPUs: it needs the driver but creates no CUDA context, so
calling :func:`detect` in a notebook does not pin the kernel to GPU 0. GPU libraries (CuPy, RMM, cuDF,
cuML) are looked up by their installed metadata, not imported, for the same reason.
"""

from __future__ import annotations

import enum
import functools
import importlib.metadata
import importlib.util
import os
import platform
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import dask.config
import psutil

from . import config as _config

__all__ = ["Reason", "GPUInfo", "LibraryInfo", "EnvironmentReport", "GPUSample", "detect", "sample_gpus", "choose_mode"]


class Reason(str, enum.Enum):
    """Why ``device="auto"`` chose what it chose."""

    OK = "ok"
    DISABLED = "disabled"
    NO_NVML = "no_nvml"
    NO_DRIVER = "no_driver"
    NO_DEVICES = "no_devices"
    NVML_ERROR = "nvml_error"
    NO_DASK_CUDA = "no_dask_cuda"
    NO_CUPY = "no_cupy"


@dataclass(frozen=True)
class GPUInfo:
    index: int
    name: str
    uuid: str
    memory_total: int
    memory_free: int


@dataclass(frozen=True)
class LibraryInfo:
    installed: bool
    version: str | None
    importable: bool | None = None  # None: not tried (importing would touch the GPU)
    error: str | None = None


@dataclass(frozen=True)
class EnvironmentReport:
    """What this machine offers, what ``device="auto"`` picks, and why in one sentence."""

    mode: str
    reason: Reason
    reason_text: str
    gpus: tuple[GPUInfo, ...]
    driver_version: str | None
    cuda_version: str | None
    libraries: dict[str, LibraryInfo]
    python: str = field(default_factory=platform.python_version)
    platform: str = field(default_factory=platform.platform)
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)
    host_memory_total: int = field(default_factory=lambda: int(psutil.virtual_memory().total))

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

    def to_dict(self) -> dict[str, Any]:
        """The JSON model served at ``GET /gpu-dask-kit/api/environment``."""
        data = asdict(self)
        data["reason"] = self.reason.value
        data["gpus"] = [asdict(g) for g in self.gpus]
        data["libraries"] = {k: asdict(v) for k, v in self.libraries.items()}
        return data


@dataclass(frozen=True)
class GPUSample:
    """Live use of each GPU (``GET /gpu-dask-kit/api/gpus``); empty with a reason when there is none."""

    gpus: tuple[dict, ...]
    reason: str | None
    time: float

    def to_dict(self) -> dict[str, Any]:
        return {"gpus": [dict(g) for g in self.gpus], "reason": self.reason, "time": self.time}


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


def _read_gpus(nvml) -> tuple[list[GPUInfo], str | None, str | None]:
    gpus = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        mem = nvml.nvmlDeviceGetMemoryInfo(handle)
        gpus.append(GPUInfo(index, _text(nvml.nvmlDeviceGetName(handle)), _text(nvml.nvmlDeviceGetUUID(handle)), int(mem.total), int(mem.free)))
    driver = _text(nvml.nvmlSystemGetDriverVersion())
    try:
        cuda = int(nvml.nvmlSystemGetCudaDriverVersion_v2())
        cuda_text = f"{cuda // 1000}.{(cuda % 1000) // 10}"
    except Exception:
        cuda_text = None
    return gpus, driver, cuda_text


# --- libraries --------------------------------------------------------------------------------------

_LIBRARIES = ("dask", "distributed", "dask_cuda", "rmm", "cupy", "cudf", "dask_cudf", "cuml", "distributed_ucxx")


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    """Top-level module -> distribution names (scanning site-packages once per process)."""
    return dict(importlib.metadata.packages_distributions())


def _library(module: str) -> LibraryInfo:
    if importlib.util.find_spec(module) is None:
        return LibraryInfo(False, None)
    dists = _distributions().get(module, [])
    version = None
    for dist in dists:
        try:
            version = importlib.metadata.version(dist)
            break
        except importlib.metadata.PackageNotFoundError:
            continue
    return LibraryInfo(True, version)


_dask_cuda_import: LibraryInfo | None = None


def _dask_cuda() -> LibraryInfo:
    """dask_cuda is imported for real (it may be installed but broken, e.g. without cuda-bindings).

    Importing it creates no CUDA context."""
    global _dask_cuda_import
    if _dask_cuda_import is None:
        info = _library("dask_cuda")
        if info.installed:
            try:
                import dask_cuda  # noqa: F401
            except Exception as exc:
                info = LibraryInfo(True, info.version, False, f"{type(exc).__name__}: {exc}")
            else:
                info = LibraryInfo(True, info.version, True)
        _dask_cuda_import = info
    return _dask_cuda_import


def choose_mode(requested: str, gpus: list, libraries: dict[str, LibraryInfo], nvml_failure: tuple[Reason, str] | None) -> tuple[str, Reason, str]:
    """Pure decision of the mode ``requested`` ("auto" | "gpu" | "cpu") leads to, with the reason.

    >>> libs = {"dask_cuda": LibraryInfo(True, "26.10", True), "cupy": LibraryInfo(True, "13.6")}
    >>> choose_mode("auto", [], libs, (Reason.NO_DRIVER, "no NVIDIA driver was found."))[:2]
    ('cpu', <Reason.NO_DRIVER: 'no_driver'>)
    >>> choose_mode("auto", ["gpu0"], libs, None)[:2]
    ('gpu', <Reason.OK: 'ok'>)
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
    libraries = {name: _library(name) for name in _LIBRARIES if name != "dask_cuda"}
    libraries["dask_cuda"] = _dask_cuda() if gpus else _library("dask_cuda")
    mode, reason, text = choose_mode(requested, gpus, libraries, failure)
    return EnvironmentReport(mode, reason, text, tuple(gpus), driver, cuda, dict(sorted(libraries.items())))


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
            mem = nvml.nvmlDeviceGetMemoryInfo(handle)
            try:
                util = int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            except Exception:
                util = None
            samples.append(
                {
                    "index": index,
                    "name": _text(nvml.nvmlDeviceGetName(handle)),
                    "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
                    "memory_total": int(mem.total),
                    "memory_used": int(mem.used),
                    "utilization": util,
                }
            )
    except Exception as exc:
        return GPUSample((), f"the NVIDIA driver did not answer ({type(exc).__name__}: {exc}).", now)
    if not samples:
        return GPUSample((), "the NVIDIA driver is loaded but reports no GPU.", now)
    return GPUSample(tuple(samples), None, now)
