"""Seed-scale workloads (seed 002's RAPIDS Dask notebook) on this machine's CPU, and on its GPU when usable.

    python -m bench.bench_workloads [--reps N] [--heavy-reps N] [--quick] [--devices cpu,gpu]

Workloads, at the seed's sizes (``--quick``: tiny ones):

- svd: a 100000 x 1000 float64 random array in 1000 x 1000 chunks, persisted ("generate"), then
  ``da.linalg.svd`` persisted ("svd").
- dataframe: ``dask.datasets.timeseries()`` (2000-01-01..31 at 1 s: 2,592,000 rows), moved to the session's
  dataframe backend and persisted ("load"); ``groupby(["id", "name"]).agg({"x": ["sum", "mean"]})``;
  ``map_partitions`` sort by id (``len`` of it, as in the seed) and sort + rolling(3) mean of x, y (persisted).
  On GPU only with cuDF (without it the partitions would be pandas, i.e. CPU work).
- regressions: 1225 two-feature OLS fits (every pair of 50 features) on 1,000,000 rows through
  ``dask.delayed`` on data scattered with ``broadcast=True``. The fit is ordinary least squares by the normal
  equations on the array (NumPy on CPU, CuPy on GPU: the same arithmetic on both, no cuML needed).
- persist_compute: the row means of a 2,000,000 x 100 array from scratch, ``persist``, the row means
  again from the persisted array, and ``compute()`` of the whole array into this process (notebook 06 at
  full scale).

Repetitions: each round starts a fresh kit cluster per device (start-up is not timed), runs every workload
still due, and closes it; devices alternate order each round (interleaved). Defaults: ``--reps 3`` for the
other workloads, ``--heavy-reps 1`` for the svd on a CPU-only machine (about 70 s per run on 2 cores; 3 with a
GPU). On 2 cores the default run takes about 4 minutes. Achieved rates use the nominal FLOP / byte counts in ``WORK`` below; on a GPU they
are also given as a fraction of the GPU's peak (``bench/peaks.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from itertools import combinations
from typing import Any

from . import common, peaks
from .common import Timer, fmt, stats

NAME = "workloads"
HEAVY = ("svd",)

SIZES = {
    "seed": dict(
        svd_rows=100_000,
        svd_cols=1_000,
        svd_chunk=1_000,
        ts_end="2000-01-31",
        ts_freq="1s",
        reg_rows=1_000_000,
        reg_features=50,
        pc_rows=2_000_000,
        pc_cols=100,
        pc_chunk=100_000,
    ),
    "quick": dict(
        svd_rows=4_000,
        svd_cols=200,
        svd_chunk=1_000,
        ts_end="2000-01-03",
        ts_freq="20s",
        reg_rows=20_000,
        reg_features=6,
        pc_rows=100_000,
        pc_cols=20,
        pc_chunk=10_000,
    ),
}

#: Nominal work of each step: FLOPs, or bytes that must be touched at least once (a lower bound on the real
#: traffic, so achieved bandwidths are lower bounds too). m x n arrays of float64 (8 bytes).
WORK: dict[str, str] = {
    "svd.generate": "bytes = 8 m n (each element written once)",
    "svd.svd": "FLOPs = 6 m n^2 + 20 n^3 (thin R-SVD giving U1, S, V: Golub & Van Loan, Matrix Computations, 5.4.5); "
    "dask's tsqr does more than this, so the rate is a nominal one",
    "dataframe.load": "bytes = B(frame): pandas/cuDF memory_usage(deep=True) of the persisted frame, written once",
    "dataframe.groupby": "bytes = B(id, name, x): the grouped and aggregated columns, read once",
    "dataframe.sort": "bytes = 2 B(frame): read and write every column once",
    "dataframe.sort_rolling": "bytes = 2 B(frame) + 2 x 16 rows: the sort, then x and y read and written once",
    "regressions.scatter": "bytes = 8 rows (features + 1) x workers: copies sent",
    "regressions.fits": "bytes = pairs x 24 rows (3 columns read once per fit); FLOPs = pairs x 21 rows (3x3 Gram matrix and column sums)",
    "persist_compute.from_scratch": "bytes = 16 m n (generate: write once; mean: read once)",
    "persist_compute.persist": "bytes = 8 m n (written once)",
    "persist_compute.from_persisted": "bytes = 8 m n (read once)",
    "persist_compute.to_client": "bytes = 8 m n moved from the workers into this process (a transfer rate, not memory bandwidth)",
}
#: Steps whose byte rate is compared with the GPU's memory bandwidth (the transfer is not).
MEMORY_BOUND = {
    "svd.generate",
    "dataframe.load",
    "dataframe.groupby",
    "dataframe.sort",
    "dataframe.sort_rolling",
    "regressions.fits",
    "persist_compute.from_scratch",
    "persist_compute.persist",
    "persist_compute.from_persisted",
}


def add_arguments(parser) -> None:
    parser.add_argument("--heavy-reps", type=int, default=None, help="repetitions of the svd (default: 1 on a CPU-only machine, else --reps)")
    parser.add_argument("--devices", default=None, help="comma-separated: cpu, gpu (default: gpu,cpu with a GPU, else cpu)")
    parser.add_argument("--only", default=None, help="comma-separated workloads: svd, dataframe, regressions, persist_compute")


# -- workloads: each returns {step: {"seconds": s, "flops"|"bytes": n, ...}} --------------------------------
def _wait(*collections: Any) -> None:
    from distributed import wait

    wait(list(collections))


def svd(session: Any, z: dict[str, Any]) -> dict[str, Any]:
    import dask
    import dask.array as da

    from gpu_dask_kit.compute import random_array

    m, n = z["svd_rows"], z["svd_cols"]
    with Timer() as t_gen:
        x = random_array((m, n), chunks=(z["svd_chunk"], n), seed=12).persist()
        _wait(x)
    with Timer() as t_svd:
        u, s, v = dask.persist(*da.linalg.svd(x))
        _wait(u, s, v)
    del x, u, s, v
    return {"generate": {"seconds": t_gen.seconds, "bytes": 8 * m * n}, "svd": {"seconds": t_svd.seconds, "flops": 6 * m * n**2 + 20 * n**3}}


def _sort_and_rolling_mean(df):
    df = df.sort_values("id")
    return df[["x", "y"]].rolling(3).mean()


def dataframe(session: Any, z: dict[str, Any]) -> dict[str, Any]:
    import dask

    with Timer() as t_load:
        ddf = dask.datasets.timeseries(start="2000-01-01", end=z["ts_end"], freq=z["ts_freq"], seed=42)
        ddf = ddf.to_backend(dask.config.get("dataframe.backend")).persist()
        _wait(ddf)
    usage = ddf.memory_usage(deep=True, index=True).compute()
    frame = int(usage.sum())
    grouped = int(sum(usage[c] for c in ("id", "name", "x")))
    rows = len(ddf)
    with Timer() as t_group:
        ddf.groupby(["id", "name"]).agg({"x": ["sum", "mean"]}).compute()
    with Timer() as t_sort:
        len(ddf.map_partitions(lambda df: df.sort_values("id")))
    with Timer() as t_roll:
        result = ddf.map_partitions(_sort_and_rolling_mean, meta={"x": "float64", "y": "float64"}).persist()
        _wait(result)
    del ddf, result
    return {
        "load": {"seconds": t_load.seconds, "bytes": frame, "rows": rows},
        "groupby": {"seconds": t_group.seconds, "bytes": grouped},
        "sort": {"seconds": t_sort.seconds, "bytes": 2 * frame},
        "sort_rolling": {"seconds": t_roll.seconds, "bytes": 2 * frame + 32 * rows},
    }


def _fit_pair(data: Any, a: int, b: int, y: int) -> tuple[tuple[int, int], list[float]]:
    """OLS of column y on columns a, b and an intercept, by the normal equations (NumPy or CuPy arrays)."""
    import numpy as np

    from gpu_dask_kit.compute import to_host

    cols = data[:, [a, b, y]]
    gram, sums = to_host(cols.T @ cols), to_host(cols.sum(axis=0))
    n = cols.shape[0]
    lhs = np.array([[n, sums[0], sums[1]], [sums[0], gram[0, 0], gram[0, 1]], [sums[1], gram[0, 1], gram[1, 1]]])
    rhs = np.array([sums[2], gram[0, 2], gram[1, 2]])
    intercept, coef_a, coef_b = np.linalg.solve(lhs, rhs)
    return (a, b), [float(coef_a), float(coef_b), float(intercept)]


def regressions(session: Any, z: dict[str, Any]) -> dict[str, Any]:
    import dask
    import numpy as np

    rows, features = z["reg_rows"], z["reg_features"]
    rng = np.random.default_rng(12)
    host = np.empty((rows, features + 1), order="F")  # column-major: each column is contiguous
    for i in range(features):
        host[:, i] = rng.standard_normal(rows)
    host[:, features] = 2.0 * host[:, 0] - 3.0 * host[:, 1] + rng.standard_normal(rows)  # y
    if session.mode == "gpu":
        import cupy

        data = cupy.asfortranarray(cupy.asarray(host))
    else:
        data = host
    pairs = list(combinations(range(features), 2))
    with Timer() as t_scatter:
        future = session.client.scatter(data, broadcast=True)
    fit = dask.delayed(_fit_pair, pure=True)
    with Timer() as t_fits:
        results = dask.compute(*[fit(future, a, b, features) for a, b in pairs])
    coefs = dict(results)[(0, 1)]
    ok = abs(coefs[0] - 2.0) < 0.1 and abs(coefs[1] + 3.0) < 0.1
    del future, data
    return {
        "scatter": {"seconds": t_scatter.seconds, "bytes": 8 * rows * (features + 1) * session.n_workers},
        "fits": {"seconds": t_fits.seconds, "bytes": len(pairs) * 24 * rows, "flops": len(pairs) * 21 * rows, "pairs": len(pairs), "check_y_on_x0_x1": ok},
    }


def persist_compute(session: Any, z: dict[str, Any]) -> dict[str, Any]:
    from gpu_dask_kit.compute import random_array

    m, n = z["pc_rows"], z["pc_cols"]
    x = random_array((m, n), chunks=(z["pc_chunk"], n), seed=6)
    with Timer() as t_scratch:
        (x + 1).mean(axis=1).compute()
    with Timer() as t_persist:
        xp = x.persist()
        _wait(xp)
    with Timer() as t_again:
        (xp + 1).mean(axis=1).compute()
    with Timer() as t_local:
        local = xp.compute()
    del local, xp
    return {
        "from_scratch": {"seconds": t_scratch.seconds, "bytes": 16 * m * n},
        "persist": {"seconds": t_persist.seconds, "bytes": 8 * m * n},
        "from_persisted": {"seconds": t_again.seconds, "bytes": 8 * m * n},
        "to_client": {"seconds": t_local.seconds, "bytes": 8 * m * n},
    }


WORKLOADS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "svd": svd,
    "dataframe": dataframe,
    "regressions": regressions,
    "persist_compute": persist_compute,
}


# -- the benchmark -------------------------------------------------------------------------------------------
def _start(device: str) -> Any:
    import gpu_dask_kit as kit

    if device == "gpu":
        return kit.start_cluster(device="gpu", rmm_pool_size=0.5, verbose=False)  # one worker per GPU, RMM pool
    return kit.start_cluster(device="cpu", verbose=False)  # kit defaults: min(4, cores) workers


def skipped_reason(name: str, session: Any) -> str | None:
    import dask

    if name == "dataframe" and session.mode == "gpu" and dask.config.get("dataframe.backend") != "cudf":
        return "cuDF is not installed: the partitions would be pandas (CPU work on a GPU cluster)"
    return None


def rates(step: str, seconds: float, entry: dict[str, Any], gpu_peaks: dict[str, Any] | None, n_gpus: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "flops" in entry:
        out["gflops"] = entry["flops"] / seconds / 1e9
    if "bytes" in entry:
        out["gbps"] = entry["bytes"] / seconds / 1e9
    if gpu_peaks:
        if step == "svd.svd":
            out.update(peaks.fractions({"flops": entry["flops"] / seconds}, gpu_peaks, n_gpus))
        elif step in MEMORY_BOUND:
            out.update(peaks.fractions({"bytes": entry["bytes"] / seconds}, gpu_peaks, n_gpus))
    return out


def run(args) -> dict:
    import gpu_dask_kit

    report = gpu_dask_kit.detect()
    has_gpu = report.mode == "gpu"
    devices = args.devices.split(",") if args.devices else (["gpu", "cpu"] if has_gpu else ["cpu"])
    if "gpu" in devices and not has_gpu:
        raise SystemExit(f"--devices gpu: no usable GPU here ({report.reason_text})")
    names = args.only.split(",") if args.only else list(WORKLOADS)
    reps = common.reps(args, 3)
    heavy = args.heavy_reps or (1 if args.quick else reps if has_gpu else 1)
    due = {name: heavy if name in HEAVY else reps for name in names}
    z = SIZES["quick" if args.quick else "seed"]
    gpu_peaks = peaks.lookup(report.gpus[0].name) if has_gpu else None

    seconds: dict[str, dict[str, list[float]]] = {d: {} for d in devices}
    entries: dict[str, dict[str, dict[str, Any]]] = {d: {} for d in devices}
    skipped: dict[str, dict[str, str]] = {d: {} for d in devices}
    clusters: dict[str, dict[str, Any]] = {}
    rounds = max(due.values())
    for r, order in enumerate(common.rotations(devices, rounds)):
        for device in order:
            session = _start(device)
            clusters[device] = {
                "mode": session.mode,
                "n_workers": session.n_workers,
                "threads_per_worker": session.plan.spec.threads_per_worker if session.plan else None,
            }
            try:
                for name in names:
                    if due[name] <= r:
                        continue
                    why = skipped_reason(name, session)
                    if why:
                        skipped[device][name] = why
                        continue
                    for step, entry in WORKLOADS[name](session, z).items():
                        key = f"{name}.{step}"
                        seconds[device].setdefault(key, []).append(entry["seconds"])
                        entries[device][key] = {k: v for k, v in entry.items() if k != "seconds"}
                        print(f"  round {r + 1}/{rounds} {device} {key}: {entry['seconds']:.3f} s", flush=True)
            finally:
                session.close()

    steps: dict[str, dict[str, Any]] = {d: {} for d in devices}
    for device in devices:
        for key, values in seconds[device].items():
            s = stats(values)
            steps[device][key] = {
                "seconds": s,
                **entries[device][key],
                **rates(key, s["median"], entries[device][key], gpu_peaks if device == "gpu" else None, clusters["gpu"]["n_workers"] if device == "gpu" else 1),
            }
    speedup = {}
    if "gpu" in steps and "cpu" in steps:
        speedup = {k: steps["cpu"][k]["seconds"]["median"] / v["seconds"]["median"] for k, v in steps["gpu"].items() if k in steps["cpu"]}
    return {
        "sizes": z,
        "reps": due,
        "devices": devices,
        "clusters": clusters,
        "steps": steps,
        "samples": seconds,
        "skipped": skipped,
        "speedup_gpu_over_cpu": speedup,
        "gpu_peaks": gpu_peaks,
        "work": WORK,
    }


def markdown(result: dict) -> str:
    z, due = result["sizes"], result["reps"]
    lines = [
        common.header(result, "Seed-scale workloads"),
        f"Sizes: SVD {z['svd_rows']} x {z['svd_cols']} (chunks {z['svd_chunk']} rows); timeseries 2000-01-01..{z['ts_end']} "
        f"at {z['ts_freq']}; {z['reg_features'] * (z['reg_features'] - 1) // 2} regressions on {z['reg_rows']} x {z['reg_features']}; "
        f"persist/compute on {z['pc_rows']} x {z['pc_cols']}. Repetitions: " + ", ".join(f"{k} {v}" for k, v in due.items()) + ".",
        "Clusters: " + "; ".join(f"{d.upper()}: {c['n_workers']} worker(s) x {c['threads_per_worker']} thread(s)" for d, c in result["clusters"].items()) + ".",
        "",
        "| step | device | seconds min / median / max | achieved (median) | of GPU peak |",
        "|---|---|---|---|---|",
    ]
    for device, steps in result["steps"].items():
        for key, s in steps.items():
            rate = ", ".join(
                x for x in (f"{s['gflops']:.3g} GFLOP/s" if "gflops" in s and key == "svd.svd" else "", f"{s['gbps']:.3g} GB/s" if "gbps" in s else "") if x
            )
            frac = ", ".join(f"{s[k] * 100:.1f} % {label}" for k, label in (("of_fp64_peak", "FP64"), ("of_bandwidth_peak", "bandwidth")) if k in s)
            lines.append(f"| {key} | {device.upper()} | {fmt(s['seconds'], 3)} | {rate} | {frac or '-'} |")
    for device, why in result["skipped"].items():
        for name, text in why.items():
            lines.append(f"| {name} | {device.upper()} | skipped: {text} | | |")
    if result["speedup_gpu_over_cpu"]:
        lines += [
            "",
            "GPU / CPU speed-up (CPU median / GPU median, same run, same machine): "
            + ", ".join(f"{k} **{v:.1f}x**" for k, v in result["speedup_gpu_over_cpu"].items()),
        ]
    if result["gpu_peaks"]:
        p = result["gpu_peaks"]
        lines += [
            "",
            f"Peaks used ({p['label']}, vendor data sheet): FP64 {p['fp64_tflops']} TFLOP/s"
            + (f" ({p['fp64_tensor_tflops']} on tensor cores, the ceiling used)" if p.get("fp64_tensor_tflops") else "")
            + f", memory {p['mem_gbps']} GB/s.",
        ]
    lines += ["", "Nominal work (m x n float64 arrays):", *[f"- `{k}`: {v}" for k, v in result["work"].items()], ""]
    return "\n".join(lines)


def main(argv=None) -> dict:
    return common.main_for(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
