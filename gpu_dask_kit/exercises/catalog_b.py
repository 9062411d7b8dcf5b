"""Exercises of notebooks 03-04: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import ast
import copy
import inspect
from typing import Any

import dask
from dask.core import flatten
from dask.utils import key_split
from distributed import futures_of

from ..notebook.cellreads import names_read
from .elsewhere import require_no_notebook_rows, value_when
from .evidence import MOVES, client_of, persisted, runs_touching
from .fingerprint import fingerprint, same_fingerprint
from .grouping import grouped_on_cluster, per_name
from .judging import describe, from_cell, host, is_lazy, require_computed, require_persisted, require_worked_on
from .lineage import made_from
from .model import Exercise, Hint
from .replay import Replay, _assigned, _parse, answer_cell, rounding_calls
from .stale import remade_after
from .values import as_number
from .zeroed import require_contributes, require_no_chooser

# --- 03 · dataframes and groupby ---------------------------------------------------------------------


def _judge_03_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    wrong = "one value per name, but not the largest y of each: check which column and which aggregation you used."
    require_computed(ans["max_y_by_name"], "max_y_by_name")
    require_no_notebook_rows(ns, "max_y_by_name", "ddf")
    if ".sample(" in (answer_cell(ns, "max_y_by_name") or ""):  # (learner review 33: told to check the column and aggregation)
        raise Hint("your answer cell takes a sample of the rows (.sample): the largest y of each name must come from all of its rows.")
    per_name(ans["max_y_by_name"], "max_y_by_name", ns["ddf"].groupby("name").y.max().compute(), wrong, answer_cell(ns, "max_y_by_name"))
    _follows_every_row(ns)
    found = from_cell(ns, ("max_y_by_name",), values=("max_y_by_name",))
    require_contributes(found.cell if found is not None else answer_cell(ns, "max_y_by_name"), "max_y_by_name", ns)
    if found is None:  # not in IPython: the scheduler's record of work on ddf
        require_worked_on(ns, ns["ddf"], "ddf", "max_y_by_name")
    else:
        grouped_on_cluster(found, ns["ddf"], "ddf", "max_y_by_name", "the largest y of each name")
    return "the largest y of each name."


def _follows_every_row(ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer cell, run again on the same frame with every y lower by the same amount, does not
    give the largest y of each name of that frame (learner review 33: ``ddf[ddf.y > 0].groupby(...)`` was right only
    because every name's largest y is positive here)."""
    import numpy as np

    lower = {name: ns[name].assign(y=ns[name].y - 1000.0) for name in ("ddf", "raw") if is_lazy(ns.get(name))}
    again = value_when(ns, "max_y_by_name", lower)
    if again is Ellipsis or not hasattr(again, "index"):
        return
    want = host(lower["ddf"].groupby("name").y.max().compute()).sort_index()
    got = host(again).sort_index()
    same = len(got) == len(want) and list(got.index) == list(want.index) and bool(np.allclose(got.to_numpy(dtype=float), want.to_numpy(dtype=float)))
    if not same:
        raise Hint(
            "max_y_by_name does not follow the data: run again on the same frame with every y lower by the same amount, "
            "your answer cell no longer gives the largest y of each name (it keeps only some rows first? a filter on y?). "
            "Here it agrees only because of this data: take the largest y over all of each name's rows."
        )


def _persist_thrown_away(cell: str | None) -> str | None:
    """``x.persist()`` when the answer cell has it as a statement of its own (its result kept nowhere), else None."""
    tree = _parse(cell) if cell is not None else None
    for statement in tree.body if tree is not None else []:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "persist":
            return ast.unparse(call)
    return None


def _judge_03_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    fast = ans["ddf_fast"]
    thrown = _persist_thrown_away(answer_cell(ns, "ddf_fast"))
    if thrown is not None and not futures_of(fast):  # (learner review 31: told "ask Dask to run the frame's tasks now")
        raise Hint(
            f"your answer cell calls {thrown} and keeps nothing of it: persist() does not change the frame it is called "
            "on, it RETURNS a new frame whose partitions are held on the workers. Assign that result to ddf_fast."
        )
    require_persisted(fast, "ddf_fast", "Ask Dask to run the frame's tasks now and keep the partitions on the workers.", answer_cell(ns, "ddf_fast"))
    require_no_notebook_rows(ns, "mean_x_by_name", "ddf_fast")
    # (not `fast is ddf`: `ddf_fast = ddf = ddf.persist()` persists in the answer cell itself; learner review 25)
    if futures_of(ns["ddf"]) and not _persists(answer_cell(ns, "ddf_fast")):
        raise Hint(
            "ddf_fast holds partitions in worker memory only because ddf itself is still the frame persisted earlier "
            "(`ddf = ddf.persist()`): your answer cell did not persist anything. The cell just above this exercise "
            "(`ddf = raw.map_partitions(slow_read)`) makes ddf the lazy recipe again: run it, then your answer cell, then this check."
        )
    if hasattr(fast, "npartitions") and fast.npartitions != ns["ddf"].npartitions:
        raise Hint(f"ddf_fast has {fast.npartitions} partitions, ddf has {ns['ddf'].npartitions}: make it a persisted copy of ddf itself.")
    same_data = _same_data(fast, ns["ddf"])  # (a fingerprint of the partitions may be computed: once)
    again = remade_after(ns, "ddf", "ddf_fast") if not same_data else None
    if again:
        raise Hint(f"could not be checked, because {again}")
    if not same_data and made_from(fast, ns["ddf"]) is False:
        raise Hint(
            "ddf_fast was not computed from ddf on the workers: its data went through this notebook (ddf's rows came here "
            "and were sent back to the cluster as a new frame), so it holds a copy, not ddf's own partitions. Where to "
            "look: the workers can run ddf's tasks and keep the partitions they make; nothing needs to come here."
        )
    fewer = [str(c) for c in getattr(fast, "columns", [])]
    if not same_data and fewer and set(fewer) < {str(c) for c in ns["ddf"].columns}:
        raise Hint(
            f"ddf_fast holds only some of ddf's columns ({', '.join(fewer)} of {len(ns['ddf'].columns)}). Keeping just the "
            "columns you need is a good habit when worker memory is short, but this exercise asks for a persisted copy "
            "of ddf itself: persist the whole frame, then select in the computation that reads it."
        )
    from_raw = "raw" in ns and _held(fast) <= _computed_keys(ns["raw"])
    if not same_data and not from_raw and _same_values(fast, ns["ddf"]):
        raise Hint(
            "ddf_fast holds the same rows as ddf, but as a new collection made from ddf by an extra step (a map_partitions "
            "or another operation): the lesson's ddf is still not in worker memory. Persist ddf itself."
        )
    if not same_data:
        source = "raw, the source frame (ddf adds the slow read on top of it)" if from_raw else "other data"
        raise Hint(f"ddf_fast holds the partitions of {source}, not ddf's: keep ddf's own partitions in worker memory.")
    require_computed(ans["mean_x_by_name"], "mean_x_by_name")
    if "map_partitions" in (answer_cell(ns, "mean_x_by_name") or "") and _mean_of_means(ans["mean_x_by_name"], fast):
        raise Hint(
            "those are means of the partitions' means: each partition holds a different number of rows of each name, so "
            "averaging their means weighs a row of a small partition more than one of a big partition. That is not the "
            "mean over all rows: let a Dask groupby aggregation combine the partial sums and counts."
        )
    found = from_cell(ns, ("mean_x_by_name", "ddf_fast"), values=("mean_x_by_name",))
    require_contributes(found.cell if found is not None else answer_cell(ns, "mean_x_by_name"), "mean_x_by_name", ns)
    if found is None:  # not in IPython: the scheduler's record of work on ddf_fast
        require_worked_on(ns, fast, "ddf_fast", "mean_x_by_name")
    else:
        _means_from_memory(found, ns["ddf"], fast)
    wrong = "those are not the means of x per name over all of ddf's rows: check the column, the aggregation, and that ddf_fast holds every row."
    per_name(ans["mean_x_by_name"], "mean_x_by_name", ns["ddf"].groupby("name").x.mean().compute(), wrong, answer_cell(ns, "mean_x_by_name"))
    return "ddf_fast holds its partitions in worker memory, and the means come from it."


