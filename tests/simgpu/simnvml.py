"""A test-only stand-in for NVML (nvidia-ml-py's ``pynvml``): N simulated GPUs, configured by one
environment variable, loaded by EVERY process of a cluster (see README.md in this folder).

Only hardware queries are simulated. dask-cuda, distributed and the kit run unchanged on top of it.
The one non-query it replaces is dask-cuda's "create a CUDA context on this worker's GPU" step
(``dask_cuda.initialize._create_cuda_context_handler``): there is no CUDA driver on the machines this
runs on. The simulated context is recorded, so NVML's "compute processes on this GPU" answers as it
would on a real machine (distributed's ``has_cuda_context`` reads it).

Configuration: ``GPU_DASK_KIT_SIM_GPUS`` is a JSON object::

    {"count": 2,                       # or "gpus": [{...}, ...] (one object per GPU, fields below)
     "name": "Simulated H100 80GB HBM3",  "total": 17179869184, "used": 1073741824,
     "uuid": "GPU-...",                # per GPU; default derived from the index
     "affinity": [0, 1],               # CPUs near each GPU (default: all CPUs)
     "utilization": 7,                 # percent
     "driver": "580.65.06", "cuda": 13000,
     "memory_supported": true,         # false: nvmlDeviceGetMemoryInfo raises NVMLError_NotSupported
                                       # (unified-memory systems such as GB10 / DGX Spark, Jetson)
     "mig": [{"total": 10737418240}],  # per GPU: MIG enabled, one object per slice (uuid, total, used);
                                       # each slice has a MIG-... UUID and its own memory
     "others": [{"pid": 4242, "used": 8589934592}],  # per GPU: other users' processes (NVML's running
                                       # processes; their memory is added to "used")
     "state_dir": "/tmp/...",          # where simulated CUDA contexts are recorded (one file each)
     "log_unsimulated": "/tmp/x.log"}  # optional: append "PID nvmlName" for each non-simulated call
"""

from __future__ import annotations

import importlib.abc
import inspect
import json
import os
import sys
from types import SimpleNamespace
from typing import Any

ENV = "GPU_DASK_KIT_SIM_GPUS"

DEFAULTS = {
    "name": "Simulated H100 80GB HBM3",
    "total": 16 * 2**30,
    "used": 2**30,
    "utilization": 7,
    "driver": "580.65.06",
    "cuda": 13000,
    "memory_supported": True,
}

#: Functions of pynvml this stand-in answers (every other ``nvml*`` function raises NVMLError_NotSupported,
#: as NVML does for a query a device does not support). README.md lists who calls each.
SIMULATED = (
    "nvmlInit",
    "nvmlInitWithFlags",
    "nvmlShutdown",
    "nvmlDeviceGetCount",
    "nvmlDeviceGetHandleByIndex",
    "nvmlDeviceGetHandleByUUID",
    "nvmlDeviceGetIndex",
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetCpuAffinity",
    "nvmlDeviceGetUtilizationRates",
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetCudaDriverVersion",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlDeviceGetMigMode",
    "nvmlDeviceIsMigDeviceHandle",
    "nvmlDeviceGetMaxMigDeviceCount",
    "nvmlDeviceGetMigDeviceHandleByIndex",
    "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetComputeRunningProcesses_v2",
    "nvmlDeviceGetComputeRunningProcesses_v3",
)

#: pynvml helpers that are not queries (error texts, struct conversion): left as they are.
_KEEP = {"nvmlErrorString", "nvmlStructToFriendlyObject", "nvmlFriendlyObjectToStruct"}

_saved: dict[str, Any] = {}
_config: dict[str, Any] | None = None


def gpus_config(count: int = 2, **settings: Any) -> str:
    """The JSON for ``GPU_DASK_KIT_SIM_GPUS``: ``count`` GPUs, ``settings`` as in the module doc."""
    return json.dumps(dict(settings, count=count))


def _gpus(config: dict[str, Any]) -> list[dict[str, Any]]:
    listed = config.get("gpus") or [{} for _ in range(int(config.get("count", 0)))]
    gpus = []
    for index, gpu in enumerate(listed):
        merged = {k: config.get(k, v) for k, v in DEFAULTS.items()}
        if "affinity" in config:
            merged["affinity"] = config["affinity"]
        merged.update(gpu)
        merged.setdefault("uuid", f"GPU-5100000{index}-0000-4000-8000-00000000000{index}")
        merged["index"] = index
        gpus.append(merged)
    return gpus


