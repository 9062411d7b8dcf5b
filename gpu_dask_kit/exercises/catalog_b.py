"""Exercises of notebooks 03-05: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

from typing import Any

import dask
from distributed import futures_of

from .evidence import client_of, fingerprint, runs_touching, same_fingerprint
from .judging import host, is_lazy, kind, require_computed, require_one_submission, require_persisted, require_worked_on
from .model import Exercise, Hint
from .values import as_number

# --- 03 · dataframes and groupby ---------------------------------------------------------------------


def _per_name(got: Any, name: str, expected: Any, wrong: str) -> None:
    """A :class:`Hint` unless ``got`` is a computed Series equal to ``expected`` (one value per name, any order)."""
    require_computed(got, name)
    if hasattr(got, "columns"):
        raise Hint(f"{name} is a DataFrame (several columns): select the one column the question is about before aggregating.")
    if not (hasattr(got, "index") and hasattr(got, "sum")):
        raise Hint(f"{name} should be a Series with one value per name; {kind(got)} is not one.")
    got, expected = host(got).sort_index(), host(expected).sort_index()
    if not got.index.is_unique:
        raise Hint(
            f"{name} has some names more than once: each partition was reduced on its own and the partial results were "
            "never combined. A Dask groupby on the whole frame does both steps (per partition, then across them)."
        )
    if len(got) != len(expected):
        raise Hint(f"{name} has {len(got)} rows; there are {len(expected)} names. Group by the name column.")
    if list(got.index) != list(expected.index) or not (abs(got.values - expected.values) <= 1e-9 * (1 + abs(expected.values))).all():
        raise Hint(wrong)


def _judge_03_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    wrong = "one value per name, but not the largest y of each: check which column and which aggregation you used."
    require_computed(ans["max_y_by_name"], "max_y_by_name")
    require_worked_on(ns, ns["ddf"], "ddf", "max_y_by_name")
    _per_name(ans["max_y_by_name"], "max_y_by_name", ns["ddf"].groupby("name").y.max().compute(), wrong)
    return "the largest y of each name."


def _judge_03_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    fast = ans["ddf_fast"]
    require_persisted(fast, "ddf_fast", "Ask Dask to run the frame's tasks now and keep the partitions on the workers.")
    if hasattr(fast, "npartitions") and fast.npartitions != ns["ddf"].npartitions:
        raise Hint(f"ddf_fast has {fast.npartitions} partitions, ddf has {ns['ddf'].npartitions}: make it a persisted copy of ddf itself.")
    require_computed(ans["mean_x_by_name"], "mean_x_by_name")
    require_worked_on(ns, fast, "ddf_fast", "mean_x_by_name")
    wrong = "those are not the means of x per name over all of ddf's rows: check the column, the aggregation, and that ddf_fast holds every row."
    _per_name(ans["mean_x_by_name"], "mean_x_by_name", ns["ddf"].groupby("name").x.mean().compute(), wrong)
    return "ddf_fast holds its partitions in worker memory, and the means come from it."


# --- 04 · map_partitions -----------------------------------------------------------------------------


def _unchanged(ns: dict[str, Any]) -> None:
    ddf, before = ns["ddf"], ns.get("ddf_fingerprint")
    redo = "Re-run the cell that builds and persists ddf (and its fingerprint), then fix demean so it leaves its argument as it was."
    if before is not None:
        change = same_fingerprint(before, fingerprint(ddf))
    else:  # no fingerprint in the notebook: compare with what ddf says its columns are
        columns = [str(c) for c in ddf.partitions[0].compute().columns]
        change = None if columns == [str(c) for c in ddf.columns] else "it has columns ddf does not declare"
    if change:
        raise Hint(
            f"partition 0 of the persisted ddf has changed since it was persisted: {change}. A function mapped over "
            f"partitions received the very frame kept in worker memory and wrote into it. {redo}"
        )


def _built_from(ns: dict[str, Any], ddf: Any, demeaned: Any) -> bool:
    """True when ``demeaned``'s graph starts from ddf's partitions (or, persisted, it was computed from them)."""
    if {str(k) for k in ddf.__dask_keys__()} <= {str(k) for k in demeaned.__dask_graph__()}:
        return True
    held = futures_of(demeaned)
    client, mine = client_of(ns, ddf), {str(f.key) for f in held}
    return client is not None and any(r["keys"] & mine for r in runs_touching(client, ddf) if r["prefixes"] - r["own"])


def _judge_04_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    demean, demeaned, ddf = ans["demean"], ans["demeaned"], ns["ddf"]
    if not callable(demean):
        raise Hint(f"demean should be a function that takes one partition (a DataFrame); {kind(demean)} is not.")
    _unchanged(ns)
    original = ddf.partitions[0].compute()
    sample = original.copy()  # in-process workers may hand back the very object they hold
    out = demean(sample)
    if list(sample.columns) != list(original.columns) or not (host(sample["x"]) == host(original["x"])).all():
        raise Hint(
            "demean changed the frame it was given (an assignment into its argument). On a cluster that frame may be the "
            "persisted data itself, which would then change for every later cell. demean must leave its argument as it "
            "was and return a new frame."
        )
    if out is None or "x_demeaned" not in getattr(out, "columns", []):
        what = "nothing (None)" if out is None else f"{kind(out)}{' (one column, not the whole partition)' if not hasattr(out, 'columns') else ''}"
        raise Hint(f"demean should return the whole partition with a new column named x_demeaned; it returned {what}.")
    if not (is_lazy(demeaned) and hasattr(demeaned, "npartitions")):
        raise Hint(f"demeaned is {kind(demeaned)}: the question wants the Dask DataFrame you get from mapping demean over ddf, not computed.")
    if not _built_from(ns, ddf, demeaned):
        raise Hint(
            "demeaned is not built from the persisted ddf: its task graph does not start from ddf's partitions (the data "
            "came to this notebook and went back to the cluster as a new frame). Map demean over ddf itself."
        )
    if demeaned.npartitions != ddf.npartitions or "x_demeaned" not in demeaned.columns:
        raise Hint("demeaned should have ddf's partitions, each with the x_demeaned column: map demean over ddf.")
    for i in (0, 1):
        part = demeaned.partitions[i].compute()
        wanted = host(part["x"] - part["x"].mean())
        if not (abs(host(part["x_demeaned"]) - wanted) <= 1e-9).all():
            raise Hint(f"in partition {i}, x_demeaned is not x minus the mean of x: check which column you subtract from, and its mean.")
        if abs(float(part["x_demeaned"].mean())) > 1e-9:
            raise Hint(f"in partition {i}, x_demeaned does not average to 0: subtract the mean of x in THAT partition (not over all of ddf).")
    _unchanged(ns)
    seen = "checked against its fingerprint" if ns.get("ddf_fingerprint") is not None else "its columns are as declared"
    return f"every partition's x_demeaned averages to 0, and the persisted ddf is unchanged ({seen})."


def _judge_04_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    ddf, value = ns["ddf"], ans["rows_in_partition_2"]
    require_computed(value, "rows_in_partition_2")
    number = as_number(value)
    if number is None or number != int(number):
        raise Hint(f"rows_in_partition_2 should be a whole number of rows; {kind(value)} is not.")
    client = client_of(ns, ddf)
    runs = [r for r in runs_touching(client, ddf) if r["prefixes"] - r["own"]] if client is not None else []
    expected = len(ddf.partitions[2])
    if int(number) == expected:
        own = {str(k) for k in ddf.__dask_keys__()}
        wanted = {str(ddf.__dask_keys__()[2])}
        if not runs or not runs[-1]["touched"] & wanted:
            raise Hint(
                "the number is right, but the workers never counted partition 2: it was typed in, worked out by hand, "
                "or computed from other partitions. Select that one partition of ddf and let Dask count its rows."
            )
        if (runs[-1]["touched"] & own) - wanted:
            raise Hint(
                "that count came from a computation over more of ddf than partition 2 (the whole frame, or other "
                "partitions): select just that partition and count its rows."
            )
        return "the number of rows of that one partition, counted by the workers."
    if int(number) == len(ddf):
        raise Hint("that is the number of rows of the whole frame; the question asks about one partition.")
    if int(number) == ddf.npartitions:
        raise Hint("that is the number of partitions; the question asks how many rows ONE partition has.")
    raise Hint("that is not the row count of partition 2: select that one partition (counting from 0) and take its length.")


# --- 05 · delayed regressions ------------------------------------------------------------------------


def _uses_future(ns: dict[str, Any], lazy: list[Any], name: str) -> None:
    """A :class:`Hint` unless every delayed call takes the data already on the cluster (data_future), not a frame."""
    key = getattr(ns.get("data_future"), "key", None)

    def takes(d: Any) -> bool:
        return any(key in (getattr(t, "dependencies", None) or ()) for t in d.__dask_graph__().values())

    if key is not None and not all(takes(d) for d in lazy):
        raise Hint(
            f"the calls in {name} carry the data inside their task graph (a frame from this notebook, sent again with "
            "every computation) instead of the copy already on the workers. Pass the future the lesson scattered."
        )


def _judge_05_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    best = ans["best_single_feature"]
    require_one_submission(ns, ans["single_fits"], "single_fits")
    _uses_future(ns, ans["single_fits"], "single_fits")
    results = dask.compute(*ans["single_fits"])
    features = [f for f in ns["features"]]
    if sorted(tuple(r[0]) for r in results) != sorted((f,) for f in features):
        raise Hint("single_fits should hold one fit per feature, each with ONE feature (a tuple of length one).")
    if isinstance(best, (tuple, list)) and len(best) == 1:
        raise Hint(f"best_single_feature is {kind(best)} holding a name: the question asks for the column name itself, a str.")
    if not isinstance(best, str) or best not in features:
        raise Hint(f"best_single_feature should be one feature's name (a str, as in features); {kind(best)} that is not one of them is not it.")
    r2 = {r[0][0]: float(r[3]) for r in results}
    if r2[best] < max(r2.values()):
        worst = " It has the LOWEST R²." if r2[best] == min(r2.values()) else ""
        raise Hint(f"that feature does not have the highest R² among your fits.{worst} Compare the R² of each result (its last entry).")
    return "the single feature with the highest R², from fits that ran together on the cluster."


def _early_05_2(filled: dict[str, Any]) -> None:
    """The answer cell raised before x0_results was set: a pair of x0 with itself is the usual reason."""
    for d in filled.get("lazy_fits", ()) if isinstance(filled.get("lazy_fits"), (list, tuple)) else ():
        args = [a for t in d.__dask_graph__().values() for a in getattr(t, "args", ()) if isinstance(a, tuple)]
        if any(len(a) == 2 and a[0] == a[1] for a in args):
            raise Hint(
                "x0_results was never set because computing lazy_fits failed: one of the fits pairs x0 with itself (the "
                "same column twice in one model, which pandas/cuDF refuse). Pair x0 only with the OTHER features."
            )


def _judge_05_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    results = ans["x0_results"]
    if is_lazy(results) or (isinstance(results, (list, tuple)) and any(is_lazy(r) for r in results)):
        raise Hint("x0_results still holds lazy (Delayed) objects: nothing ran yet. Store the computed results.")
    require_one_submission(ns, ans["lazy_fits"], "lazy_fits")
    _uses_future(ns, ans["lazy_fits"], "lazy_fits")
    if not isinstance(results, (list, tuple)):
        raise Hint(f"x0_results should be the results of computing lazy_fits (a tuple or list), not {kind(results)}.")
    expected = sorted(f for f in ns["features"] if f != "x0")
    if len(results) == 1 and isinstance(results[0], (list, tuple)) and len(results[0]) == len(expected):
        results = results[0]  # dask.compute(lazy_fits) returns a 1-tuple holding the list
    if len(results) != len(expected):
        raise Hint(f"x0_results has {len(results)} entries; x0 pairs with {len(expected)} other features.")
    pairs = [tuple(r[0]) if isinstance(r, (list, tuple)) and r and isinstance(r[0], (list, tuple)) else None for r in results]
    others = sorted(p[1 - p.index("x0")] for p in pairs if p and len(p) == 2 and "x0" in p)
    if others != expected:
        raise Hint("each result should be a fit of x0 with one other feature, every other feature once.")
    return f"{len(expected)} models, sent to the cluster in one submission and run side by side."


EXERCISES = [
    Exercise("03-1", ("max_y_by_name",), 'max_y_by_name = ddf.groupby("name").y.max().compute()\n', _judge_03_1, "a groupby on ddf, one column, computed."),
    Exercise(
        "03-2",
        ("ddf_fast", "mean_x_by_name"),
        'ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby("name").x.mean().compute()\n',
        _judge_03_2,
        "one call keeps ddf's partitions in worker memory; the groupby then starts from ddf_fast.",
    ),
    Exercise(
        "04-1",
        ("demean", "demeaned"),
        'def demean(df):\n    return df.assign(x_demeaned=df["x"] - df["x"].mean())  # a new frame\n\n\ndemeaned = ddf.map_partitions(demean)\n',
        _judge_04_1,
        "demean receives one pandas/cuDF frame and returns a new one; map it over ddf.",
    ),
    Exercise(
        "04-2", ("rows_in_partition_2",), "rows_in_partition_2 = len(ddf.partitions[2].compute())\n", _judge_04_2, "ddf.partitions[...] selects partitions."
    ),
    Exercise(
        "05-1",
        ("single_fits", "best_single_feature"),
        "single_fits = [fit_ols(data_future, (name,)) for name in features]\n"
        "single = dask.compute(*single_fits)\n"
        "best_single_feature = max(single, key=lambda result: result[3])[0][0]\n",
        _judge_05_1,
        "a list of fit_ols calls, one per feature, computed together; then compare R².",
    ),
    Exercise(
        "05-2",
        ("lazy_fits", "x0_results"),
        'lazy_fits = [fit_ols(data_future, ("x0", f)) for f in features if f != "x0"]\nx0_results = dask.compute(*lazy_fits)\n',
        _judge_05_2,
        "build the list first, then hand all of it to Dask at once.",
        _early_05_2,
    ),
]