def _persists(cell: str | None) -> bool:
    """True when the answer cell calls persist (a method, dask.persist or client.persist); True outside IPython."""
    if cell is None:
        return True
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return True
    return any(isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) == "persist" for n in ast.walk(tree))


def _mean_of_means(got: Any, fast: Any) -> bool:
    """True when ``got`` is the mean, per name, of each partition's mean of x per name."""
    means = fast.map_partitions(lambda d: d.groupby("name").x.mean()).compute()
    wanted = host(means).groupby(level=0).mean().sort_index()
    got = host(got).sort_index() if hasattr(got, "sort_index") else got
    return hasattr(got, "index") and list(got.index) == list(wanted.index) and bool((abs(got.values - wanted.values) <= 1e-9).all())


def _held(collection: Any) -> set[Any]:
    return {f.key for f in futures_of(collection)}


def _same_data(fast: Any, ddf: Any) -> bool:
    """True when ``fast`` holds ddf's partitions: under ddf's own key names, or (``dask.persist``/``Client.persist``
    optimise the recipe and may rename it) under the same task names with the same partition 0."""
    if _held(fast) <= _computed_keys(ddf):
        return True
    names = {key_split(k) for k in flatten(ddf.__dask_keys__())}  # the fused names of .persist() start with the source's
    return {key_split(k) for k in _held(fast)} <= names and same_fingerprint(fingerprint(ddf), fingerprint(fast)) is None


def _same_values(fast: Any, ddf: Any) -> bool:
    """True when ``fast`` holds ddf's values (the fingerprints agree) under other task names."""
    try:
        return same_fingerprint(fingerprint(ddf), fingerprint(fast)) is None
    except Exception:
        return False


def _computed_keys(collection: Any) -> set[Any]:
    """The keys the scheduler holds for ``collection`` once persisted (its optimised keys, or the ones it holds already)."""
    own = set(flatten(collection.__dask_keys__()))  # Client.persist keeps these; .persist() keeps the optimised ones
    return _held(collection) | own | set(flatten(collection.optimize().__dask_keys__()))


def _means_from_memory(found: Replay, ddf: Any, fast: Any) -> None:
    """A :class:`Hint` unless ONE computation of the answer cell made the means, without re-running ddf's recipe."""
    reducing = grouped_on_cluster(found, fast, "ddf_fast", "mean_x_by_name", "the mean of x per name")
    kept = {key_split(k) for k in _held(fast)}  # the names of what ddf_fast holds in memory
    # ("operation": a name dask-expr gives many kinds of task, a shuffle's too: learner review 36, split_out=2)
    recipe = {key_split(k) for k in dict(ddf.__dask_graph__())} - kept - {"getitem", "operation", *MOVES}
    if len(reducing) > 1 and any(run["prefixes"] & recipe for run in reducing):  # (learner review 34: a leftover line on ddf)
        raise Hint(
            f"the means came from {len(reducing)} separate computations, and one of them ran ddf's whole recipe again (a "
            "line that computes from ddf, not from ddf_fast?): compute the means once, from ddf_fast."
        )
    if len(reducing) > 1:
        raise Hint(
            f"the means came from {len(reducing)} separate computations (a sum and a count, computed one after "
            "another? the same line twice?): a mean per name is one Dask expression, computed once."
        )
    if reducing[0]["prefixes"] & recipe:
        raise Hint(
            "the means ran tasks of ddf's recipe again (from the source frame, not read from memory): compute them from "
            "ddf_fast, whose partitions are held on the workers."
        )


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


def _computes_inside(cell: str | None, ns: dict[str, Any]) -> str | None:
    """What demean's body does with the cluster: ``.compute()``/``.persist()``/``.result()`` called, or a Dask
    collection of the notebook read (``ddf.x.mean()``); None when it only uses its argument."""
    tree = _parse(cell) if cell is not None else None
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)} if tree is not None else {}
    if "demean" not in defs:
        return None
    seen: set[str] = set()
    todo = ["demean"]
    while todo:  # demean, and the functions of the cell it calls (a helper that computes is the same)
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        body = defs[name]
        where = "inside it" if name == "demean" else f"inside `{name}`, which it calls"
        for node in ast.walk(body):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("compute", "persist", "result"):
                return f"calls .{node.func.attr}() {where}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defs:
                todo.append(node.func.id)
        own = {a.arg for a in body.args.args}
        for node in ast.walk(body):
            if isinstance(node, ast.Name) and node.id not in own and is_lazy(ns.get(node.id)):
                return f"reads `{node.id}`, the whole Dask frame, {where}"
    return None


