"""The notebook start cell re-run in one real Jupyter kernel: always exactly one cluster, no port clash.

``test_same_cell_rerun_20_times`` runs the start cell 20 times unchanged (the first run starts the
cluster, the 19 re-runs must reuse it). ``test_edited_cell_rerun`` re-runs it with the worker count
changed each time (each run must close the previous cluster before starting the next). After every
run the kernel's processes are counted: one cluster's worth (its workers plus multiprocessing's
resource tracker), never more. Every stream the kernel publishes, and its own stdout/stderr, are
searched for "already in use" (distributed's "Port 8787 is already in use" warning).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics

from gpu_dask_kit import registry

from ..conftest import kit_children, wait_for_no_new_children
from .conftest import ROOT
from .kernels import Kernel, running, tree

RUNS = 20
HANG_GUARD_S = 60.0  # per run; speed is a benchmark's business, this only catches a hang

CELL = """\
import json, gpu_dask_kit as kit
s = kit.start_cluster(n_workers={n}, memory_limit="1GiB")
print(json.dumps({{"id": s.id, "pids": sorted(w.pid for w in s.memory().workers), "scheduler": s.scheduler_address,
                  "dashboard": s.dashboard_link}}))
"""

CHECK = """\
import dask.array as da
print(json.dumps({"sum": int(da.arange(1_000_000, chunks=100_000).sum().compute())}))
"""


def _kernel_processes(kernel: Kernel) -> dict[int, str]:
    """The kernel's live descendants: {pid: "worker" | "resource_tracker" | "other"}."""
    kinds = {}
    for proc in running(tree(kernel.pid)[1:]):
        try:
            cmd = " ".join(proc.cmdline())
        except Exception:
            continue
        kinds[proc.pid] = "resource_tracker" if "resource_tracker" in cmd else "worker" if "spawn_main" in cmd else "other"
    return kinds


def _stats(values: list[float]) -> dict:
    return {"min_s": round(min(values), 3), "median_s": round(statistics.median(values), 3), "max_s": round(max(values), 3), "n": len(values)}


async def _rerun(worker_counts: list[int], runtime_dir, tmp_path, reaper, figures) -> list[dict]:
    before = kit_children()
    kernel = Kernel(runtime_dir, tmp_path / "kernel.log", ROOT)
    runs = []
    try:
        await kernel.start()
        for i, n in enumerate(worker_counts):
            result = await kernel.execute(CELL.format(n=n), timeout=HANG_GUARD_S + 60)
            info = result.last_json()
            procs = _kernel_processes(kernel)
            reaper.track(tree(kernel.pid)[1:])
            workers = sorted(pid for pid, kind in procs.items() if kind == "worker")
            runs.append(
                {
                    "run": i + 1,
                    "n_workers": n,
                    "elapsed_s": round(result.elapsed, 3),
                    "id": info["id"],
                    "first_line": result.stdout.splitlines()[0],
                    "worker_pids": info["pids"],
                    "kernel_workers": workers,
                    "kernel_processes": len(procs),
                    "dashboard": info["dashboard"],
                    "sessions": [r.id for r in registry.list_sessions()],
                }
            )
            # One cluster's worth after every run: its workers, the tracker, nothing else.
            assert workers == info["pids"] and len(workers) == n, runs[-1]
            assert sorted(procs.values()) == sorted(["worker"] * n + ["resource_tracker"]), runs[-1]
            assert runs[-1]["sessions"] == [info["id"]], runs[-1]
        assert (await kernel.execute(CHECK)).last_json()["sum"] == 499999500000
        output = kernel.all_output()
        figures["already_in_use_warnings"] = output.count("already in use")
        figures["dashboards"] = sorted({r["dashboard"] for r in runs})
        assert "already in use" not in output, output
        assert all(r["elapsed_s"] < HANG_GUARD_S for r in runs)
        last_procs = tree(kernel.pid)
        reaper.track(last_procs)
    finally:
        figures["runs"] = runs
        await kernel.shutdown(now=False)
        left = wait_for_no_new_children(before, timeout=15) | {p.pid for p in reaper.survivors()}
        figures["leaked"] = sorted(left)
    assert not left, f"leaked processes: {left}"
    return runs


def test_same_cell_rerun_20_times(runtime_dir, tmp_path, reaper, figures):
    runs = asyncio.run(_rerun([2] * RUNS, runtime_dir, tmp_path, reaper, figures))
    first, reruns = runs[0], runs[1:]
    figures["first_run"] = first["elapsed_s"]
    figures["reruns"] = _stats([r["elapsed_s"] for r in reruns])
    assert first["first_line"].startswith("Started a CPU cluster with 2 worker(s).")
    assert all(r["first_line"] == "Reusing the running CPU cluster (same options); session.close() to start afresh." for r in reruns), [
        r["first_line"] for r in reruns
    ]
    assert {r["id"] for r in runs} == {first["id"]} and all(r["worker_pids"] == first["worker_pids"] for r in runs)


def test_edited_cell_rerun(runtime_dir, tmp_path, reaper, figures):
    counts = [1, 2, 1, 2, 1, 2]
    runs = asyncio.run(_rerun(counts, runtime_dir, tmp_path, reaper, figures))
    figures["reruns"] = _stats([r["elapsed_s"] for r in runs[1:]])
    for prev, run in itertools.pairwise(runs):
        assert run["first_line"].startswith(
            f"Closing the running CPU cluster first, because options changed (n_workers: {prev['n_workers']} -> {run['n_workers']})"
        ), run["first_line"]
        assert run["id"] != prev["id"] and not set(run["worker_pids"]) & set(prev["worker_pids"])
    assert len({r["id"] for r in runs}) == len(counts)
