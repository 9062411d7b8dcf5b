"""Overheads while the SVD runs: the notebook's memory monitor and the JupyterLab sidebar's GPU sampler.

    python -m bench.bench_overheads [--reps 3] [--rows R] [--quick]

Three conditions, interleaved (off, monitor, sampler / monitor, sampler, off / ...), on one kit cluster
(GPU when usable, else CPU), each timing ``dask.persist(*da.linalg.svd(x))`` of the same persisted array:

- off: nothing else runs;
- monitor: ``gpu_dask_kit.notebook.widgets.MemoryMonitor(session)`` at its default refresh (1 s): its daemon thread
  takes ``session.memory()`` snapshots and renders the HTML/SVG, as in a notebook (no front end here);
- sampler: ``gpu_dask_kit.server.sampler.GpuSampler()`` at its default interval (1 s), polled by a client
  coroutine four times per interval (like several sidebar tabs; the sampler still reads NVML at most once
  per interval) on its own event-loop thread, as in the Jupyter server. Without a GPU, NVML fails fast and
  this measures only the polling machinery.

The array is 100000 x 1000 (seed 002) on a GPU; on a CPU 20000 x 1000 (a fifth of the seed's ~70 s SVD on
2 cores, about 15 s per run, so that 3 x 3 runs fit the ``make bench`` budget: about 2.5 min). Also reported: the direct
cost of one monitor refresh and one sampler read, which bounds the overhead independently of noise.
"""

from __future__ import annotations

import asyncio
import inspect
import statistics
import sys
import threading
import time
from typing import Any

from . import common
from .common import fmt, stats

NAME = "overheads"


def add_arguments(parser) -> None:
    parser.add_argument("--rows", type=int, default=None, help="SVD rows (default 100000 on GPU, 20000 on CPU)")
    parser.add_argument("--cols", type=int, default=1000, help="SVD columns (default 1000)")
    parser.add_argument("--chunk", type=int, default=1000, help="rows per chunk (default 1000, as in the seed)")


class SamplerLoad:
    """A GpuSampler at its default interval, polled on its own asyncio loop thread until stopped."""

    def __init__(self) -> None:
        from gpu_dask_kit.server.sampler import GpuSampler

        self.sampler = GpuSampler()
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._poll()), name="bench-sampler-load", daemon=True)
        self._thread.start()

    async def _poll(self) -> None:
        while not self._stop.is_set():
            await self.sampler.get()
            self.polls += 1
            await asyncio.sleep(self.sampler.interval / 4)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.sampler.close()


def direct_costs(session: Any, n: int = 20) -> dict[str, float]:
    """Median wall time of one monitor refresh and of one NVML read (the sampler's unit of work), idle cluster."""
    from gpu_dask_kit.environment import sample_gpus
    from gpu_dask_kit.notebook.widgets import MemoryMonitor

    monitor = MemoryMonitor(session, interval=3600, autostart=False)
    try:
        refresh = []
        for _ in range(n):
            start = time.perf_counter()
            monitor.refresh()
            refresh.append(time.perf_counter() - start)
    finally:
        monitor.close()
    reads = []
    for _ in range(n):
        start = time.perf_counter()
        sample_gpus()
        reads.append(time.perf_counter() - start)
    return {"monitor_refresh_ms": statistics.median(refresh) * 1e3, "sampler_read_ms": statistics.median(reads) * 1e3}


