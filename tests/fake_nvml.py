"""A fake NVML reporting N GPUs, for unit tests of hardware this machine lacks (never the only test)."""

from __future__ import annotations

from types import SimpleNamespace


class FakeNVML:
    def __init__(self, gpus=2, total=16 * 2**30, used=2**30, fail_init=None, others=None):
        self.gpus = gpus
        self.others = others or {}  # {GPU index: [(PID, bytes), ...]}: other users' processes
        self.total = total
        self.used = used
        self.fail_init = fail_init
        self.init_calls = 0

    def nvmlInit(self):
        self.init_calls += 1
        if self.fail_init:
            raise self.fail_init

    def nvmlDeviceGetCount(self):
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(total=self.total, used=self.used, free=self.total - self.used)

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self.others.get(handle, [])]

    def nvmlDeviceGetName(self, handle):
        return b"Fake H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, handle):
        return f"GPU-0000000{handle}-fake"

    def nvmlDeviceGetUtilizationRates(self, handle):
        return SimpleNamespace(gpu=10 * (handle + 1), memory=5)

    def nvmlSystemGetDriverVersion(self):
        return "580.65.06"

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return 13000


class NVMLError_LibraryNotFound(Exception):
    pass


def install(monkeypatch, fake):
    """Make gpu_dask_kit.environment use ``fake`` as NVML (and forget any earlier initialisation)."""
    from gpu_dask_kit import environment

    environment._reset_nvml_for_tests()
    monkeypatch.setattr(environment, "_nvml", lambda: fake)
    monkeypatch.setattr(environment, "_dask_cuda", lambda: environment.LibraryInfo(True, "26.10.0", True))
    return fake