def _size_divided(cell: str | None) -> bool:
    """True when the cell divides a frame's ``.size`` (rows times columns) by something (``.size // 4``); an Index's or
    a column's size is its row count (``.index.size``), which needs no division."""
    tree = _parse(cell) if cell is not None else None
    divisions = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv))] if tree is not None else []
    return any(isinstance(m, ast.Attribute) and m.attr == "size" for d in divisions for m in ast.walk(d.left))


class _Started(Exception):
    """Raised by the scheduler the check puts in place while it calls demean: demean started a computation."""


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise _Started


def _follows_its_partition(demean: Any, original: Any, out: Any) -> None:
    """A :class:`Hint` unless demean works from the partition alone: given the partition with every x larger by the same
    amount, x_demeaned must stay as it was (learner review 33: means per day computed in the notebook and looked up
    inside demean, right only because each partition is one day)."""
    moved = original.copy()
    moved["x"] = moved["x"] + 1000.0
    try:
        again = _run_alone(demean, moved)
        follows = bool((abs(host(again["x_demeaned"]).to_numpy() - host(out["x_demeaned"]).to_numpy()) <= 1e-6).all())
    except Hint:
        raise
    except Exception:
        follows = False
    if not follows:
        outside = _values_read_from_outside(demean)
        reads = f" (demean reads {', '.join(f'`{n}`' for n in outside)}, made outside it)" if outside else ""
        raise Hint(
            "demean does not work from the partition alone: given the same partition with every x larger by the same "
            f"amount, x_demeaned should stay as it was (the partition's own mean moves with its values), but it changed{reads}. "
            "Work out each partition's mean inside demean, from the partition it is given."
        )


def _values_read_from_outside(demean: Any) -> list[str]:
    """The global names demean reads that hold data or numbers (not functions or modules)."""
    code, found = getattr(demean, "__code__", None), getattr(demean, "__globals__", {})
    names = [n for n in (code.co_names if code is not None else ()) if n in found]
    data = [n for n in names if not callable(found[n]) and not inspect.ismodule(found[n])]
    return [n for n in data if hasattr(found[n], "__len__") or isinstance(found[n], (int, float))]


def _run_alone(demean: Any, sample: Any) -> Any:
    """``demean(sample)`` with Dask's scheduler replaced by one that refuses: a computation demean starts (however it
    is written: a helper, getattr, dask.compute under another name) is caught here, in the notebook's thread, before
    the check touches the mapped frame, where Dask's output inference would run it on a thread it waits for and hang
    (learner review 11: `getattr(frames["all"].x.mean(), "comp" + "ute")()` hung the check)."""
    try:
        with dask.config.set(scheduler=_refuse):
            return demean(sample)
    except _Started:
        raise Hint(
            "demean starts a computation of its own (it computes something of a Dask collection when it runs): every "
            "partition would start a computation of a Dask collection (the whole frame, or a part of it) from inside its own task, and Dask's output "
            "inference would wait for it for ever (the check stops here rather than hang). demean must work from the "
            "one partition it is given: the mean of that partition's x is the partition's own."
        ) from None