def _slices(gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """The MIG slices of one simulated GPU (empty when MIG is off), with their defaults filled in."""
    slices = []
    for number, item in enumerate(gpu.get("mig") or []):
        merged = {"memory_supported": True, "used": 0, "name": gpu["name"] + " MIG", "utilization": 0, **item}
        merged.setdefault("uuid", f"MIG-5200000{gpu['index']}-000{number}-4000-8000-00000000000{number}")
        merged["index"], merged["parent"] = gpu["index"], gpu
        slices.append(merged)
    return slices


class Handle:
    """What nvmlDeviceGetHandleBy* return: one simulated GPU (or MIG slice: ``gpu["parent"]`` is set)."""

    def __init__(self, gpu: dict[str, Any]) -> None:
        self.gpu = gpu

    def __repr__(self) -> str:
        return f"<simulated GPU {self.gpu['index']} {self.gpu['uuid']}>"


def _contexts_dir() -> str | None:
    return (_config or {}).get("state_dir")


def record_context(device: str) -> None:
    """Note that this process now has a (simulated) CUDA context on ``device`` (index or UUID)."""
    folder = _contexts_dir()
    if not folder:
        return
    gpus = _gpus(_config or {})
    match = [g for g in gpus if str(g["index"]) == str(device) or g["uuid"] == str(device)]
    if match:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"context-{os.getpid()}-{match[0]['uuid']}"), "w") as f:
            f.write(str(os.getpid()))