def run(args) -> dict:
    import dask
    import dask.array as da
    from distributed import wait

    import gpu_dask_kit as kit
    from gpu_dask_kit.compute import random_array
    from gpu_dask_kit.notebook.widgets import MemoryMonitor

    report = kit.detect()
    reps = common.reps(args, 3)
    rows = args.rows or (4_000 if args.quick else 100_000 if report.mode == "gpu" else 20_000)
    cols = 200 if args.quick else args.cols
    session = kit.start_cluster(rmm_pool_size=0.5, verbose=False) if report.mode == "gpu" else kit.start_cluster(device="cpu", verbose=False)
    extra: dict[str, list[int]] = {"monitor_refreshes": [], "sampler_reads": []}
    try:
        x = random_array((rows, cols), chunks=(min(args.chunk, rows), cols), seed=12).persist()
        wait(x)

        def svd_once() -> float:
            start = time.perf_counter()
            u, s, v = dask.persist(*da.linalg.svd(x))  # noqa: F821 (x is deleted only after the last run)
            wait([u, s, v])
            return time.perf_counter() - start

        def off() -> float:
            return svd_once()

        def monitor() -> float:
            mon = MemoryMonitor(session)  # default refresh
            try:
                return svd_once()
            finally:
                extra["monitor_refreshes"].append(mon.ticks)
                mon.close()

        def sampler() -> float:
            load = SamplerLoad()
            try:
                return svd_once()
            finally:
                extra["sampler_reads"].append(load.sampler.reads)
                load.close()

        svd_once()  # warm-up: imports and first graphs on the workers
        seconds = common.interleave({"off": off, "monitor": monitor, "sampler": sampler}, reps)
        costs = direct_costs(session)
        mode, n_workers = session.mode, session.n_workers
        del x
    finally:
        session.close()
    summary = {k: stats(v) for k, v in seconds.items()}
    base = summary["off"]
    overhead = {
        k: {
            "median": summary[k]["median"] / base["median"] - 1,
            "min": summary[k]["min"] / base["min"] - 1,
            "paired_median": statistics.median(b / a - 1 for a, b in zip(seconds["off"], seconds[k], strict=True)),
        }
        for k in ("monitor", "sampler")
    }
    from gpu_dask_kit.server.sampler import GpuSampler

    defaults = {
        "monitor_interval_s": inspect.signature(MemoryMonitor).parameters["interval"].default,
        "sampler_interval_s": inspect.signature(GpuSampler).parameters["interval"].default,
    }
    return {
        "svd": {"rows": rows, "cols": cols, "chunk_rows": min(args.chunk, rows)},
        "mode": mode,
        "n_workers": n_workers,
        "reps": reps,
        "defaults": defaults,
        "samples": seconds,
        "summary": summary,
        "overhead": overhead,
        "counts": extra,
        "direct_costs": costs,
    }


def markdown(result: dict) -> str:
    s, o, c, d = result["summary"], result["overhead"], result["direct_costs"], result["defaults"]
    z = result["svd"]
    labels = {
        "off": "off",
        "monitor": f"memory monitor on ({d['monitor_interval_s']:g} s refresh)",
        "sampler": f"GPU sampler on ({d['sampler_interval_s']:g} s interval)",
    }
    lines = [
        common.header(result, f"Overheads during the SVD, {result['mode'].upper()}, {result['reps']} interleaved repetitions"),
        f"SVD of a persisted {z['rows']} x {z['cols']} float64 array (chunks of {z['chunk_rows']} rows) on {result['n_workers']} "
        f"{result['mode'].upper()} worker(s); seconds per SVD.",
        "",
        "| condition | seconds min / median / max | overhead (medians) | overhead (minima) | paired median |",
        "|---|---|---|---|---|",
    ]
    for k in ("off", "monitor", "sampler"):
        ov = o.get(k)
        cells = (f"{ov['median'] * 100:+.1f} %", f"{ov['min'] * 100:+.1f} %", f"{ov['paired_median'] * 100:+.1f} %") if ov else ("-", "-", "-")
        lines.append(f"| {labels[k]} | {fmt(s[k], 3)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Monitor refreshes per run: {result['counts']['monitor_refreshes']}; NVML reads by the sampler per run: "
        f"{result['counts']['sampler_reads']}. Direct cost on an idle cluster: one monitor refresh "
        f"{c['monitor_refresh_ms']:.1f} ms, one sampler read {c['sampler_read_ms']:.2f} ms (median wall time), i.e. at "
        f"most {c['monitor_refresh_ms'] / 10 / d['monitor_interval_s']:.2f} % and {c['sampler_read_ms'] / 10 / d['sampler_interval_s']:.3f} % "
        "of one core at the default rates. Differences smaller than the spread of the 'off' runs are noise.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
