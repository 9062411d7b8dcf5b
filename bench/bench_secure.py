"""A whole process through the kit, secure (the default: TLS with the session's own credentials) against
plain TCP (``security=False``), in interleaved pairs (issue 20: what safety costs).

    python -m bench.bench_secure [--reps 9] [--quick] [--device cpu|auto]

Each sample is one fresh ``python bench/process_child.py kit DEVICE`` process (see
:mod:`bench.bench_process`): import, start 2 CPU workers x 1 thread, compute a small dask array sum, close,
exit. The plain side runs the same child with ``DASK_GPU_DASK_KIT__SECURITY=False`` in its environment
(the instructor's config switch), so the two sides differ in that one setting. The secure side pays for
the key (RSA 2048, ``Security.temporary()``), two files written 0600, and TLS handshakes between the
client, scheduler, nannies and workers. A pair runs both sides back to back, the order alternating; one
pair before the measured ones warms the file cache. Reported: wall and CPU seconds per side and secure /
plain ratios (of the medians, and the median of the per-pair ratios).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from . import common
from .bench_process import one_process
from .common import fmt, stats

NAME = "secure"
SIDES = ("secure", "plain")
LABELS = {"secure": "`start_cluster(...)` (default: TLS, per-session credentials)", "plain": "`start_cluster(...)` with `security=False` (plain TCP)"}
_PLAIN_ENV = "DASK_GPU_DASK_KIT__SECURITY"


def add_arguments(parser) -> None:
    parser.add_argument("--device", choices=("auto", "cpu"), default="cpu", help="the kit's device option (default cpu: no detection in the numbers)")


def one(side: str, device: str) -> dict[str, float]:
    """One child process of ``side``; its wall and CPU seconds."""
    saved = os.environ.pop(_PLAIN_ENV, None)
    if side == "plain":
        os.environ[_PLAIN_ENV] = "False"
    try:
        got = one_process("kit", device)
    finally:
        os.environ.pop(_PLAIN_ENV, None)
        if saved is not None:
            os.environ[_PLAIN_ENV] = saved
    print(f"  {side}: wall {got['wall']:.2f} s, cpu {got['cpu']:.2f} s", flush=True)
    return got


def run(args) -> dict[str, Any]:
    pairs = common.reps(args, 9)
    if not args.quick:
        for side in SIDES:  # warm-up
            one(side, args.device)
    samples: dict[str, dict[str, list[float]]] = {s: {"wall": [], "cpu": []} for s in SIDES}
    for pair in range(pairs):
        for side in SIDES if pair % 2 == 0 else SIDES[::-1]:
            for key, value in one(side, args.device).items():
                samples[side][key].append(value)
    summary = {s: {k: stats(v) for k, v in d.items()} for s, d in samples.items()}
    ratio = {}
    for key in ("wall", "cpu"):
        per_pair = [a / b for a, b in zip(samples["secure"][key], samples["plain"][key], strict=True)]
        ratio[key] = {"of_medians": summary["secure"][key]["median"] / summary["plain"][key]["median"], "pairs": stats(per_pair)}
    return {"pairs": pairs, "device": args.device, "samples": samples, "summary": summary, "ratio": ratio}


def markdown(result: dict) -> str:
    s, r = result["summary"], result["ratio"]
    lines = [
        common.header(result, f"Whole process, secure (TLS) vs plain TCP: import, start 2 CPU workers, compute, close; {result['pairs']} interleaved pairs"),
        f"Device: `{result['device']}`. Each sample is a fresh `python bench/process_child.py kit` process; CPU = user + system of the "
        "process and the worker processes it reaped. On a machine shared with other jobs the numbers are inflated by their load.",
        "",
        "| process | wall min / median / max (s) | CPU min / median / max (s) |",
        "|---|---|---|",
    ]
    lines += [f"| {LABELS[side]} | {fmt(s[side]['wall'])} | {fmt(s[side]['cpu'])} |" for side in SIDES]
    lines.append("")
    for key in ("wall", "cpu"):
        q = r[key]
        lines.append(f"- {key.upper()} secure / plain: ratio of medians **{q['of_medians']:.3f}**; per-pair ratios min / median / max {fmt(q['pairs'], 3)}")
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