def contexts(uuid: str | None = None) -> list[int]:
    """PIDs of live processes with a simulated CUDA context (on the GPU ``uuid``, or any)."""
    folder = _contexts_dir()
    pids = []
    if folder and os.path.isdir(folder):
        for name in os.listdir(folder):
            _, pid, gpu = name.split("-", 2)
            if (uuid is None or gpu == uuid) and _alive(int(pid)):
                pids.append(int(pid))
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is gone for NVML
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _functions(pynvml: Any, config: dict[str, Any]) -> dict[str, Any]:
    gpus = _gpus(config)
    err = pynvml.NVMLError

    def handle(index):
        if not isinstance(index, int) or not 0 <= index < len(gpus):
            raise err(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return Handle(gpus[index])

    def by_uuid(uuid):
        text = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
        for gpu in gpus:
            for item in [gpu, *_slices(gpu)]:
                if item["uuid"] == text:
                    return Handle(item)
        raise err(pynvml.NVML_ERROR_NOT_FOUND)

    def mig_mode(h):
        state = pynvml.NVML_DEVICE_MIG_ENABLE if _slices(h.gpu) else pynvml.NVML_DEVICE_MIG_DISABLE
        return [state, state]

    def mig_handle(h, number):
        slices = _slices(h.gpu)
        if not 0 <= int(number) < len(slices):
            raise err(pynvml.NVML_ERROR_NOT_FOUND)
        return Handle(slices[int(number)])

    def parent(h):
        if "parent" not in h.gpu:
            raise err(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return Handle(h.gpu["parent"])

    def memory(h, version=None):
        gpu = h.gpu
        if not gpu["memory_supported"]:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        total, used = int(gpu["total"]), int(gpu["used"]) + sum(int(o.get("used", 0)) for o in gpu.get("others") or ())
        return SimpleNamespace(total=total, used=used, free=total - used, reserved=0, version=version)

    def affinity(h, size):
        cpus = h.gpu.get("affinity") or list(range(os.cpu_count() or 1))
        words = [0] * max(int(size), 1)
        for cpu in cpus:
            words[cpu // 64] |= 1 << (cpu % 64)
        return words

    def processes(h):
        others = [(int(o["pid"]), int(o.get("used", 0))) for o in h.gpu.get("others") or ()]
        found = [(pid, 0) for pid in contexts(h.gpu["uuid"])] + others
        return [SimpleNamespace(pid=pid, usedGpuMemory=used, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF) for pid, used in found]

    return {
        "nvmlInit": lambda: None,
        "nvmlInitWithFlags": lambda flags: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: len(gpus),
        "nvmlDeviceGetHandleByIndex": handle,
        "nvmlDeviceGetHandleByUUID": by_uuid,
        "nvmlDeviceGetIndex": lambda h: h.gpu["index"],
        "nvmlDeviceGetName": lambda h: h.gpu["name"],
        "nvmlDeviceGetUUID": lambda h: h.gpu["uuid"],
        "nvmlDeviceGetMemoryInfo": memory,
        "nvmlDeviceGetCpuAffinity": affinity,
        "nvmlDeviceGetUtilizationRates": lambda h: SimpleNamespace(gpu=int(h.gpu["utilization"]), memory=0),
        "nvmlSystemGetDriverVersion": lambda: str(config.get("driver", DEFAULTS["driver"])),
        "nvmlSystemGetCudaDriverVersion": lambda: int(config.get("cuda", DEFAULTS["cuda"])),
        "nvmlSystemGetCudaDriverVersion_v2": lambda: int(config.get("cuda", DEFAULTS["cuda"])),
        "nvmlDeviceGetMigMode": mig_mode,
        "nvmlDeviceIsMigDeviceHandle": lambda h: int("parent" in h.gpu),
        "nvmlDeviceGetMaxMigDeviceCount": lambda h: 7 if _slices(h.gpu) else 0,
        "nvmlDeviceGetMigDeviceHandleByIndex": mig_handle,
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle": parent,
        "nvmlDeviceGetComputeRunningProcesses": processes,
        "nvmlDeviceGetComputeRunningProcesses_v2": processes,
        "nvmlDeviceGetComputeRunningProcesses_v3": processes,
    }


def _not_simulated(pynvml: Any, name: str):
    def call(*args: Any, **kwargs: Any):
        log = (_config or {}).get("log_unsimulated")  # a file: which callers need more simulation
        if log:
            with open(log, "a") as f:
                f.write(f"{os.getpid()} {name}\n")
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    call.__name__ = name
    return call


def install(config: dict[str, Any]) -> None:
    """Patch pynvml in this process to answer for the simulated GPUs of ``config`` (idempotent)."""
    global _config
    import pynvml

    if not _saved:
        _saved.update({n: getattr(pynvml, n) for n in dir(pynvml) if n.startswith("nvml") and inspect.isfunction(getattr(pynvml, n)) and n not in _KEEP})
    for name in _saved:
        setattr(pynvml, name, _not_simulated(pynvml, name))
    for name, func in _functions(pynvml, config).items():
        setattr(pynvml, name, func)
    _config = config
    _reset_caches()
    _patch_dask_cuda_if_loaded()


def uninstall() -> None:
    """Give pynvml its real functions back (the test process, after a test)."""
    global _config
    import pynvml

    for name, func in _saved.items():
        setattr(pynvml, name, func)
    _config = None
    _reset_caches()
    module = sys.modules.get("dask_cuda.initialize")
    if module is not None and hasattr(module, "_simgpu_original_handler"):
        module._create_cuda_context_handler = module._simgpu_original_handler


def _reset_caches() -> None:
    """Forget what this process's libraries cached about NVML (only matters in the test process)."""
    nvml = sys.modules.get("distributed.diagnostics.nvml")
    if nvml is not None:
        nvml.NVML_STATE = nvml.NVMLState.UNINITIALIZED
        nvml.NVML_OWNER_PID = None
    utils = sys.modules.get("dask_cuda.utils")
    if utils is not None:
        for name in ("get_gpu_count", "get_gpu_count_mig"):
            cache = getattr(getattr(utils, name, None), "cache", None)
            if cache is not None:
                cache.clear()


def _simulated_context_handler() -> None:
    """Replaces dask_cuda.initialize._create_cuda_context_handler: records a context instead of
    calling cuda.core's ``Device().set_current()`` (needs a CUDA driver)."""
    module = sys.modules["dask_cuda.initialize"]
    record_context(module._get_device_str())


def _patch_dask_cuda_if_loaded() -> None:
    module = sys.modules.get("dask_cuda.initialize")
    if module is not None and _config is not None and not hasattr(module, "_simgpu_original_handler"):
        module._simgpu_original_handler = module._create_cuda_context_handler
        module._create_cuda_context_handler = _simulated_context_handler


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches dask_cuda.initialize right after it is imported (workers import it as a preload)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "dask_cuda.initialize":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                original = spec.loader.exec_module

                def exec_module(module, _original=original):
                    _original(module)
                    _patch_dask_cuda_if_loaded()

                spec.loader.exec_module = exec_module
                return spec
        return None


_hook = _AfterImport()


def install_from_env() -> bool:
    """sitecustomize's entry point: install when ``GPU_DASK_KIT_SIM_GPUS`` is set. Never raises."""
    text = os.environ.get(ENV)
    if not text:
        return False
    try:
        config = json.loads(text)
        install(config)
    except Exception as exc:  # a broken stand-in must say so, not look like a machine without GPUs
        print(f"simulated NVML: {ENV} not installed ({type(exc).__name__}: {exc})", file=sys.stderr)
        return False
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
    _patch_dask_cuda_if_loaded()
    return True


def activate_hook() -> None:
    """For the test process: patch dask_cuda.initialize whenever it is (or was) imported."""
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
    _patch_dask_cuda_if_loaded()
