"""Shared benchmark plumbing: interleaved repetitions, min/median/max, machine and versions, result files,
and process accounting (every benchmark ends the processes it started, by PID, and reports leftovers).

Every benchmark module has the same shape::

    NAME = "workloads"
    def add_arguments(parser): ...          # its own options (besides --quick, --reps, --out)
    def run(args) -> dict                   # the measurements (JSON-able)
    def markdown(result) -> str             # its section of RESULTS.md
    def main(argv=None) -> dict             # = common.main_for(module, argv): standalone run, writes files

``python -m bench.<module> [--quick] [--reps N] [--out DIR]`` writes ``<out>/<date>-<machine>-<NAME>.json``
and ``.md``; ``python -m bench`` runs them all and writes one combined ``<date>-<machine>.json``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
#: Where --quick runs write unless --out says otherwise (ignored by git: bench/.gitignore).
QUICK_RESULTS = os.path.join(RESULTS, "quick")

_VERSIONED = (
    "gpu-dask-kit",
    "dask",
    "distributed",
    "numpy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "psutil",
    "nbclient",
    "ipykernel",
    "dask-cuda",
    "cupy",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "rmm",
    "rmm-cu12",
    "rmm-cu13",
    "cudf",
    "cudf-cu12",
    "cudf-cu13",
    "dask-cudf",
    "cuml",
    "nvidia-ml-py",
)


# -- statistics --------------------------------------------------------------------------------------------
def stats(values: Iterable[float]) -> dict[str, float]:
    values = list(values)
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def fmt(s: dict[str, float], digits: int = 2) -> str:
    """'min / median / max' of a stats() dict."""
    return f"{s['min']:.{digits}f} / {s['median']:.{digits}f} / {s['max']:.{digits}f}"


def rotations(names: list[str], reps: int) -> list[list[str]]:
    """The order of the conditions in each repetition: rotated by one each time (a, b, c / b, c, a / ...),
    so slow drift of the machine's load hits every condition alike."""
    return [names[i % len(names) :] + names[: i % len(names)] for i in range(reps)]


def interleave(conditions: dict[str, Callable[[], Any]], reps: int, log: Callable[[str], None] | None = print) -> dict[str, list[Any]]:
    """Run each condition ``reps`` times, interleaved (see :func:`rotations`); return each one's results."""
    out: dict[str, list[Any]] = {name: [] for name in conditions}
    for rep, order in enumerate(rotations(list(conditions), reps)):
        for name in order:
            out[name].append(conditions[name]())
            if log is not None:
                value = out[name][-1]
                log(f"  rep {rep + 1}/{reps} {name}: " + (f"{value:.3f} s" if isinstance(value, float) else "done"))
    return out


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self._start


# -- the machine -------------------------------------------------------------------------------------------
def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def machine() -> dict[str, Any]:
    """This machine: host, cores, memory, mode (gpu/cpu), GPU names, and ``slug`` (the file-name tag:
    ``cpu<cores>`` on CPU, the GPU model otherwise, e.g. ``nvidia-h100-80gb-hbm3`` or ``2x-nvidia-a100...``)."""
    from gpu_dask_kit import detect

    report = detect()
    gpus = [g.name for g in report.gpus]
    if report.mode == "gpu" and gpus:
        slug = (f"{len(gpus)}x-" if len(gpus) > 1 else "") + _slug(gpus[0])
    else:
        slug = f"cpu{os.cpu_count()}"
    return {
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "mode": report.mode,
        "reason": report.reason_text,
        "gpus": gpus,
        "gpu_memory_gib": [round(g.memory_total / 2**30, 1) for g in report.gpus],
        "driver": report.driver_version,
        "cuda": report.cuda_version,
        "platform": platform.platform(),
        "slug": slug,
    }


def versions() -> dict[str, str]:
    """Installed versions of what the benchmarks use (package metadata; nothing is imported)."""
    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def load_average() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def header(result: dict[str, Any], title: str) -> str:
    """The first lines of a benchmark's markdown: title, date, machine, versions, command."""
    m, v = result["machine"], result["versions"]
    where = f"{m['slug']}: {m['cpus']} cores, {m['memory_gib']} GiB" + (f", {', '.join(m['gpus'])}" if m["gpus"] else "")
    libs = ", ".join(
        f"{k} {v[k]}"
        for k in ("dask", "distributed", "numpy", "pandas", "dask-cuda", "cupy", "cupy-cuda12x", "cupy-cuda13x", "rmm", "rmm-cu12", "rmm-cu13", "cudf")
        if k in v
    )
    quick = " **(--quick: tiny sizes, for checking the code only; not a measurement)**" if result.get("quick") else ""
    return "\n".join(
        [
            f"### {title}{quick}",
            "",
            f"_{result['date']} · {where} · mode {m['mode'].upper()} · Python {m['python']}, {libs} · "
            f"load average before/after {result.get('load_before')} / {result.get('load_after')} · "
            f"`{result['command']}` · {result['duration_s']:.0f} s_",
            "",
        ]
    )


