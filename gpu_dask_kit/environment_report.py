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

__all__ = ["Reason", "GPUInfo", "find_gpu", "matching_gpus", "exact_entry", "LibraryInfo", "EnvironmentReport", "GPUSample"]


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
    CUDA_TOO_NEW = "cuda_too_new"  # the GPU wheels (cu13) need a newer CUDA than the driver supports


@dataclass(frozen=True)
class GPUInfo:
    """One GPU (or one MIG slice of it) as NVML sees it. Memory is None on unified-memory systems
    (NVML: "not supported"). A MIG slice has the ``MIG-...`` UUID and the index of its parent GPU."""

    index: int
    name: str
    uuid: str
    memory_total: int | None
    memory_free: int | None
    mig: tuple[GPUInfo, ...] = ()  # the MIG slices when MIG is enabled on this GPU
    #: Other processes on this GPU as NVML lists them (its running compute processes, this process and its
    #: descendants excluded): (PID, bytes used; 0 where NVML does not say). A shared machine's other users.
    others: tuple[tuple[int, int], ...] = ()

    @property
    def others_bytes(self) -> int:
        """GPU memory the other processes hold, as far as NVML tells."""
        return sum(used for _, used in self.others)

    def holders(self) -> list[tuple[int, str, int]]:
        """Who holds what on this GPU: (PID, user name or "?" where it cannot be read, bytes) of the other processes.

        >>> import getpass, os
        >>> GPUInfo(0, "G", "GPU-0", 16, 8, others=((os.getpid(), 8),)).holders() == [(os.getpid(), getpass.getuser(), 8)]
        True
        """
        found = []
        for pid, used in self.others:
            try:
                user = psutil.Process(pid).username()
            except (psutil.Error, KeyError):
                user = "?"
            found.append((pid, user, used))
        return found

    @property
    def unified_memory(self) -> bool:
        """True where the GPU has no dedicated memory of its own (e.g. GB10 / DGX Spark, Jetson): NVML
        reports none."""
        return self.memory_total is None

    @property
    def is_mig_slice(self) -> bool:
        return self.uuid.startswith("MIG-")

    @property
    def sized(self) -> GPUInfo:
        """The device whose memory a worker on this entry gets: the GPU, or on a MIG-enabled GPU named by
        index its first slice (what CUDA runs on there)."""
        return self.mig[0] if self.mig else self

    def describe(self) -> str:
        """ "GPU 0 (name)" or "MIG slice MIG-... of GPU 0 (name)"."""
        return f"MIG slice {self.uuid} of GPU {self.index} ({self.name})" if self.is_mig_slice else f"GPU {self.index} ({self.name})"


@dataclass(frozen=True)
class LibraryInfo:
    installed: bool
    version: str | None
    importable: bool | None = None  # None: not tried (importing would touch the GPU)
    error: str | None = None
    cuda_major: int | None = None  # the CUDA major version the installed wheel is built for (cupy-cuda12x: 12)
    distribution: str | None = None  # the installed distribution's name (e.g. cupy-cuda12x, rmm-cu12)


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
        CUDA_VISIBLE_DEVICES names (by index or UUID, MIG slices too, in its order; as CUDA does, the
        list ends at the first entry that names no GPU here). Entries are exact (a UUID prefix becomes
        the UUID)."""
        if self.visible_devices is None:
            return tuple((str(g.index), g) for g in self.gpus)
        chosen: list[tuple[str, GPUInfo]] = []
        for entry in self.visible_devices:
            match = find_gpu(self.gpus, entry)
            if match is None or any(g is match for _, g in chosen):
                break
            chosen.append((exact_entry(entry, match), match))
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
        data["gpus"] = [asdict(g) for g in self.gpus]  # MIG slices nested under "mig"
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


def matching_gpus(gpus: tuple[GPUInfo, ...] | list[GPUInfo], entry: str) -> list[GPUInfo]:
    """Every GPU or MIG slice a CUDA_VISIBLE_DEVICES entry may name: an NVML index, a UUID (``GPU-...``
    or ``MIG-...``), or a prefix of one as CUDA accepts (several when the prefix is ambiguous)."""
    entry = entry.strip()
    devices = [d for gpu in gpus for d in (gpu, *gpu.mig)]
    exact = [d for d in devices if (entry.isdigit() and not d.is_mig_slice and d.index == int(entry)) or d.uuid == entry]
    if exact or not entry.startswith(("GPU-", "MIG-")) or len(entry) <= 4:
        return exact
    return [d for d in devices if d.uuid.startswith(entry)]


def find_gpu(gpus: tuple[GPUInfo, ...] | list[GPUInfo], entry: str) -> GPUInfo | None:
    """The one GPU (or MIG slice) a CUDA_VISIBLE_DEVICES entry names; None when it names none here or a
    UUID prefix fits more than one."""
    found = matching_gpus(gpus, entry)
    return found[0] if len(found) == 1 else None


def exact_entry(entry: str, gpu: GPUInfo) -> str:
    """The entry to pass on for ``gpu``: an index stays an index, a UUID (or a prefix of one, which
    dask-cuda and distributed do not accept) becomes the exact UUID."""
    return entry.strip() if entry.strip().isdigit() else gpu.uuid
