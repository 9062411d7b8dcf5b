"""Workshop load: 8 real Jupyter kernels at once, each starting its own small CPU cluster.

Eight ipykernel processes (``jupyter_client``) start together, as when a room of learners runs the
first cell at the same moment on one shared machine. Each starts a 1-worker CPU cluster
(``processes=True``, 512 MiB limit), computes a small array expression with a transpose (so blocks
move), checks the value, closes the session and confirms no worker is left, then the kernel is shut
down. Measured: wall time, peak memory (sum of RSS of every descendant process, sampled every
0.2 s, and the system's used memory over its value before the start), ports, leaked processes.
"""

from __future__ import annotations

import asyncio
import threading
import time

import psutil

from ..conftest import kit_children, wait_for_no_new_children
from .conftest import ROOT
from .kernels import Kernel, describe, tree

KERNELS = 8
HANG_GUARD_S = 240.0

CELL = """\
import json, time, psutil, gpu_dask_kit as kit, dask.array as da
t0 = time.time()
s = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="512MiB", verbose=False)
t1 = time.time()
n = 2000
x = da.arange(n * n, chunks=250_000, dtype="f8").reshape(n, n).rechunk(500)
v = float((x + x.T).sum().compute())
t2 = time.time()
info = {"id": s.id, "scheduler": s.scheduler_address, "dashboard": s.dashboard_link,
        "pids": [w.pid for w in s.memory().workers], "value": v, "expected": float(n * n * (n * n - 1)),
        "start_s": round(t1 - t0, 3), "compute_s": round(t2 - t1, 3)}
s.close()
info["close_s"] = round(time.time() - t2, 3)
info["workers_left"] = [p.pid for p in psutil.Process().children(recursive=True)
                        if "spawn_main" in " ".join(p.cmdline())]
print(json.dumps(info))
"""


class MemorySampler(threading.Thread):
    """Samples the sum of RSS of this process's descendants and the system's used memory."""

    def __init__(self, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.stop = threading.Event()
        self.baseline_used = self._used()
        self.peak_rss = 0
        self.peak_used = self.baseline_used
        self.peak_processes = 0
        self.samples = 0

    @staticmethod
    def _used() -> int:
        vm = psutil.virtual_memory()
        return vm.total - vm.available

    def run(self) -> None:
        while not self.stop.is_set():
            rss, count = 0, 0
            for proc in psutil.Process().children(recursive=True):
                try:
                    rss += proc.memory_info().rss
                    count += 1
                except psutil.Error:
                    pass
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_processes = max(self.peak_processes, count)
            self.peak_used = max(self.peak_used, self._used())
            self.samples += 1
            self.stop.wait(self.interval)


async def _one(i: int, runtime_dir, tmp_path, reaper) -> dict:
    kernel = Kernel(runtime_dir, tmp_path / f"kernel-{i}.log", ROOT)
    started = time.monotonic()
    try:
        await kernel.start(timeout=HANG_GUARD_S)
        reaper.track(tree(kernel.pid))
        ready = time.monotonic()
        result = await kernel.execute(CELL, timeout=HANG_GUARD_S)
        info = result.last_json()
        info.update(
            kernel=i, kernel_start_s=round(ready - started, 2), cell_s=round(result.elapsed, 2), already_in_use=kernel.all_output().count("already in use")
        )
        reaper.track(tree(kernel.pid))
        return info
    finally:
        await kernel.shutdown(now=False)
        info_end = time.monotonic()
        if "info" in locals():
            info["total_s"] = round(info_end - started, 2)


async def _workshop(runtime_dir, tmp_path, reaper):
    return await asyncio.gather(*(_one(i, runtime_dir, tmp_path, reaper) for i in range(KERNELS)), return_exceptions=True)


def test_eight_kernels_at_once(runtime_dir, tmp_path, reaper, figures):
    before = kit_children()
    sampler = MemorySampler()
    sampler.start()
    started = time.monotonic()
    try:
        results = asyncio.run(_workshop(runtime_dir, tmp_path, reaper))
    finally:
        wall = time.monotonic() - started
        sampler.stop.set()
        sampler.join()
    left = wait_for_no_new_children(before, timeout=15)
    waited = time.monotonic()
    left |= {p.pid for p in reaper.survivors()}  # orphans (e.g. a kernel's resource tracker) too
    figures["orphans_wait_s"] = round(time.monotonic() - waited, 2)
    figures["leaked_detail"] = describe(left)
    ok = [r for r in results if isinstance(r, dict)]
    failed = [f"{type(r).__name__}: {r}" for r in results if not isinstance(r, dict)]
    figures.update(
        kernels=KERNELS,
        succeeded=sum(r["value"] == r["expected"] and not r["workers_left"] for r in ok),
        failures=failed,
        wall_s=round(wall, 2),
        peak_rss_sum_mib=round(sampler.peak_rss / 2**20),
        peak_processes=sampler.peak_processes,
        system_used_delta_peak_mib=round((sampler.peak_used - sampler.baseline_used) / 2**20),
        samples=sampler.samples,
        distinct_scheduler_addresses=len({r["scheduler"] for r in ok}),
        distinct_dashboards=len({r["dashboard"] for r in ok}),
        already_in_use_warnings=sum(r["already_in_use"] for r in ok),
        leaked=sorted(left),
        per_kernel=[{k: r[k] for k in ("kernel", "kernel_start_s", "start_s", "compute_s", "close_s", "cell_s", "total_s") if k in r} for r in ok],
    )
    assert not failed, failed
    assert figures["succeeded"] == KERNELS, ok
    assert figures["distinct_scheduler_addresses"] == KERNELS and figures["distinct_dashboards"] == KERNELS
    assert figures["already_in_use_warnings"] == 0
    assert not left, f"leaked processes: {figures['leaked_detail']}"
