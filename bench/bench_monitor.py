"""Overhead of the live memory monitor on a fixed Dask workload (target: <= 2 % slower at a 1 s refresh).

The same dask-array reduction runs repeatedly on a kit cluster, alternately without the monitor and with a
``MemoryMonitor`` polling every ``--interval`` seconds (its daemon thread takes ``session.memory()``
snapshots and renders the HTML/SVG, exactly as in a notebook; outside a kernel the widget messages have no
front end to go to, so the browser's rendering cost is not part of this figure). Repetitions are
interleaved (off/on, on/off, ...) so drift from other load on the machine hits both conditions alike.

    python -m bench.bench_monitor [--reps 6] [--quick]   # ~30 s on 2 cores; CPU cluster (GPU with --device gpu)

Also run by ``make bench`` (``python -m bench``). Writes ``bench/results/<date>-<machine>-monitor.json`` and
``.md`` through ``bench/common.py`` (``bench/RESULTS.md`` is regenerated from those). Never asserted as a test.
The SVD-sized version of this measurement, with the sidebar's GPU sampler as a third condition, is
``bench/bench_overheads.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

try:
    from . import common
except ImportError:  # run as a script: python bench/bench_monitor.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import common
stats = common.stats

NAME = "monitor"


def workload(size: int, chunks: int, repeats: int) -> float:
    """The fixed workload: ``repeats`` reductions of a random ``size`` x ``size`` array; seconds taken."""
    import dask.array as da

    x = da.random.random((size, size), chunks=chunks)
    start = time.perf_counter()
    for _ in range(repeats):
        (x + x.T).std(axis=0).sum().compute()
    return time.perf_counter() - start


def refresh_cost(session, monitor_class, n: int = 30) -> dict:
    """Direct cost of one refresh on an idle cluster: wall time, and CPU time of this process plus the workers
    (psutil), per refresh. Much less sensitive to other load than the workload timings."""
    import psutil

    procs = [psutil.Process(w.pid) for w in session.memory().workers]
    monitor = monitor_class(session, interval=3600, autostart=False)
    try:

        def cpu() -> float:
            return time.process_time() + sum(sum(p.cpu_times()[:2]) for p in procs)

        walls, cpu0 = [], cpu()
        for _ in range(n):
            start = time.perf_counter()
            monitor.refresh()
            walls.append(time.perf_counter() - start)
        cpu_per = (cpu() - cpu0) / n
    finally:
        monitor.close()
    return {"wall_ms_median": statistics.median(walls) * 1000, "wall_ms_max": max(walls) * 1000, "cpu_ms": cpu_per * 1000}


def run(args: argparse.Namespace) -> dict:
    import gpu_dask_kit
    from gpu_dask_kit.notebook.widgets import MemoryMonitor

    if args.quick:
        args.size, args.chunks, args.repeats = min(args.size, 600), min(args.chunks, 300), 1
    args.reps = common.reps(args, 6)

    session = gpu_dask_kit.start_cluster(device=args.device, n_workers=args.workers, threads_per_worker=1, verbose=False)
    times: dict[str, list[float]] = {"off": [], "on": []}
    ticks = []
    try:
        workload(args.size, args.chunks, 2)  # warm-up: imports, worker pools, first task graphs
        for rep in range(args.reps):
            for condition in ("off", "on") if rep % 2 == 0 else ("on", "off"):
                monitor = MemoryMonitor(session, interval=args.interval) if condition == "on" else None
                try:
                    times[condition].append(workload(args.size, args.chunks, args.repeats))
                finally:
                    if monitor is not None:
                        ticks.append(monitor.ticks)
                        monitor.close()
                print(f"rep {rep + 1}/{args.reps} {condition:>3}: {times[condition][-1]:.3f} s", flush=True)
        mode, n_workers = session.mode, session.n_workers
        cost = refresh_cost(session, MemoryMonitor)
    finally:
        session.close()

    off, on = stats(times["off"]), stats(times["on"])
    pairs = [b / a - 1 for a, b in zip(times["off"], times["on"], strict=False)]
    return {
        "workload": f"(x + x.T).std(axis=0).sum() on a {args.size}x{args.size} float64 dask array, chunks {args.chunks}, x{args.repeats} per repetition",
        "interval_s": args.interval,
        "mode": mode,
        "n_workers": n_workers,
        "threads_per_worker": 1,
        "samples": times,
        "off": off,
        "on": on,
        "monitor_ticks_per_rep": ticks,
        "refresh_cost": cost,
        "overhead_bound_cpu": cost["cpu_ms"] / 1000 / args.interval / (os.cpu_count() or 1),
        "overhead_median": on["median"] / off["median"] - 1,
        "overhead_min": on["min"] / off["min"] - 1,
        "overhead_paired_median": statistics.median(pairs),
    }


def markdown(result: dict) -> str:
    rows = [
        f"| monitor {name} | {r['min']:.3f} | {r['median']:.3f} | {r['max']:.3f} | {r['n']} |"
        for name, r in (("off", result["off"]), (f"on ({result['interval_s']:g} s refresh)", result["on"]))
    ]
    m, c = result["machine"], result["refresh_cost"]
    return "\n".join(
        [
            common.header(result, f"Memory monitor overhead, {result['mode'].upper()}, {result['off']['n']} interleaved repetitions"),
            f"Workload: {result['workload']}; {result['mode'].upper()} cluster, {result['n_workers']} workers x 1 thread. "
            "Interleaved repetitions; seconds per repetition.",
            "",
            "| condition | min | median | max | reps |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Overhead: **{result['overhead_median'] * 100:+.1f} %** (medians), {result['overhead_min'] * 100:+.1f} % (minima), "
            f"{result['overhead_paired_median'] * 100:+.1f} % (median of paired ratios). Target: <= +2 %. "
            f"Monitor refreshes per repetition: {result['monitor_ticks_per_rep']}. On a shared machine the timings carry "
            "the other load's noise (load averages above).",
            "",
            f"Direct cost of one refresh (idle cluster, {result['n_workers']} workers): {c['wall_ms_median']:.1f} ms wall (median; max "
            f"{c['wall_ms_max']:.1f} ms), {c['cpu_ms']:.1f} ms CPU summed over the kernel and the workers. At a "
            f"{result['interval_s']:g} s refresh that is at most **{result['overhead_bound_cpu'] * 100:.2f} %** of the machine's "
            f"{m['cpus']} cores.",
            "",
        ]
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", type=int, default=2, help="reductions per repetition (default 2)")
    parser.add_argument("--size", type=int, default=2500, help="array side (default 2500)")
    parser.add_argument("--chunks", type=int, default=500, help="chunk side (default 500)")
    parser.add_argument("--interval", type=float, default=1.0, help="monitor refresh in seconds (default 1.0)")
    parser.add_argument("--workers", type=int, default=2, help="workers (default 2)")
    parser.add_argument("--device", default="cpu", help="cpu, gpu or auto (default cpu)")


def main(argv: list[str] | None = None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
