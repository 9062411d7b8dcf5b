"""Start and close latency: the kit against a raw LocalCluster + Client, same run, interleaved.

    python -m bench.bench_start_close [--repeats 7]

Both start 2 worker processes x 1 thread, 1 GiB each, dashboard on 127.0.0.1:0, and wait for the
workers; "ready" is the time until a task round-trips, "close" until every worker process has exited.
"""

from __future__ import annotations

import argparse
import os
import time

import psutil

from .common import machine, stats, write

CONFIG = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def _wait_exit(pids: list[int]) -> None:
    psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=30)


def raw_once() -> tuple[float, float]:
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(**CONFIG, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0")
    client = Client(cluster)
    client.wait_for_workers(2)
    client.submit(sum, [1, 2]).result()
    ready = time.perf_counter() - t0
    pids = list(client.run(os.getpid).values())
    t1 = time.perf_counter()
    client.close()
    cluster.close()
    _wait_exit(pids)
    return ready, time.perf_counter() - t1


def kit_once() -> tuple[float, float]:
    import gpu_dask_kit as kit

    t0 = time.perf_counter()
    session = kit.start_cluster(device="cpu", verbose=False, **CONFIG)
    session.client.submit(sum, [1, 2]).result()
    ready = time.perf_counter() - t0
    t1 = time.perf_counter()
    session.close()  # waits for the worker processes itself
    return ready, time.perf_counter() - t1


def run(repeats: int) -> dict:
    import gpu_dask_kit  # noqa: F401  (import cost is not part of a start)

    raw_once(), kit_once()  # warm-up: first spawn, imports on both sides
    samples = {"raw": {"ready": [], "close": []}, "kit": {"ready": [], "close": []}}
    for i in range(repeats):
        order = [("raw", raw_once), ("kit", kit_once)] if i % 2 == 0 else [("kit", kit_once), ("raw", raw_once)]
        for name, fn in order:
            ready, close = fn()
            samples[name]["ready"].append(ready)
            samples[name]["close"].append(close)
    summary = {name: {k: stats(v) for k, v in d.items()} for name, d in samples.items()}
    ratio = {k: summary["kit"][k]["median"] / summary["raw"][k]["median"] for k in ("ready", "close")}
    total = (summary["kit"]["ready"]["median"] + summary["kit"]["close"]["median"]) / (summary["raw"]["ready"]["median"] + summary["raw"]["close"]["median"])
    return {"benchmark": "start_close", "config": CONFIG, "repeats": repeats, "samples": samples, "summary": summary,
            "ratio_median": {**ratio, "start_plus_close": total}, "machine": machine()}


def markdown(result: dict) -> str:
    s = result["summary"]
    lines = [f"### Start and close, CPU ({result['machine']['cpus']} cores), {result['repeats']} interleaved repetitions",
             "", "| | ready min / median / max (s) | close min / median / max (s) |", "|---|---|---|"]
    for name, label in (("raw", "raw LocalCluster + Client"), ("kit", "gpu_dask_kit.start_cluster")):
        r, c = s[name]["ready"], s[name]["close"]
        lines.append(f"| {label} | {r['min']:.2f} / {r['median']:.2f} / {r['max']:.2f} | {c['min']:.2f} / {c['median']:.2f} / {c['max']:.2f} |")
    q = result["ratio_median"]
    lines += ["", f"kit / raw (medians): ready {q['ready']:.3f}, close {q['close']:.3f}, start + close {q['start_plus_close']:.3f}", ""]
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    result = run(args.repeats)
    text = markdown(result)
    paths = write("start_close", result, text)
    print(text)
    print("written:", *paths)
    return result


if __name__ == "__main__":
    main()
