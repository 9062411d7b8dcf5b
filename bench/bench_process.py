"""A whole process through the kit against the same process written by hand, in interleaved pairs.

    python -m bench.bench_process [--reps 9] [--quick] [--device auto|cpu]

Each sample is one fresh Python process (``bench/process_child.py kit|raw``) that imports, starts 2 CPU
worker processes x 1 thread (1 GiB each), computes a small dask array sum, closes and exits: what a learner's
script or a notebook's first and last cells cost, imports and interpreter start included. The kit side is
``gpu_dask_kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB")`` (``device`` as
given: ``auto`` runs detection as a learner's call does; ``cpu`` skips it); the hand side is
``distributed.LocalCluster`` with the same workers, ``host``, dashboard port and TLS (``Security.temporary()``: the
kit is secure by default, so the same safety by hand), plus ``Client``.

A pair runs both sides back to back, the order alternating (kit first in even pairs); one pair before the
measured ones warms the file cache. Per side: wall seconds (``Popen`` to exit) and CPU seconds (user + system
of the process and every child it waited for: the worker processes, from ``os.wait4``). Reported: the ratio
of the medians and the median of the per-pair ratios, kit / hand. Goal: <= 1.00.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import psutil

from . import common
from .common import fmt, stats

NAME = "process"
CHILD = os.path.join(common.HERE, "process_child.py")
GOAL = 1.00
SIDES = ("kit", "hand")
LABELS = {
    "kit": "`gpu_dask_kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit='1GiB')`",
    "hand": "`distributed.LocalCluster(n_workers=2, threads_per_worker=1, memory_limit='1GiB', security=Security.temporary(), protocol='tls://')` + `Client`",
}


def add_arguments(parser) -> None:
    parser.add_argument(
        "--device", choices=("auto", "cpu"), default="auto", help="the kit side's device option (default auto: detection runs, as in a learner's call)"
    )


def one_process(side: str, device: str, timeout: float = 120) -> dict[str, float]:
    """Run the child once; its wall and CPU seconds (itself and the children it reaped). A child still running
    after ``timeout`` s is ended with its descendants, by PID, and the run fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, CHILD, side, device], stdout=out, stderr=err)
        pid = 0
        try:
            while True:  # os.wait4 gives the rusage of the child and what it reaped; polled, for the timeout
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() - t0 > timeout:
                    raise TimeoutError(f"the {side} process ran over {timeout:.0f} s")
                time.sleep(0.005)
        finally:
            if not pid:
                tree = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
                common.end_processes(tree, timeout=5)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code != 0 or "sum=499999500000" not in stdout:
        raise RuntimeError(f"{side} process failed (exit {code}):\n{stdout[-2000:]}\n{stderr[-3000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime}


def _sample(side: str, device: str, hung: list[dict[str, Any]], pair: int) -> dict[str, float] | None:
    """One process; None (noted in ``hung``) when it ran over its time limit."""
    try:
        got = one_process(side, device)
    except TimeoutError as exc:
        hung.append({"pair": pair, "side": side, "error": str(exc)})
        print(f"  pair {pair + 1} {side}: {exc} (ended; the pair is run again)", flush=True)
        return None
    print(f"  pair {pair + 1} {side}: wall {got['wall']:.2f} s, cpu {got['cpu']:.2f} s", flush=True)
    return got


def run(args) -> dict[str, Any]:
    pairs = common.reps(args, 9)
    hung: list[dict[str, Any]] = []
    if not args.quick:
        for side in SIDES:  # warm-up: the file cache, .pyc files, the first spawn
            _sample(side, args.device, hung, -1)
    samples: dict[str, dict[str, list[float]]] = {s: {"wall": [], "cpu": []} for s in SIDES}
    attempt = 0
    while len(samples["kit"]["wall"]) < pairs and attempt < 2 * pairs:  # a pair with a hung process is re-run
        order = SIDES if attempt % 2 == 0 else SIDES[::-1]
        got = {side: _sample(side, args.device, hung, attempt) for side in order}
        attempt += 1
        if any(g is None for g in got.values()):
            continue
        for side, g in got.items():
            for key, value in g.items():  # type: ignore[union-attr]
                samples[side][key].append(value)
    done = len(samples["kit"]["wall"])
    if not done:
        raise RuntimeError(f"no pair completed; processes over the time limit: {hung}")
    summary = {s: {k: stats(v) for k, v in d.items()} for s, d in samples.items()}
    ratio = {}
    for key in ("wall", "cpu"):
        per_pair = [k / h for k, h in zip(samples["kit"][key], samples["hand"][key], strict=True)]
        ratio[key] = {
            "of_medians": summary["kit"][key]["median"] / summary["hand"][key]["median"],
            "median_of_pairs": stats(per_pair)["median"],
            "pairs": stats(per_pair),
        }
    result = {"pairs": done, "pairs_asked": pairs, "hung": hung, "device": args.device, "samples": samples, "summary": summary, "ratio": ratio}
    return {**result, "goal_ratio": GOAL}


def markdown(result: dict) -> str:
    s, r = result["summary"], result["ratio"]
    lines = [
        common.header(result, f"Whole process: import, start 2 CPU workers, compute, close; kit vs by hand, {result['pairs']} interleaved pairs"),
        f"Kit side device: `{result['device']}`. Each sample is a fresh `python bench/process_child.py` process; "
        "CPU = user + system of the process and the worker processes it reaped."
        + (f" Processes ended after running over their time limit (their pairs were run again): {result['hung']}." if result.get("hung") else "")
        + (f" **Only {result['pairs']} of {result['pairs_asked']} pairs completed.**" if result["pairs"] < result["pairs_asked"] else ""),
        "",
        "| process | wall min / median / max (s) | CPU min / median / max (s) |",
        "|---|---|---|",
    ]
    for side in SIDES:
        lines.append(f"| {LABELS[side]} | {fmt(s[side]['wall'])} | {fmt(s[side]['cpu'])} |")
    lines.append("")
    for key in ("wall", "cpu"):
        q = r[key]
        verdict = "within goal" if q["of_medians"] <= result["goal_ratio"] else "ABOVE GOAL"
        lines.append(
            f"- {key.upper()} kit / hand: ratio of medians **{q['of_medians']:.3f}** ({verdict}, goal <= {result['goal_ratio']:.2f}); "
            f"per-pair ratios min / median / max {fmt(q['pairs'], 3)}"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