def _more_arguments(func: Any) -> list[str]:
    """The parameters ``func`` requires besides the first (the partition); [] when it takes one, or cannot be read."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return []
    required = [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_POSITIONAL and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    return required[1:]


def _aligned(given: Any, other: Any) -> tuple[Any, Any] | None:
    """Two columns on the host, ``given``'s rows in ``other``'s order when both have the same unique labels (rows
    reordered, sorted: compared by label); None when their lengths differ."""
    g, o = host(given), host(other)
    if len(g) != len(o):
        return None
    if g.index.is_unique and o.index.is_unique and set(g.index) == set(o.index):
        g = g.loc[o.index]
    return g, o


def _same_column(given: Any, original: Any) -> bool:
    """True when two columns hold the same values (missing values alike), whatever the backend."""
    try:
        pair = _aligned(given, original)
        return pair is not None and bool(pair[0].reset_index(drop=True).equals(pair[1].reset_index(drop=True)))
    except Exception:
        return True  # (cannot compare: judged by the rest)


def _close_columns(given: Any, other: Any) -> bool:
    """True when two float columns hold the same values to within 1e-9, row by row by label (a GPU's mean need not add
    up in the same order twice); True when they cannot be compared (judged by the rest)."""
    try:
        pair = _aligned(given, other)
        return pair is not None and bool((abs(pair[0].to_numpy(dtype=float) - pair[1].to_numpy(dtype=float)) <= 1e-9).all())
    except Exception:
        return True


def _x_demeaned_mean_and_error(frame: Any) -> tuple[float, float]:
    """(the mean of x_demeaned, its largest distance from x minus x's mean) in one partition."""
    error = (frame["x_demeaned"] - (frame["x"] - frame["x"].mean())).abs().max()
    return float(frame["x_demeaned"].mean()), float(error) if len(frame) else 0.0


def _mapped_with_demean(demeaned: Any, demean: Any) -> None:
    """A :class:`Hint` when demeaned is not ``map_partitions`` of demean (or of a function that calls it): built from
    the partitions one by one (``dd.concat([p.assign(...) for p in ddf.partitions])``, a loop of computes), or with
    ``map_overlap`` (each partition gets rows of its neighbour, so its mean is not its own); learner review 27. Frames
    made through delayed objects (``from_delayed``) are judged by the rest."""
    expr: Any = getattr(demeaned, "expr", None)
    nodes = list(expr.walk()) if hasattr(expr, "walk") else []
    if not nodes:
        return
    seen = {type(n).__name__ for n in nodes}
    if "MapOverlap" in seen:
        raise Hint(
            "demeaned is made with map_overlap: each partition is handed rows of its neighbour too, so the mean it "
            "subtracts is not the partition's own. Map demean with map_partitions, one partition at a time."
        )
    if "FromDelayed" in seen or any("delayed" in t.lower() for t in seen):
        return
    top = type(expr).__name__
    # (learner review 30: .drop(...) was told about meta=; an assign on top is judged by its values, below)
    if "MapPartitions" in seen and top not in ("MapPartitions", "Assign"):
        words = {"Drop": "columns dropped", "Filter": "rows filtered", "Fillna": "values filled in", "Projection": "columns selected"}
        words.update(SetIndex="a new index set", ResetIndex="the index reset", Rename="columns renamed", Dropna="rows dropped")
        step = words.get(top, "another operation")  # (learner review 31: Dask's class names were shown)
        raise Hint(
            f"demeaned is changed after demean was mapped over ddf (a step on top of the mapped frame: {step}): the "
            "question's demeaned is what mapping demean over ddf gives, as it gives it. Keep the mapped frame itself."
        )
    funcs = [getattr(n, "func", None) for n in nodes if type(n).__name__ == "MapPartitions"]
    calls = lambda f: f is demean or "demean" in getattr(getattr(f, "__code__", None), "co_names", ())  # noqa: E731
    if top == "MapPartitions" and not calls(getattr(expr, "func", None)) and any(calls(f) for f in funcs[1:]):
        raise Hint(  # (learner review 49: `.map_partitions(lambda d: d.sort_index())` on top of the mapped frame)
            "demeaned is changed after demean was mapped over ddf (a step on top of the mapped frame: another function "
            "mapped over it): the question's demeaned is what mapping demean over ddf gives, as it gives it. Keep the "
            "mapped frame itself."
        )
    if not funcs:
        if "FromPandas" in seen and "FromGraph" not in seen:  # (learner review 29: told "a loop over ddf.partitions")
            how = "from a pandas frame in this notebook (from_pandas): ddf's rows came here and were sent back"
        elif {"Partitions", "Concat"} & seen:
            how = "partition by partition (a loop over ddf.partitions, concat, means computed one at a time)"
        elif {"Mean", "Sum", "Count"} & seen:  # (learner review 29: ddf.x - ddf.x.mean())
            how = "subtracting ONE mean of the whole frame (a reduction over every partition), not each partition's own"
        else:
            how = "without map_partitions"
        raise Hint(
            f"demeaned is not made by mapping demean over ddf: your answer cell builds it {how}. The exercise is "
            "map_partitions: hand demean to ddf.map_partitions, and Dask runs it on every partition."
        )
    if not any(calls(f) for f in funcs):
        raise Hint("demeaned maps another function than your demean over ddf: map demean itself (ddf.map_partitions(demean)).")


def _judge_04_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    demean, demeaned, ddf = ans["demean"], ans["demeaned"], ns["ddf"]
    if not callable(demean):
        raise Hint(f"demean should be a function that takes one partition (a DataFrame); {describe(demean)} is not.")
    _keeps_ddf(answer_cell(ns, "demeaned"), "name the mapped frame demeaned")  # (learner review 26: told demean wrote into the partition)
    inside = _computes_inside(answer_cell(ns, "demeaned"), ns)  # the cell that defines demean makes demeaned too
    if inside is not None:  # said before anything runs: checking it would start that computation from inside a task
        raise Hint(
            f"demean {inside}: every partition would start a computation of a Dask collection (the whole frame, or a part of it) from inside its own task, "
            "which needs the workers' threads that the waiting tasks hold (and, without meta=, Dask also calls demean on a "
            "small made-up partition to learn its output): such a computation can wait for ever (the answer cell "
            "returns, but the check or a .head() would hang, so the check stops here). "
            "demean must work from the one partition it is given: the mean of that partition's x is the partition's own."
        )
    over = _mapped_over(answer_cell(ns, "demeaned"), ns)
    if over is not None:  # (learner reviews 35-36: result, sorted_ddf, ddf[ddf.x > 0] got other words, or Correct)
        raise Hint(
            f"demeaned maps demean over `{over}`, not over ddf itself: another frame, even one made from ddf, may have "
            "other rows, columns or another order in its partitions. Map demean over the persisted ddf as it is."
        )
    extra = _more_arguments(demean)
    if extra:
        raise Hint(
            f"demean asks for more than the partition ({', '.join(extra)} too): map_partitions hands every call the same extra "
            "values, so a number passed in (such as a mean of ddf's x) is the same for every partition, one over ALL of "
            "ddf. The exercise asks for demean(df): work out what it needs from the one partition it is given."
        )
    _unchanged(ns)
    original = ddf.partitions[0].compute()
    sample = original.copy()  # in-process workers may hand back the very object they hold
    out = _run_alone(demean, sample)
    # (learner review 32: an in-place sort made the comparison itself fail, "Can only compare identically-labeled Series")
    same_rows = len(sample) == len(original) and list(host(sample.index)) == list(host(original.index))
    if list(sample.columns) != list(original.columns) or not same_rows or not (host(sample["x"]).to_numpy() == host(original["x"]).to_numpy()).all():
        raise Hint(
            "demean changed the frame it was given (an assignment into its argument). On a cluster that frame may be the "
            "persisted data itself, which would then change for every later cell. demean must leave its argument as it "
            "was and return a new frame."
        )
    if hasattr(out, "columns") and "x_demeaned" not in out.columns and len(out) == len(original):
        have = ", ".join(str(c) for c in out.columns)
        raise Hint(f"demean returns the whole partition, but with no column named x_demeaned (its columns: {have}). Name the new column x_demeaned.")
    if out is None or "x_demeaned" not in getattr(out, "columns", []):
        what = "nothing (None)" if out is None else f"{describe(out)}{' (one column, not the whole partition)' if not hasattr(out, 'columns') else ''}"
        raise Hint(f"demean should return the whole partition with a new column named x_demeaned; it returned {what}.")
    missing = [str(c) for c in original.columns if c not in out.columns]
    if missing:
        raise Hint(f"demean should return the whole partition plus x_demeaned; the frame it returns has lost column(s) {', '.join(missing)}.")
    if len(out) != len(original):  # (learner review 25: .iloc[1:] was told it changed every column)
        raise Hint(f"demean returns {len(out)} rows of the {len(original)} in the partition it is given: it must keep every row (and add x_demeaned to each).")
    changed = [str(c) for c in original.columns if not _same_column(out[c], original[c])]
    if changed:  # (learner review 22: df.assign(x_demeaned=..., y=df.y * 0) overwrote y)
        raise Hint(
            f"demean should return the partition's own columns as they are, plus x_demeaned; the frame it returns has "
            f"changed column(s) {', '.join(changed)}. Add the new column without writing over the others."
        )
    if not host(out.index).sort_values().equals(host(original.index).sort_values()):  # (learner review 24: reset_index)
        raise Hint(
            "demean should keep the partition's index (the rows' labels, here their timestamps); the frame it returns has "
            "another one (reset_index numbers the rows 0, 1, ... again): ddf's divisions then no longer describe the "
            "result, and selecting rows by their labels (.loc) fails. Return the partition with its own index."
        )
    if list(host(out.index)) != list(host(original.index)):  # (learner review 36: a sort inside demean)
        raise Hint(
            "demean returns the partition's rows in another order (a sort?): the exercise adds a column and keeps each "
            "partition's rows as they come (their timestamps in order, as ddf's divisions describe them)."
        )
    if is_lazy(demeaned) and futures_of(demeaned) and persisted(demeaned) is None:
        raise Hint(
            "demeaned is persisted: the workers compute its partitions and keep them in memory (persist starts that and returns). The question asks "
            "for the lazy frame that mapping builds (a recipe: it runs when you use it)."
        )
    if not (is_lazy(demeaned) and hasattr(demeaned, "npartitions")):
        raise Hint(f"demeaned is {describe(demeaned)}: the question wants the Dask DataFrame you get from mapping demean over ddf, not computed.")
    require_contributes(answer_cell(ns, "demeaned"), "demeaned", ns)  # (learner review 29: `+ 0 * demeaned.y` after mapping)
    _mapped_with_demean(demeaned, demean)
    if not _built_from(ns, ddf, demeaned):
        again = remade_after(ns, "ddf", "demeaned")
        if again:
            raise Hint(f"could not be checked, because {again}")
        raise Hint(
            "demeaned is not built from the persisted ddf: its task graph does not start from ddf's partitions (the data "
            "came to this notebook and went back to the cluster as a new frame). Map demean over ddf itself."
        )
    declared = [str(c) for c in getattr(demeaned, "columns", [])]
    if "x_demeaned" in declared and declared != [str(c) for c in out.columns]:
        raise Hint(
            f"demeaned declares the columns {', '.join(declared)} (from meta=), but demean returns "
            f"{', '.join(str(c) for c in out.columns)}: meta must describe the whole result, every column demean returns, "
            "in that order. Leave meta out, or describe all of them."
        )
    if "x_demeaned" in declared and str(demeaned.dtypes["x_demeaned"]) != str(out["x_demeaned"].dtype):
        raise Hint(
            f"demeaned declares x_demeaned as {demeaned.dtypes['x_demeaned']} (from meta=), but the partitions demean returns "
            f"hold {out['x_demeaned'].dtype} values in it: meta must describe the result as it is, dtypes included (later "
            "steps trust it without looking). Leave meta out, or give each column the dtype demean really returns."
        )
    if "x_demeaned" not in demeaned.columns and demeaned.npartitions == ddf.npartitions:
        raise Hint(
            "demeaned does not declare an x_demeaned column: Dask takes a mapped frame's columns from meta=, and the meta "
            "given describes ddf, not what demean returns. Leave meta out (Dask then runs demean on a small made-up, "
            "non-empty partition with ddf's columns and dtypes to learn the result's columns) or give one with x_demeaned."
        )
    if demeaned.npartitions != ddf.npartitions or "x_demeaned" not in demeaned.columns:
        raise Hint("demeaned should have ddf's partitions, each with the x_demeaned column: map demean over ddf.")
    for i in (0, 1):
        try:
            part = demeaned.partitions[i].compute()
        except Exception as err:  # (learner review 25: a groupby-transform answer stopped the check with Dask's traceback)
            raise Hint(
                f"demeaned cannot be computed: its partition {i} raised {type(err).__name__} ({str(err).splitlines()[0][:160] if str(err) else ''}). "
                "Make demeaned by mapping demean over ddf, and look at demeaned.head() before the check."
            ) from None
        wanted = host(part["x"] - part["x"].mean())
        if i == 0 and (abs(host(part["x_demeaned"]) - host(part["x"] - ddf.x.mean().compute())) <= 1e-9).all():
            raise Hint("x_demeaned subtracts the mean of x over ALL of ddf: subtract the mean of x in THAT partition (each partition its own).")
        if not (abs(host(part["x_demeaned"]) - wanted) <= 1e-9).all():
            if part["x_demeaned"].dtype.itemsize < part["x"].dtype.itemsize:
                raise Hint(
                    f"x_demeaned holds {part['x_demeaned'].dtype} values, x {part['x'].dtype}: the values were converted to a "
                    "smaller float type on the way, which rounds them. Keep x's own dtype."
                )
            given_values = host(part["x_demeaned"])
            if any((given_values == wanted.round(d)).all() for d in range(8)):  # (learner reviews 24-25: rounded after mapping)
                raise Hint(
                    f"in partition {i}, x_demeaned is x minus the mean of x, rounded after the subtraction. Keep the values as the subtraction gives them."
                )
            if _takes_partition_info(demean):  # (learner reviews 46-48: means computed first, picked by number)
                raise Hint(
                    f"in partition {i} alone (demeaned.partitions[{i}]), x_demeaned is not x minus the mean of x: demean "
                    "takes partition_info, and a selection of partitions is numbered from 0 again, so whatever demean picks "
                    "by that number (a value worked out before the mapping?) belongs to another partition there. Let demean "
                    "work out everything from the partition it is given, and leave partition_info out."
                )
            raise Hint(f"in partition {i}, x_demeaned is not x minus the mean of x: check which column you subtract from, and its mean.")
        if abs(float(part["x_demeaned"].mean())) > 1e-9:
            raise Hint(f"in partition {i}, x_demeaned does not average to 0: subtract the mean of x in THAT partition (not over all of ddf).")
        if i == 0 and not _close_columns(out["x_demeaned"], part["x_demeaned"]):  # (learner review 24)
            raise Hint(
                "demeaned is not what mapping your demean over ddf gives: demean, called on ddf's first partition, returns "
                "another x_demeaned than demeaned's first partition holds (demeaned was made by another function?). "
                "Make demeaned by mapping demean itself over ddf."
            )
    # the whole frame's partitions (a selected partition is renumbered: partition_info would say 0)
    found = dask.compute(*[dask.delayed(_x_demeaned_mean_and_error)(part) for part in demeaned.to_delayed()])
    off = [i for i, (m, _) in enumerate(found) if abs(m) > 1e-9]
    if off:  # (learner review 27: wrong only in partitions other than 0 and 1)
        raise Hint(f"in partition {off[0]}, x_demeaned does not average to 0: subtract the mean of x in THAT partition, in every partition.")
    wrong = [i for i, (_, e) in enumerate(found) if e > 1e-9]
    if wrong:  # (learner review 28: another column, demeaned, in one partition only)
        raise Hint(f"in partition {wrong[0]}, x_demeaned is not x minus the mean of x: every partition must subtract its own mean of x from x.")
    _follows_its_partition(demean, original, out)
    _unchanged(ns)
    seen = "checked against its fingerprint" if ns.get("ddf_fingerprint") is not None else "its columns are as declared"
    direct = (
        " (Through delayed objects it works; ddf.map_partitions(demean) is the direct way: it keeps the partitions' "
        "divisions and takes meta, so Dask knows the result's columns without running demean.)"
        if "delayed" in key_split(str(next(iter(flatten(demeaned.__dask_keys__())))[0]))
        else ""
    )
    return f"every partition's x_demeaned averages to 0, and the persisted ddf is unchanged ({seen}).{direct}"


def _mapped_over(cell: str | None, ns: dict[str, Any]) -> str | None:
    """The frame other than ddf that the statement making demeaned maps over, as written (``result``, ``sorted_ddf``,
    ``ddf[ddf.x > 0]``); None when it maps over ddf itself (or a name holding ddf, or ``ddf.persist()``)."""
    tree = _parse(cell) if cell is not None else None
    node = _assigned(tree, "demeaned") if tree is not None else None
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)) if node is not None else ():
        target = call.func.value if isinstance(call.func, ast.Attribute) and call.func.attr == "map_partitions" else None
        mapped = call.args[0] if call.args else None
        if isinstance(mapped, ast.Lambda) or (isinstance(mapped, ast.Name) and mapped.id != "demean" and ns.get(mapped.id) is not ns.get("demean")):
            continue  # another function mapped after demean (learner review 49: `.map_partitions(lambda d: d.sort_index())`)
        if isinstance(target, ast.Name):
            if target.id != "ddf" and is_lazy(ns.get(target.id)) and ns.get(target.id) is not ns.get("ddf"):
                return target.id
        elif target is not None and any(isinstance(n, ast.Name) and n.id == "ddf" for n in ast.walk(target)):
            persisted_ddf = isinstance(target, ast.Call) and ast.unparse(target) == "ddf.persist()"
            if not persisted_ddf:
                return ast.unparse(target)
    return None