# -- processes ---------------------------------------------------------------------------------------------
def children() -> set[int]:
    """PIDs of this process's live descendants, minus multiprocessing's resource tracker (one per
    interpreter, kept for its lifetime) and zombies."""
    pids = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() == psutil.STATUS_ZOMBIE or "resource_tracker" in " ".join(proc.cmdline()):
                continue
        except psutil.Error:
            continue
        pids.add(proc.pid)
    return pids


def end_processes(pids: Iterable[int], timeout: float = 20.0) -> list[int]:
    """Wait up to ``timeout`` s for these PIDs (ones this benchmark started) to exit; terminate, then kill,
    the ones still running, each by its PID. Returns the PIDs that had to be ended."""
    from gpu_dask_kit.processes import end_processes as end

    procs = []
    for pid in set(pids):
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return end(procs, timeout, grace=5)


def leftovers(before: set[int], timeout: float = 20.0) -> list[int]:
    """End the descendants started since ``before`` that are still running after ``timeout`` s (by PID);
    return their PIDs (empty when the benchmark cleaned up after itself)."""
    return end_processes(children() - before, timeout=timeout)


# -- command line and files --------------------------------------------------------------------------------
def common_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 1 repetition: checks the code in seconds, measures nothing")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per condition (default: the benchmark's own)")
    parser.add_argument(
        "--out", default=None, help=f"folder for the result files (default {os.path.relpath(RESULTS)}, or {os.path.relpath(QUICK_RESULTS)} with --quick)"
    )
    return parser


def module_name(module: Any) -> str:
    """``bench.bench_x`` also when the module runs as ``__main__`` (``python -m bench.bench_x``)."""
    spec = getattr(module, "__spec__", None)
    return spec.name if spec is not None else module.__name__


def parser_for(module: Any) -> argparse.ArgumentParser:
    doc = (module.__doc__ or module.NAME).strip()
    parser = argparse.ArgumentParser(
        prog=f"python -m {module_name(module)}",
        description=doc.splitlines()[0],
        epilog="\n".join(doc.splitlines()[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common_arguments(parser)
    module.add_arguments(parser)
    return parser


def reps(args: argparse.Namespace, default: int) -> int:
    return 1 if args.quick and args.reps is None else (args.reps or default)


def measure(module: Any, args: argparse.Namespace, command: str) -> dict[str, Any]:
    """Run ``module`` with its parsed ``args``, and wrap the result with date, machine, versions, command,
    duration, load averages and the processes that had to be ended afterwards."""
    before, load_before, start = children(), load_average(), time.perf_counter()
    date = datetime.datetime.now().isoformat(timespec="seconds")
    try:
        result = module.run(args)
    finally:
        ended = leftovers(before)
    wrapper = {
        "benchmark": module.NAME,
        "date": date,
        "quick": bool(args.quick),
        "command": command,
        "duration_s": time.perf_counter() - start,
        "load_before": load_before,
        "load_after": load_average(),
        "machine": machine(),
        "versions": versions(),
        "leftover_processes": ended,
    }
    clash = set(wrapper) & set(result)
    if clash:
        raise KeyError(f"{module.NAME}.run() returned reserved keys {sorted(clash)}")
    return {**wrapper, **result}


def out_dir(out: str | None, quick: bool) -> str:
    return out or (QUICK_RESULTS if quick else RESULTS)


def tag(result: dict[str, Any]) -> str:
    return f"{result['date'][:10]}-{result['machine']['slug']}"


def write_text(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def write(name: str, payload: dict[str, Any], markdown: str, out: str | None = None) -> tuple[str, str]:
    """Write ``<out>/<date>-<machine>-<name>.json`` and ``.md``; return the paths."""
    folder = out_dir(out, bool(payload.get("quick")))
    base = os.path.join(folder, f"{tag(payload)}-{name}")
    return (
        write_text(base + ".json", json.dumps(payload, indent=1, default=str) + "\n"),
        write_text(base + ".md", markdown if markdown.endswith("\n") else markdown + "\n"),
    )


def main_for(module: Any, argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m bench.<module>``: measure, print the markdown, write the .json and .md."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(["python -m " + module_name(module), *argv])
    args = parser_for(module).parse_args(argv)
    result = measure(module, args, command)
    text = module.markdown(result)
    paths = write(module.NAME, result, text, args.out)
    print(text)
    print("written:", *paths)
    if result["leftover_processes"]:
        print(f"warning: had to end processes {result['leftover_processes']}", file=sys.stderr)
    return result
