"""The data of :func:`gpu_dask_kit.environment.detect`: what this machine offers and why a mode was chosen.

Plain frozen dataclasses (and :func:`find_gpu`), importable without touching NVML; re-exported by
:mod:`gpu_dask_kit.environment`, which fills them in.
"""

from __future__ import annotations

import enum
import os
import platform
from dataclasses import asdict, dataclass, field
from typing import Any

import psutil

__all__ = ["Reason", "GPUInfo", "find_gpu", "LibraryInfo", "EnvironmentReport", "GPUSample"]


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
    """One GPU as NVML sees it. Memory is None on unified-memory systems (NVML: "not supported")."""

    index: int
    name: str
    uuid: str
    memory_total: int | None
    memory_free: int | None

    @property
    def unified_memory(self) -> bool:
        """True where the GPU has no dedicated memory of its own (e.g. Grace Hopper): NVML reports none."""
        return self.memory_total is None


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
    #: This process's CUDA_VISIBLE_DEVICES entries (indices or UUIDs); None when it is not set.
    visible_devices: tuple[str, ...] | None = None

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

    @property
    def visible_gpus(self) -> tuple[tuple[str, GPUInfo], ...]:
        """``(entry, gpu)`` for each GPU this process may use: all of them, or those its
        CUDA_VISIBLE_DEVICES names (by index or UUID, in its order; as CUDA does, the list ends at the
        first entry that names no GPU here)."""
        if self.visible_devices is None:
            return tuple((str(g.index), g) for g in self.gpus)
        chosen: list[tuple[str, GPUInfo]] = []
        for entry in self.visible_devices:
            match = find_gpu(self.gpus, entry)
            if match is None or any(g is match for _, g in chosen):
                break
            chosen.append((entry, match))
        return tuple(chosen)

    def visible_text(self) -> str | None:
        """ "CUDA_VISIBLE_DEVICES=2 in this process: 1 of 4 GPUs", or None when it is not set."""
        if self.visible_devices is None:
            return None
        return f"CUDA_VISIBLE_DEVICES={','.join(self.visible_devices)} in this process: {len(self.visible_gpus)} of {len(self.gpus)} GPUs"

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


def find_gpu(gpus: tuple[GPUInfo, ...] | list[GPUInfo], entry: str) -> GPUInfo | None:
    """The GPU a CUDA_VISIBLE_DEVICES entry names: an NVML index or a UUID (``GPU-...``, or a prefix of
    one as CUDA accepts); None when it names none here."""
    entry = entry.strip()
    for gpu in gpus:
        if (entry.isdigit() and gpu.index == int(entry)) or gpu.uuid == entry:
            return gpu
    if entry.startswith("GPU-") and len(entry) > 4:
        prefixed = [g for g in gpus if g.uuid.startswith(entry)]
        if len(prefixed) == 1:
            return prefixed[0]
    return None