def _other_frame_selected(cell: str, ns: dict[str, Any]) -> str | None:
    """The name of a Dask frame other than ddf whose partition the answer cell selects (``result.partitions[2]``), or None."""
    tree = _parse(cell)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Attribute) and node.attr in ("partitions", "get_partition") and isinstance(node.value, ast.Name):
            name = node.value.id
            if name != "ddf" and is_lazy(ns.get(name)):
                return name
    return None


#: Rows the check takes off partition 2 to see that an answer follows the data (odd, so no rounding keeps up with it).
SHORTER = 37


def _shorter(df: Any) -> Any:
    return df.iloc[:-SHORTER] if len(df) > SHORTER else df


def _not_following_shorter(ns: dict[str, Any], ddf: Any, number: float) -> bool:
    """True when the answer cell, run again on a ddf whose partition 2 is :data:`SHORTER` rows shorter, does not give
    ``number - SHORTER`` (learner review 31: ``n - n % 100`` changed, but not by the rows taken off)."""
    import dask.dataframe as dd

    parts = [ddf.partitions[i] if i != 2 else ddf.partitions[2].map_partitions(_shorter) for i in range(ddf.npartitions)]
    other = dd.concat(parts)
    if other.npartitions != ddf.npartitions:
        return False
    again = value_when(ns, "rows_in_partition_2", {"ddf": other})
    return again is not Ellipsis and as_number(again) != number - SHORTER


