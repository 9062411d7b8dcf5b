"""Each workshop notebook (notebooks/NN_*.ipynb) at small and at full scale, and the total at small scale.

    python -m bench.bench_notebooks [--reps 1] [--full-reps 1] [--scales small,full] [--only 00_start_here] [--quick]

Every notebook runs as ``gpu-dask-kit check`` runs it (``gpu_dask_kit.venue.execute_notebook``: a fresh
kernel on this interpreter, ``GPU_DASK_KIT_SCALE`` set, the notebook's own cluster started and closed by its
cells), and the wall time of the whole notebook is recorded, kernel start included. Scales alternate from
one round to the next (small, full / full, small / ...). A failing or timed-out notebook is reported with
its error and still timed. On a GPU machine the notebooks run in GPU mode, as at a workshop.

Defaults: 1 repetition at each scale (small: about 2.5 min per pass on 2 cores; full: the seed-scale cells,
100000 x 1000 SVD, 1225 regressions, a month of timeseries, ..., estimated 13 min on 2 cores); small runs
first. A notebook is stopped after ``--full-timeout`` / ``--small-timeout`` s, and none is started after
``--deadline-s`` (``python -m bench`` sets it from its time budget). ``--quick``: only 00_start_here at
small scale, once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from . import common
from .common import stats

NAME = "notebooks"
MIN_LEFT_S = 30  # do not start a notebook with less time than this left before the deadline


def add_arguments(parser) -> None:
    parser.add_argument("--full-reps", type=int, default=None, help="repetitions at full scale (default 1)")
    parser.add_argument("--scales", default="small,full", help="comma-separated scales (default small,full)")
    parser.add_argument("--only", default=None, help="comma-separated notebook names or stems (default: all)")
    parser.add_argument("--notebook-dir", default=None, help="where the NN_*.ipynb are (default: the repository's notebooks/)")
    parser.add_argument("--small-timeout", type=int, default=600, help="seconds per notebook at small scale (default 600)")
    parser.add_argument("--full-timeout", type=int, default=900, help="seconds per notebook at full scale (default 900)")
    parser.add_argument(
        "--deadline-s",
        type=float,
        default=0,
        help="stop starting notebooks after this many seconds (each gets at most what is left; the rest are reported as not run); 0: no deadline (default)",
    )


def run(args) -> dict:
    from gpu_dask_kit import venue

    folder = Path(args.notebook_dir) if args.notebook_dir else Path(common.HERE).parent / "notebooks"
    notebooks = venue.find_notebooks(folder)
    only = ["00_start_here"] if args.quick and not args.only else (args.only.split(",") if args.only else None)
    if only:
        notebooks = [p for p in notebooks if p.stem in only or p.name in only]
    if not notebooks:
        raise SystemExit(f"no notebooks to run in {folder} (only={only})")
    scales = ["small"] if args.quick else args.scales.split(",")
    due = {"small": common.reps(args, 1), "full": 1 if args.quick else (args.full_reps or 1)}
    timeout = {"small": args.small_timeout, "full": args.full_timeout}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {p.stem: [] for p in notebooks} for s in scales}
    not_run: dict[str, dict[str, int]] = {s: {} for s in scales}
    totals: dict[str, list[float]] = {s: [] for s in scales}
    rounds = max(due[s] for s in scales)
    deadline = time.monotonic() + args.deadline_s if args.deadline_s else None
    for r, order in enumerate(common.rotations(scales, rounds)):
        for scale in order:
            if due[scale] <= r:
                continue
            total, complete = 0.0, True
            for path in notebooks:
                left = deadline - time.monotonic() if deadline else float("inf")
                if left < MIN_LEFT_S:
                    not_run[scale][path.stem] = not_run[scale].get(path.stem, 0) + 1
                    complete = False
                    print(f"  round {r + 1}/{rounds} {scale:<5} {path.stem}: not run (time budget spent)", flush=True)
                    continue
                res = venue.execute_notebook(path, scale=scale, timeout=int(min(timeout[scale], left)))
                runs[scale][path.stem].append({"seconds": res.seconds, "passed": res.passed, "error": res.error, "cell": res.cell})
                total += res.seconds
                print(f"  round {r + 1}/{rounds} {scale:<5} {path.stem}: {res.seconds:.1f} s {'pass' if res.passed else 'FAIL ' + str(res.error)}", flush=True)
            if complete:
                totals[scale].append(total)
    summary = {
        scale: {
            nb: {
                "seconds": stats(x["seconds"] for x in rs) if rs else None,
                "passed": all(x["passed"] for x in rs),
                "errors": sorted({f"cell {x['cell']}: {x['error']}" for x in rs if not x["passed"]}),
                "not_run": not_run[scale].get(nb, 0),
            }
            for nb, rs in per.items()
        }
        for scale, per in runs.items()
    }
    return {
        "notebook_dir": str(folder),
        "notebooks": [p.stem for p in notebooks],
        "scales": scales,
        "reps": {s: due[s] for s in scales},
        "timeouts_s": {s: timeout[s] for s in scales},
        "deadline_s": args.deadline_s or None,
        "runs": runs,
        "summary": summary,
        "total": {s: stats(t) if t else None for s, t in totals.items()},
    }


def markdown(result: dict) -> str:
    scales, s = result["scales"], result["summary"]
    lines = [
        common.header(result, "Notebooks: wall time per notebook (fresh kernel, cluster start and close included)"),
        "Repetitions: "
        + ", ".join(f"{k} {v}" for k, v in result["reps"].items())
        + "; per-notebook limit: "
        + ", ".join(f"{k} {v} s" for k, v in result["timeouts_s"].items())
        + ".",
        "",
        "| notebook | " + " | ".join(f"{sc} scale: seconds min / median / max" for sc in scales) + " |",
        "|---|" + "---|" * len(scales),
    ]
    for nb in result["notebooks"]:
        cells = []
        for sc in scales:
            e = s[sc][nb]
            cell = common.fmt(e["seconds"], 1) if e["seconds"] else ""
            if not e["passed"]:
                cell += f" **FAILED** ({'; '.join(e['errors'])[:160]})"
            if e["not_run"]:
                cell += f" (not run {e['not_run']}x: time budget spent)"
            cells.append(cell.strip())
        lines.append(f"| {nb} | " + " | ".join(cells) + " |")
    lines.append("| **total** | " + " | ".join(f"**{common.fmt(result['total'][sc], 1)}**" if result["total"][sc] else "incomplete" for sc in scales) + " |")
    if result.get("deadline_s"):
        lines.append(
            f"\nTime budget for this benchmark: {result['deadline_s']:.0f} s (`make bench` keeps its whole run within "
            "its budget; notebooks that did not fit are marked)."
        )
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
