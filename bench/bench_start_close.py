"""Start and close latency: the kit against the same cluster set up by hand, same run, interleaved.

    python -m bench.bench_start_close [--reps 7] [--quick] [--device auto|cpu]

CPU: gpu_dask_kit.start_cluster(device="cpu") against a raw distributed.LocalCluster + Client; both start
2 worker processes x 1 thread, 1 GiB each, dashboard on 127.0.0.1:0. Run always.

GPU (added when detect() says GPU): start_cluster(device="gpu", rmm_pool_size=P) against a raw
dask_cuda.LocalCUDACluster with seed 002's hand-written memory set-up in today's API
(``client.run(rmm.reinitialize, pool_allocator=True, initial_pool_size=P)``,
``client.run(cupy.cuda.set_allocator, rmm_cupy_allocator)`` with ``from rmm.allocators.cupy import
rmm_cupy_allocator``, and the same ``set_allocator`` in the client process). Both: one worker per GPU,
the same pool P (half the smallest GPU, at most 16 GiB as in the seed), device_memory_limit 0.8 of the GPU,
4 GiB host memory per worker. The client process gets CuPy-on-RMM but no pool of its own on both sides.

"ready" is the time until a task round-trips (on GPU: a CuPy allocation on the workers), "close" until
every worker process has exited. Goal: kit / raw <= 1.05 (medians).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from . import common
from .common import fmt, stats

NAME = "start_close"
CPU_CONFIG = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")
GPU_HOST_MEMORY = "4GiB"
SEED_POOL = 16 * 2**30  # seed 002: rmm_pool_size=parse_bytes("16GiB")


def add_arguments(parser) -> None:
    parser.add_argument("--repeats", dest="reps", type=int, help="same as --reps (older name)")
    parser.add_argument(
        "--device", choices=("auto", "cpu"), default="auto", help="auto: CPU comparison, plus the GPU one when a GPU is usable (default); cpu: CPU only"
    )


def _close_raw(client: Any, cluster: Any) -> float:
    """Close a hand-made cluster and wait until its worker processes are gone; the seconds that took
    (the worker PIDs are collected before the clock starts)."""
    pids = list(client.run(os.getpid).values())
    t1 = time.perf_counter()
    client.close()
    cluster.close()
    common.end_processes(pids, timeout=30)
    return time.perf_counter() - t1


# -- CPU ---------------------------------------------------------------------------------------------------
def raw_cpu_once() -> tuple[float, float]:
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(**CPU_CONFIG, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0")
    client = Client(cluster)
    client.wait_for_workers(CPU_CONFIG["n_workers"])
    client.submit(sum, [1, 2]).result()
    ready = time.perf_counter() - t0
    return ready, _close_raw(client, cluster)


def kit_cpu_once() -> tuple[float, float]:
    import gpu_dask_kit as kit

    t0 = time.perf_counter()
    session = kit.start_cluster(device="cpu", verbose=False, **CPU_CONFIG)
    session.client.submit(sum, [1, 2]).result()
    ready = time.perf_counter() - t0
    t1 = time.perf_counter()
    session.close()  # waits for the worker processes itself
    return ready, time.perf_counter() - t1


# -- GPU (runs only where detect() reports a usable GPU) -----------------------------------------------------
def gpu_config(report: Any) -> dict[str, Any]:
    """Worker count, pool and spill limit shared by both GPU variants, from the detection report."""
    from gpu_dask_kit.memory import align_pool_size

    smallest = min(g.memory_total for g in report.gpus)
    return {
        "n_workers": len(report.gpus),
        "visible": ",".join(str(g.index) for g in report.gpus),
        "pool": align_pool_size(min(SEED_POOL, smallest // 2)),
        "device_memory_limit": int(0.8 * smallest),
    }


_cupy_probe: Callable[[], float] = lambda: float(__import__("cupy").arange(1000, dtype="float64").sum())  # noqa: E731


def raw_gpu_once(cfg: dict[str, Any]) -> tuple[float, float]:
    """Seed 002's set-up, written against dask-cuda 26.x and the current RMM API."""
    import cupy
    import rmm
    from dask_cuda import LocalCUDACluster
    from distributed import Client
    from rmm.allocators.cupy import rmm_cupy_allocator

    t0 = time.perf_counter()
    cluster = LocalCUDACluster(
        n_workers=cfg["n_workers"],
        threads_per_worker=1,
        CUDA_VISIBLE_DEVICES=cfg["visible"],
        device_memory_limit=cfg["device_memory_limit"],
        memory_limit=GPU_HOST_MEMORY,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    client.wait_for_workers(cfg["n_workers"])
    client.run(rmm.reinitialize, pool_allocator=True, initial_pool_size=cfg["pool"])
    client.run(cupy.cuda.set_allocator, rmm_cupy_allocator)
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    client.submit(_cupy_probe).result()
    ready = time.perf_counter() - t0
    return ready, _close_raw(client, cluster)


def kit_gpu_once(cfg: dict[str, Any]) -> tuple[float, float]:
    import gpu_dask_kit as kit

    t0 = time.perf_counter()
    session = kit.start_cluster(
        device="gpu",
        n_workers=cfg["n_workers"],
        threads_per_worker=1,
        memory_limit=GPU_HOST_MEMORY,
        rmm_pool_size=cfg["pool"],
        device_memory_limit=cfg["device_memory_limit"],
        verbose=False,
    )
    session.client.submit(_cupy_probe).result()
    ready = time.perf_counter() - t0
    t1 = time.perf_counter()
    session.close()
    return ready, time.perf_counter() - t1


# -- the benchmark -------------------------------------------------------------------------------------------
LABELS = {
    "raw_cpu": "raw LocalCluster + Client",
    "kit_cpu": "gpu_dask_kit.start_cluster(device='cpu')",
    "raw_gpu": "raw LocalCUDACluster + hand-written RMM pool and CuPy allocator (seed 002)",
    "kit_gpu": "gpu_dask_kit.start_cluster(device='gpu', rmm_pool_size=P)",
}


def run(args) -> dict:
    import gpu_dask_kit

    reps = common.reps(args, 7)
    report = gpu_dask_kit.detect()
    variants: dict[str, Callable[[], tuple[float, float]]] = {"raw_cpu": raw_cpu_once, "kit_cpu": kit_cpu_once}
    config: dict[str, Any] = {"cpu": CPU_CONFIG}
    if args.device == "auto" and report.mode == "gpu":
        cfg = gpu_config(report)
        config["gpu"] = {**cfg, "memory_limit": GPU_HOST_MEMORY}
        variants.update(raw_gpu=lambda: raw_gpu_once(cfg), kit_gpu=lambda: kit_gpu_once(cfg))
    if not args.quick:
        for fn in variants.values():  # warm-up: first spawn, imports on both sides (import cost is not a start)
            fn()
    samples: dict[str, dict[str, list[float]]] = {name: {"ready": [], "close": []} for name in variants}
    for rep, order in enumerate(common.rotations(list(variants), reps)):
        for name in order:
            ready, close = variants[name]()
            samples[name]["ready"].append(ready)
            samples[name]["close"].append(close)
            print(f"  rep {rep + 1}/{reps} {name}: ready {ready:.2f} s, close {close:.2f} s", flush=True)
    summary = {name: {k: stats(v) for k, v in d.items()} for name, d in samples.items()}
    ratios = {}
    for device in ("cpu", "gpu"):
        kit, raw = summary.get(f"kit_{device}"), summary.get(f"raw_{device}")
        if kit and raw:
            ratios[device] = {k: kit[k]["median"] / raw[k]["median"] for k in ("ready", "close")}
            ratios[device]["start_plus_close"] = (kit["ready"]["median"] + kit["close"]["median"]) / (raw["ready"]["median"] + raw["close"]["median"])
    return {
        "config": config,
        "reps": reps,
        "gpu_skipped": None if "gpu" in config else report.reason_text,
        "samples": samples,
        "summary": summary,
        "ratio_median": ratios,
        "goal_ratio": 1.05,
    }


def markdown(result: dict) -> str:
    s = result["summary"]
    lines = [
        common.header(result, f"Start and close: kit vs raw, {result['reps']} interleaved repetitions"),
        "| cluster | ready min / median / max (s) | close min / median / max (s) |",
        "|---|---|---|",
    ]
    for name in s:
        lines.append(f"| {LABELS[name]} | {fmt(s[name]['ready'])} | {fmt(s[name]['close'])} |")
    lines.append("")
    for device, q in result["ratio_median"].items():
        verdict = "kit faster" if q["start_plus_close"] < 1 else ("within goal" if q["start_plus_close"] <= result["goal_ratio"] else "ABOVE GOAL")
        lines.append(
            f"- {device.upper()}: kit / raw (medians): ready {q['ready']:.3f}, close {q['close']:.3f}, "
            f"start + close **{q['start_plus_close']:.3f}** (goal <= {result['goal_ratio']}: {verdict})"
        )
    if "gpu" in result["config"]:
        g = result["config"]["gpu"]
        lines.append(
            f"- GPU set-up on both sides: {g['n_workers']} worker(s), RMM pool {g['pool'] / 2**30:.1f} GiB, "
            f"device_memory_limit {g['device_memory_limit'] / 2**30:.1f} GiB, host memory {g['memory_limit']} per worker."
        )
    else:
        lines.append(f"- GPU comparison not run: {result['gpu_skipped']}")
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