def _rounds_to_tens(cell: str | None, name: str) -> bool:
    """True when the statements making ``name`` call ``round(..., -k)`` (rounding to tens, hundreds, ...)."""
    for call in rounding_calls(cell, name):
        digits = call.args[1] if isinstance(call.func, ast.Name) and call.func.id == "round" and len(call.args) == 2 else None
        if isinstance(digits, ast.UnaryOp) and isinstance(digits.op, ast.USub):
            return True
    return False


class _NoPrinting(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in ("print", "display"):
            return ast.copy_location(ast.Constant(value=None), node)
        return self.generic_visit(node)


def _without_printing(tree: ast.Module | None) -> ast.Module | None:
    """``tree`` with every ``print(...)``/``display(...)`` call left out: what a cell only shows does not make its answer.

    >>> ast.unparse(_without_printing(ast.parse("print(p.head(2))\\nr = p.shape[0]")))
    'None\\nr = p.shape[0]'
    """
    if tree is None:
        return None
    return ast.fix_missing_locations(_NoPrinting().visit(copy.deepcopy(tree)))


def _partition_2_held(cell: str, ns: dict[str, Any], wanted: set[str]) -> bool:
    """True when partition 2 of ddf is already in the workers' memory (persisted in a cell of the learner's own: ``p2 =
    ddf.partitions[2].persist()``) and the answer cell reads it: counting it runs no task of partition 2 itself
    (learner review 58: then every right answer was "did not have the workers count partition 2")."""
    from dask.base import is_dask_collection

    held: set[str] = set()
    for value in list(ns.values()):
        if is_dask_collection(value):
            held |= {str(f.key) for f in futures_of(value)}
    if not wanted or not wanted <= held:
        return False
    if any(w in cell.replace(" ", "") for w in ("ddf.partitions[2]", "ddf.get_partition(2)")):
        return True
    reads = {n.id for n in ast.walk(_parse(cell) or ast.Module(body=[], type_ignores=[])) if isinstance(n, ast.Name)}
    return any(is_dask_collection(ns.get(n)) and {str(f.key) for f in futures_of(ns[n])} == wanted for n in reads)


def _row_cap(tree: ast.Module | None) -> str | None:
    """The first cap on rows written out in ``tree`` (``head(100000)``, ``tail(n=500)``, ``iloc[:50000]``), as written;
    None when there is none.

    >>> _row_cap(ast.parse("r = len(ddf.partitions[2].head(100000, npartitions=1))")), _row_cap(ast.parse("r = len(p)"))
    ('head(100000)', None)
    >>> _row_cap(ast.parse("r = len(p.compute().iloc[:50000])"))
    'iloc[:50000]'
    """
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("head", "tail", "nlargest", "nsmallest"):
            given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "n"), None)
            if isinstance(given, ast.Constant) and isinstance(given.value, int):
                return f"{node.func.attr}({given.value})"
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in ("iloc", "loc"):
            bound = node.slice.upper if isinstance(node.slice, ast.Slice) else None
            if isinstance(bound, ast.Constant) and isinstance(bound.value, int):
                return f"{node.value.attr}[:{bound.value}]"
    return None


