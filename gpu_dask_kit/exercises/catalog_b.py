"""Exercises of notebooks 05-08: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

from typing import Any

from .catalog_a import host, in_memory, is_lazy, size_answer
from .model import Exercise, Hint
from .values import as_fraction, as_number, close

# --- 05 · delayed regressions ------------------------------------------------------------------------


def _judge_05_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    best = ans["best_single_feature"]
    if isinstance(best, (tuple, list)) and len(best) == 1:
        best = best[0]
    if not isinstance(best, str):
        raise Hint(f"best_single_feature should be a column name such as 'x3', not {best!r}.")
    if best.strip() != "x1":
        raise Hint(
            f"{best!r} is not the best: y = 2*x0 - 3*x1 + noise, so the feature with the larger |coefficient| "
            "explains more; fit one model per feature and take the highest R² (result[3])."
        )
    return "x1, the feature with the larger coefficient in y = 2*x0 - 3*x1 + noise."


def _judge_05_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    results = ans["x0_results"]
    if is_lazy(results) or (isinstance(results, (list, tuple)) and any(is_lazy(r) for r in results)):
        raise Hint("x0_results still holds Delayed objects: pass them to dask.compute(*lazy_fits).")
    if not isinstance(results, (list, tuple)):
        raise Hint(f"x0_results should be the tuple returned by dask.compute(*lazy_fits), not {type(results).__name__}.")
    expected = len([f for f in ns["features"] if f != "x0"])
    if len(results) != expected:
        raise Hint(f"expected {expected} results (x0 with each other feature), got {len(results)}.")
    pairs = [r[0] for r in results]
    if not all("x0" in pair and len(pair) == 2 for pair in pairs):
        raise Hint(f"each result should be a pair containing 'x0', e.g. ('x0', 'x5'); got {pairs[:3]}...")
    return f"{expected} models fitted in one dask.compute call."


# --- 06 · persist vs compute -------------------------------------------------------------------------


def _judge_06_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import dask.array as da
    import numpy as np

    persisted, local = ans["col_sums_persisted"], ans["col_sums_local"]
    if not isinstance(persisted, da.Array):
        raise Hint(f"col_sums_persisted should still be a Dask array (.persist()), not {type(persisted).__name__}.")
    if not in_memory(persisted):
        raise Hint("col_sums_persisted still has work to do in its graph: did you .persist() it?")
    if not isinstance(local, np.ndarray):
        raise Hint(f"col_sums_local should be a NumPy array, not {type(local).__name__}: to_host(col_sums.compute()).")
    n_cols = int(ns["N_COLS"])
    if local.shape != (n_cols,):
        raise Hint(f"expected one sum per column, shape ({n_cols},), got {local.shape}: x.sum(axis=0).")
    expected = host(ns["x"].sum(axis=0).compute())
    if not np.allclose(local, expected) or not np.allclose(host(persisted.compute()), expected):
        raise Hint("these are not the column sums of x: x.sum(axis=0).")
    return f"persisted on the workers, and a local copy of {n_cols} values."


def _judge_06_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    given = as_fraction(ans["fraction"])
    info = ns["session"].client.scheduler_info(n_workers=-1)["workers"].values()
    expected = ns["x"].nbytes / sum(int(w["memory_limit"]) for w in info)
    if given is None:
        raise Hint(f"fraction should be a number such as 0.25 or a string such as '25%', not {ans['fraction']!r}.")
    if close(given / 100, expected, rel=0.02, abs_=5e-4) and given > 1:
        raise Hint(f"{given} looks like a percentage: write '{given}%' or {given / 100:.4f}.")
    if not close(given, expected, rel=0.02, abs_=5e-4):
        raise Hint(f"{given:.4f} is not it: x.nbytes divided by the sum of the workers' memory limits (scheduler_info()['workers'][...]['memory_limit']).")
    return f"x takes {expected:.1%} of the workers' memory limits."


# --- 07 · multi-GPU ETL ------------------------------------------------------------------------------


def _judge_07_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["rows_per_name"]
    if is_lazy(got):
        raise Hint("rows_per_name is still lazy: call .compute().")
    if not (hasattr(got, "index") and hasattr(got, "sum")) or hasattr(got, "columns"):
        raise Hint(f"rows_per_name should be a Series indexed by code (.size()), not {type(got).__name__}.")
    codes = len(ns["lookups"]["name"])
    if len(got) != codes:
        raise Hint(f"expected one count per name code ({codes}), got {len(got)}: group by 'name'.")
    total = int(host(got).sum())
    if total != int(ns["N_INPUT_ROWS"]):
        raise Hint(f"the counts add up to {total}, not {ns['N_INPUT_ROWS']}: use .size().")
    return f"{codes} codes, {total} rows."


def _judge_07_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    medians = ns["medians"]
    expected = medians[min(medians)] / medians[max(medians)]
    given = as_number(ans["speed_up"])
    if given is None:
        raise Hint(f"speed_up should be a number such as 1.3 (or '1.3x'), not {ans['speed_up']!r}.")
    if close(given, 1 / expected, rel=0.02):
        raise Hint("that is the inverse: speed-up = time on 1 worker / time on N workers.")
    if not close(given, expected, rel=0.02):
        raise Hint(f"{given} is not it: divide the median time on 1 worker by the median on {max(medians)}.")
    return f"{expected:.2f}x on {max(medians)} workers (efficiency {expected / max(medians):.2f})."


# --- 08 · scripts and clusters -----------------------------------------------------------------------


def _judge_08_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["script_options"]
    if not isinstance(got, dict):
        raise Hint(f"script_options should be the dict from options_from_args(args), not {type(got).__name__}.")
    if as_number(got.get("n_workers")) != 4:
        raise Hint(f"n_workers is {got.get('n_workers')!r}: --n-workers 4.")
    size_answer(got.get("memory_limit"), 8 * 2**30, "memory_limit", rel=0.001)
    if not close(as_fraction(got.get("rmm_pool_size")), 0.5, abs_=1e-9):
        raise Hint(f"rmm_pool_size is {got.get('rmm_pool_size')!r}: half of each GPU, --rmm-pool-size 0.5.")
    if got.get("scheduler_file") != "/shared/scheduler.json":
        raise Hint(f"scheduler_file is {got.get('scheduler_file')!r}: --scheduler-file /shared/scheduler.json.")
    extra = sorted(set(got) - {"n_workers", "memory_limit", "rmm_pool_size", "scheduler_file"})
    if extra:
        raise Hint(f"unexpected options {extra}: give only the four flags asked for.")
    return "four flags, the same names as start_cluster's keywords with dashes."


def _judge_08_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    names = ans["slot_workers"]
    if is_lazy(names) or (isinstance(names, (list, tuple)) and any(hasattr(n, "key") for n in names)):
        raise Hint("slot_workers holds futures: gather them (session.client.gather(futures)).")
    if not isinstance(names, (list, tuple)) or len(names) != 4:
        raise Hint(f"slot_workers should be a list of 4 worker names, got {names!r}.")
    if set(map(str, names)) != {"with-slot"}:
        raise Hint(f"tasks ran on {sorted(set(map(str, names)))}: ask for the resource, resources={{'GPU_SLOT': 1}}.")
    return "all 4 tasks ran on the worker that has the GPU_SLOT resource."


EXERCISES = [
    Exercise(
        "05-1",
        ("best_single_feature",),
        "single = dask.compute(*[fit_ols(data_future, (name,)) for name in features])\nbest_single_feature = max(single, key=lambda result: result[3])[0][0]\n",
        _judge_05_1,
        "fit_ols(data_future, (name,)) per feature, dask.compute them, keep the name with the best R².",
    ),
    Exercise(
        "05-2",
        ("x0_results",),
        'lazy_fits = [fit_ols(data_future, ("x0", f)) for f in features if f != "x0"]\nx0_results = dask.compute(*lazy_fits)\n',
        _judge_05_2,
        "a list of fit_ols(data_future, ('x0', f)) calls, then dask.compute(*that_list).",
    ),
    Exercise(
        "06-1",
        ("col_sums_persisted", "col_sums_local"),
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute())\n",
        _judge_06_1,
        "col_sums.persist() for one, to_host(col_sums.compute()) for the other.",
    ),
    Exercise(
        "06-2",
        ("fraction",),
        'workers = session.client.scheduler_info(n_workers=-1)["workers"].values()\nfraction = x.nbytes / sum(w["memory_limit"] for w in workers)\n',
        _judge_06_2,
        "x.nbytes / total memory limit, as 0.25 or '25%'.",
    ),
    Exercise(
        "07-1",
        ("rows_per_name",),
        'rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute()\n',
        _judge_07_1,
        "dd.read_parquet(PROCESSED).groupby('name').size().compute().",
    ),
    Exercise("07-2", ("speed_up",), "speed_up = medians[1] / medians[max(medians)]\n", _judge_07_2, "medians[1] / medians[N], a number."),
    Exercise(
        "08-1",
        ("script_options",),
        'args = parser.parse_args(["--n-workers", "4", "--memory-limit", "8GiB", "--rmm-pool-size", "0.5",\n'
        '                          "--scheduler-file", "/shared/scheduler.json"])\n'
        "script_options = options_from_args(args)\n",
        _judge_08_1,
        "parser.parse_args([...flags...]) then options_from_args(args).",
    ),
    Exercise(
        "08-2",
        ("slot_workers",),
        'futures = session.client.map(where_am_i, range(4), resources={"GPU_SLOT": 1}, pure=False)\nslot_workers = session.client.gather(futures)\n',
        _judge_08_2,
        "session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False), then gather.",
    ),
]


# --- 09 · GPU-first ------------------------------------------------------------------------------------


def _judge_09_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    total = ans["total_future"]
    if not (hasattr(total, "result") and hasattr(total, "key")):
        raise Hint(
            f"total_future should be a Future (client.submit(sum, futures)), not {type(total).__name__}: keep the work on the cluster, do not gather first."
        )
    value = total.result(timeout=60)
    if as_number(value) != sum(i * i for i in range(10)):
        raise Hint(f"the future holds {value!r}, not the sum of the squares of 0..9: client.map(square, range(10)), then client.submit(sum, those_futures).")
    return "the sum ran on a worker, from futures that never came to the notebook."


def _judge_09_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    size_answer(ans["partition_bytes"], 4 * 2**30, "partition_bytes")
    return "one eighth of 32 GiB is 4 GiB: several partitions, their copies and a shuffle's buffers still fit."


EXERCISES += [
    Exercise(
        "09-1",
        ("total_future",),
        "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)\n",
        _judge_09_1,
        "session.client.map(square, range(10)), then session.client.submit(sum, the_futures).",
    ),
    Exercise(
        "09-2", ("partition_bytes",), 'partition_bytes = "4GiB"  # 32 GiB / 8\n', _judge_09_2, "32 GiB times 0.125, as bytes or a size string such as '4GiB'."
    ),
]