def _keeps_ddf(cell: str | None, keep: str) -> None:
    """A :class:`Hint` when the answer cell assigns ddf (the lesson's persisted data); ``keep``: what to do instead."""
    made = _parse(cell or "")
    node = _assigned(made, "ddf") if made is not None else None
    if node is not None:
        value = ast.unparse(node.value) if isinstance(node, ast.Assign) else "..."  # (learner review 38: ddf.assign(z=1))
        value = value if len(value) <= 40 and "x_demeaned" not in value else "..."  # (a long one may hold the answer)
        raise Hint(
            f"your answer cell assigns ddf (ddf = {value}): ddf is no longer the persisted data the lesson made. Keep ddf "
            f"as it is and {keep}; re-run the cell that builds and persists ddf, then your answer cell."
        )


def _judge_04_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    ddf, value = ns["ddf"], ans["rows_in_partition_2"]
    require_computed(value, "rows_in_partition_2")
    _keeps_ddf(answer_cell(ns, "rows_in_partition_2"), "count the rows of its partition 2")  # (learner review 50: a repartition)
    require_no_notebook_rows(ns, "rows_in_partition_2", "ddf")
    if isinstance(value, str):
        raise Hint("rows_in_partition_2 is a str (text): the question asks for the number of rows itself, a whole number.")
    number = as_number(value)
    if number is None or number != int(number):
        raise Hint(f"rows_in_partition_2 should be a whole number of rows; {describe(value)} is not.")
    if isinstance(value, float) or str(getattr(value, "dtype", "int")).startswith("float"):  # (learner review 27: len(...) * 1.0)
        raise Hint("rows_in_partition_2 is a float: a number of rows is a whole number, an int. Keep the int the count gives.")
    found = from_cell(ns, ("rows_in_partition_2",), values=("rows_in_partition_2",))
    cell = found.cell if found is not None else answer_cell(ns, "rows_in_partition_2")
    require_contributes(cell, "rows_in_partition_2", ns)
    require_no_chooser(cell, "rows_in_partition_2")  # (learner review 29: max(len(...), a number written out))
    if _rounds_to_tens(cell, "rows_in_partition_2"):  # (learner review 29: round(len(...), -2) changed nothing here)
        raise Hint(
            "your answer cell rounds the count (round with negative digits, to tens or hundreds): a number of rows is "
            "exact, and rounded it holds only while the count happens to be round. Keep the count as it is."
        )
    expected = len(ddf.partitions[2])
    if int(number) == expected and _size_divided(answer_cell(ns, "rows_in_partition_2")):
        raise Hint(
            "your answer cell reads .size, which counts every value of a frame (its rows times its columns), and then "
            "undoes the columns by hand: the question asks how many rows partition 2 has. Count its rows directly."
        )
    if int(number) == expected and found is not None:
        parts = [str(k) for k in flatten(ddf.__dask_keys__())]
        read = {i for r in found.runs_for("rows_in_partition_2") for i, k in enumerate(parts) if k in r["keys"]}
        if len(read) == 1 and read != {2}:
            (other,) = read
            raise Hint(
                f"the number is right, but your answer cell counted partition {other}, which happens to have as many rows: "
                "partitions are numbered from 0. Select the one the question names."
            )
        if read - {2}:
            raise Hint(
                f"the number is right, but your answer cell had the workers go through {len(read)} partitions of ddf "
                "(every partition, or each in turn) and kept one result: the exercise is about reading ONE partition. "
                "Select that one partition of ddf and let Dask count its rows."
            )
        wanted = {str(k) for k in flatten(ddf.partitions[2].__dask_keys__())}
        frame = _other_frame_selected(found.cell, ns)
        if frame is not None and not any(r["keys"] & wanted for r in found.runs_for("rows_in_partition_2")):
            raise Hint(
                f"the number is right, but your answer cell counted partition 2 of `{frame}`, another frame than ddf "
                "(it has the same rows there, here). The question is about ddf: count ITS partition 2."
            )
        runs = found.runs_for("rows_in_partition_2")
        if not any(r["keys"] & wanted for r in runs) and not _partition_2_held(found.cell, ns, wanted):
            raise Hint(
                "the number is right, but your answer cell did not have the workers count partition 2 by itself: it "
                "counted from the whole frame, other partitions, or a copy in this notebook. Select that one partition "
                "of ddf and let Dask count its rows."
            )
        tree = _without_printing(_parse(found.cell))  # (learner review 57: print(p2.head(2)) beside p2.shape[0])
        calls = [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)] if tree else []
        missing, repeated, passing = "has no missing values", "has no repeated values", "has no row that fails it"
        dropping = {"count": ("count() counts the values that are NOT missing", missing), "dropna": ("dropna() drops the rows with a missing value", missing),
                    "describe": ("describe()'s count is the number of values that are NOT missing", missing),
                    "value_counts": ("value_counts() leaves the missing values out", missing),
                    "notna": ("notna() marks the values that are NOT missing", missing),
                    "notnull": ("notnull() marks the values that are NOT missing", missing),
                    "groupby": ("a groupby leaves out the rows whose key is missing (dropna=True by default)", missing),
                    "drop_duplicates": ("drop_duplicates() drops repeated rows", repeated), "nunique": ("nunique() counts distinct values", repeated),
                    "unique": ("unique() keeps distinct values only", repeated), "query": ("query() keeps the rows that match it", passing)}  # fmt: skip
        dropped = next((dropping[c] for c in calls if c in dropping), None)
        masks = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Compare)] if tree else []
        if dropped is None and masks:  # p[p.id > 0]: the rows that pass a test
            dropped = (f"a mask ({ast.unparse(masks[0].slice)}) keeps only the rows that pass it", passing)
        if dropped is not None:  # right here only because partition 2 has no missing or repeated values (learner review 20)
            raise Hint(
                f"the number is right here, but {dropped[0]}: it matches the number of rows only while the partition "
                f"{dropped[1]}, as this one happens to. The question asks for its rows: count them."
            )
        cap = _row_cap(tree)
        if cap is not None:  # (learner review 41: len(p.head(100000, npartitions=1)), a cap above the count)
            raise Hint(
                f"the number is right here, but your answer cell caps the rows it counts ({cap}: at most that many): it "
                "matches the number of rows only while the partition has no more, as this one happens to. The question "
                "asks for its rows: count them all, with no cap."
            )
        by_number = ("partitions[", "get_partition(", "to_delayed(", "partition_info")
        if ".loc[" in found.cell and not any(p in found.cell for p in by_number):
            raise Hint(
                "the number is right, but your answer cell selects rows by their index values (.loc[...]), not partition "
                "2: that those rows are exactly partition 2 holds only because partition 2 happens to cover that range "
                "(see ddf.divisions); with other divisions it would count other rows. Select the partition by its number."
            )
        prefixes = {p for r in found.runs_for("rows_in_partition_2") for p in r["prefixes"]}
        counting = any(p.startswith(("len", "size")) for p in prefixes) or all(p.startswith(MOVES) or p in {key_split(k) for k in parts} for p in prefixes)
        if not counting and any(p.startswith(("max", "min", "mean")) for p in prefixes):  # (learner reviews 24-25)
            raise Hint(
                "the number is right here, but nothing in your answer cell counts rows: it is worked out from the "
                "partition's values (its index span divided by the step, a sum divided by a mean), which gives the number "
                "of rows only for data like this (no gaps, no missing values). Count the rows of that partition."
            )
        held = {key_split(k) for k in flatten(ddf.__dask_keys__())}  # reading ddf's held partitions is not counting
        # taking the partition's index is a selection, not a count (learner review 38: len(....index.compute()))
        counted = any(not p.startswith(MOVES) and p not in ("index", "getattr") for r in found.runs_for("rows_in_partition_2") for p in r["prefixes"] - held)
        if _not_following_shorter(ns, ddf, number):  # (learner review 30: a count rounded by hand, while it happened to be round)
            raise Hint(
                f"rows_in_partition_2 does not follow the data: the check ran your answer cell again on a ddf whose "
                f"partition 2 has {SHORTER} fewer rows, and it did not give {SHORTER} fewer. Count the rows of that partition as "
                "they are, in ddf itself (nothing rounded, formatted or typed; no other frame)."
            )
        counted = counted and not _counted_after_compute(cell)  # (learner review 50: len(ddf.partitions[2].compute()))
        where = "counted by the workers" if counted else "only that partition (or its index) was brought here, then counted"
        return f"the number of rows of that one partition ({where})."
    client = client_of(ns, ddf)
    runs = [r for r in runs_touching(client, ddf) if r["prefixes"] - r["own"]] if client is not None else []
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
    if int(number) == expected * len(ddf.columns):
        raise Hint(
            "that is the number of values in partition 2 (its rows times its columns: .size counts every cell of a frame): "
            "the question asks how many rows it has."
        )
    if int(number) == len(ddf):
        raise Hint("that is the number of rows of the whole frame; the question asks about one partition.")
    cell = answer_cell(ns, "rows_in_partition_2") or ""
    columns_read = "shape[1]" in cell.replace(" ", "") or ".columns" in cell  # (learner review 55: 4 columns, 4 partitions)
    if int(number) == len(ddf.columns) and (columns_read or int(number) != ddf.npartitions):
        raise Hint("that is the number of columns of the frame; the question asks how many rows partition 2 has.")
    if int(number) == ddf.npartitions:
        raise Hint("that is the number of partitions; the question asks how many rows ONE partition has.")
    if int(number) * ddf.npartitions in range(len(ddf) - ddf.npartitions, len(ddf) + 1):
        raise Hint("that is the whole frame's rows divided by the number of partitions (an average): partitions differ in size. Count partition 2 itself.")
    lengths = list(ddf.map_partitions(len).compute())
    others = [i for i, n in enumerate(lengths) if n == int(number) and i != 2]
    if found is not None:
        parts = [str(k) for k in flatten(ddf.__dask_keys__())]
        read = {i for r in found.runs_for("rows_in_partition_2") for i, k in enumerate(parts) if k in r["keys"]}
        if len(read) > 1:
            tree = _parse(found.cell)
            sliced = tree is None or any(isinstance(n, ast.Slice) for n in ast.walk(tree))  # a guessed slice of the frame (review 10)
            if others and not sliced:  # (learner review 57: sizes[1] of every partition's length was told "a guess")
                raise Hint(
                    f"that is the row count of partition {others[0]}: partitions are numbered from 0, take the one the question "
                    f"names. (Your answer cell also had the workers count {len(read)} partitions where one is needed.)"
                )
            several = next(
                (
                    ast.unparse(n)
                    for n in ast.walk(tree or ast.Module(body=[], type_ignores=[]))
                    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "partitions" and isinstance(n.slice, ast.Slice)
                ),
                None,
            )
            if several is not None:  # (learner review 58: ddf.partitions[1:3] was told "counted a part ... a guess")
                raise Hint(
                    f"{several} is a frame of several partitions: your answer cell had the workers count {len(read)} "
                    "partitions together, and the exercise is about reading ONE partition. Select that one partition."
                )
            raise Hint(
                f"your answer cell had the workers go through {len(read)} partitions of ddf (or send them all here) and "
                "then counted a part of that: where partition 2 starts and ends in the whole frame is a guess, and the "
                "exercise is about reading ONE partition. Select that one partition of ddf and let Dask count its rows."
            )
    selects = any(w in cell for w in (".partitions[", "get_partition(", "to_delayed(", ".blocks["))
    if selects and "ddf" not in names_read(cell, ns):  # (learner review 59: partition 2 of a new, untrimmed timeseries)
        raise Hint("your answer cell counts the rows of a partition of another frame than ddf: the question is about ddf's partition 2.")
    if others and selects:
        raise Hint(f"that is the row count of partition {others[0]}: partitions are numbered from 0, select the one the question names.")
    raise Hint("that is not the row count of partition 2: select that one partition (counting from 0) and take its length.")


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
]


def _takes_partition_info(function: Any) -> bool:
    """True when ``function`` (the learner's demean) has a ``partition_info`` parameter, which map_partitions fills in.

    >>> _takes_partition_info(lambda df, partition_info=None: df)
    True
    >>> _takes_partition_info(lambda df: df)
    False
    """
    try:
        return "partition_info" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _counted_after_compute(cell: str | None) -> bool:
    """True when the answer cell counts what a ``.compute()`` brought here: ``len(part.compute())``, ``....compute().shape``.

    >>> _counted_after_compute("n = len(ddf.partitions[2].compute())"), _counted_after_compute("n = len(ddf.partitions[2])")
    (True, False)
    """
    tree = _parse(cell or "")
    computed = lambda n: any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "compute" for c in ast.walk(n))  # noqa: E731
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args and computed(node.args[0]):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "size") and computed(node.value):
            return True
    return False
