"""Exercises of notebook 05 (delayed regressions): reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from typing import Any

import dask
from dask.utils import key_split
from distributed import Future, futures_of

from .. import scheduler_view
from ..notebook.cellreads import _function_globals
from .elsewhere import unchanged_when
from .evidence import client_of
from .judging import describe, from_cell, is_lazy, require_one_submission
from .model import Exercise, Hint
from .own_code import own_trees
from .replay import NotReplayed, _assigned, _depends, _parse, answer_cell, nodes_making, replay, typed_in

# --- 05 · delayed regressions ------------------------------------------------------------------------


def _frames_in(d: Any) -> bool:
    """True when a task of the Delayed ``d`` has a frame (pandas/cuDF) among its arguments: the data inside the graph."""
    for t in d.__dask_graph__().values():
        given = [*tuple(getattr(t, "args", ())), *dict(getattr(t, "kwargs", None) or {}).values()]
        if any(hasattr(a, "columns") and hasattr(a, "shape") and not is_lazy(a) for a in given):
            return True
    return False


def _taken(d: Any) -> set[str]:
    """The keys the Delayed ``d`` reads from outside its own graph: the futures (scattered data) its calls take."""
    graph = d.__dask_graph__()
    return {str(k) for t in graph.values() for k in (getattr(t, "dependencies", None) or ())} - {str(k) for k in graph}


def _uses_future(ns: dict[str, Any], lazy: list[Any], name: str) -> None:
    """A :class:`Hint` unless every delayed call takes the one copy of the data already on the cluster (data_future),
    not a frame from the notebook (whether data_future exists or not) nor a copy scattered per call."""
    key = getattr(ns.get("data_future"), "key", None)
    skipped = "" if key is not None else " (this kernel has no data_future: run the cell above that scatters df first)"
    if any(is_lazy(d) and futures_of(d) for d in lazy):  # (learner review 35: told the calls carried a frame)
        raise Hint(
            f"the calls in {name} were persisted (.persist() on each call started its fit on the cluster right away): "
            f"{name} holds fits already running one by one, not lazy calls. Leave each call lazy, and compute them "
            "together in one step."
        )
    if any(_frames_in(d) for d in lazy):
        raise Hint(
            f"the calls in {name} carry the data inside their task graph (a frame from this notebook, sent again with "
            f"every computation) instead of the copy already on the workers. Pass the future the lesson scattered{skipped}."
        )
    taken = [_taken(d) for d in lazy]
    copies = set().union(*taken)
    cell = answer_cell(ns, name)
    if (len(copies) > 1 and all(taken) and (key is None or str(key) not in copies)) or (cell is not None and _scatters_per_call(cell)):
        raise Hint(
            f"each call in {name} takes its own copy of the data, scattered for that call (a scatter inside the loop sends "
            f"the frame again every time, to one worker) instead of the one copy the lesson sent to every worker once. "
            f"Pass that future{skipped}."
        )
    if key is not None and not all(str(key) in t for t in taken):
        what = (
            "take another copy of the data than data_future (one your answer cell scattered or made)"
            if copies
            else "carry the data inside their task graph (a frame from this notebook, sent again with every computation)"
        )
        raise Hint(f"the calls in {name} {what} instead of the copy already on the workers. Pass the future the lesson scattered.")


def _scatters_per_call(cell: str) -> bool:
    """True when the answer cell calls ``.scatter(...)`` inside a loop or a comprehension (one scatter per call)."""
    tree = _parse(cell)
    loops = (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)
    return tree is not None and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "scatter"
        for loop in ast.walk(tree)
        if isinstance(loop, loops)
        for n in ast.walk(loop)
    )


def _fits_in_one_go(ns: dict[str, Any], names: tuple[str, ...], lazy: list[Any]) -> None:
    """A :class:`Hint` unless the answer cell, run again, sent its fits to the cluster in one submission (None: no cell)."""
    found = from_cell(ns, names)
    if found is None:
        return
    tree = _parse(found.cell)
    local = tree is not None and any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "fit_one" for n in nodes_making(tree, names[0]))
    if local:
        raise Hint(
            f"your answer cell makes {names[0]} with fit_one, the plain function: those fits run here, in this notebook, "
            "one after another, whatever the cluster computed beside them. Use the delayed fit_ols, and the results Dask "
            "computes from it."
        )
    name, prefix = names[0], key_split(lazy[0].key)
    fitting = [r for r in found.runs_for(name) if prefix in r["prefixes"]]
    replayed = found.values.get(names[1])
    own = {str(d.key) for d in replayed if hasattr(d, "key")} if isinstance(replayed, (list, tuple)) else set()
    if _submitted_instead(found.cell, names[1]):
        raise Hint(
            f"{name} does not come from {names[1]}: your answer cell sent its own fit calls to the cluster (client.submit "
            f"or client.map: those do run side by side), and the delayed calls in {names[1]} never ran. The exercise is "
            f"about the delayed calls: hand {names[1]} itself to Dask, all together."
        )
    if fitting and own and not any(r["keys"] & own for r in fitting):
        raise Hint(
            f"{name} does not come from {names[1]}: your answer cell computed fit calls written elsewhere in it, and the "
            f"ones {names[1]} holds never ran (is {names[1]} assigned in your answer cell?). Make {names[1]} the list "
            f"of delayed fits, then hand {names[1]} itself to Dask, all together."
        )
    if not fitting and any(prefix in r["prefixes"] for r in found.runs):
        how = " (it is written out by hand)" if typed_in(found.cell, name) else ""
        raise Hint(
            f"your answer cell computed the fits on the cluster, but {name} is not taken from their results{how}: the line "
            f"that sets it does not read them. Make {name} from the computed results."
        )
    if not fitting:
        raise Hint(  # (learner review 41: "run again" puzzled; say what the check did and what the value came from)
            f"{name} does not come from fits your answer cell ran: the check ran your answer cell again, and it sent no "
            f"fits to the cluster, so {name} is taken from something else (an earlier table, a value typed in, a fit "
            f"computed in another cell). Compute {names[1]} in your answer cell and take {name} from those results."
        )
    if len(fitting) > 1:
        # .compute(), dask.compute, or client.compute(...).result() / gather(client.compute(...)): each waits for its results
        blocking = "client.compute(" not in found.cell or _waits_each(found.cell)
        why = (
            "each waits for the previous one"
            if blocking
            else "client.compute returns at once, so these fits did run side by side, but each was its own round trip "
            "to the scheduler, and the exercise is about the one call that hands them all over together"
        )
        raise Hint(
            f"your answer cell sends the fits to the scheduler in separate submissions (separate compute calls; the "
            f"scheduler received {len(fitting)}: a call whose fits were already computed or on their way sends nothing "
            f"new): {why}. Hand ALL of them to Dask in a single call (see the lesson above)."
        )


def _waits_each(cell: str) -> bool:
    """True when the cell waits for each client.compute at once: ``client.compute(f).result()`` or
    ``client.gather(client.compute(f))`` (learner review 29: told these "did run side by side")."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return False
    computes = lambda n: isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compute"  # noqa: E731
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "result" and computes(node.func.value):
            return True
        if node.func.attr == "gather" and node.args and computes(node.args[0]):
            return True
    return False


def _submitted_instead(cell: str, lazy_name: str) -> bool:
    """True when the answer cell calls ``.submit``/``.map`` and never reads ``lazy_name`` (the fits went another way)."""
    tree = ast.parse(cell)
    reads = any(isinstance(n, ast.Name) and n.id == lazy_name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return not reads and bool(calls & {"submit", "map"})


def _is_results(value: Any) -> bool:
    """True for a list or tuple of several fit results (each a 4-tuple: features, coefficients, intercept, R²)."""
    return isinstance(value, (list, tuple)) and len(value) > 1 and all(isinstance(r, tuple) and len(r) == 4 for r in value)


def _index(node: ast.expr) -> int | None:
    """The int a subscript reads (``r[3]``, ``r[-1]``); None for anything else."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _picked_by(cell: str | None, ns: dict[str, Any]) -> str | None:
    """How the answer cell picks best_single_feature when it is visibly not by R² (the last entry of each result):
    by a fixed position in the results, or by a max/sorted key that reads other entries; None otherwise."""
    tree = _parse(cell) if cell is not None else None
    node = _assigned(tree, "best_single_feature") if tree is not None else None
    value = getattr(node, "value", None)
    if value is None:
        return None
    typed = _typed_feature(value, tree, ns) if tree is not None else None
    if typed is not None:
        return "by a feature name written out in it (that result found by its name)"
    if tree is not None and not _compares(tree, ns) and not _helper_compares(cell, ns):
        return "without comparing anything (no max, min, sort or comparison of the fits makes it)"
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    base = value
    while isinstance(base, ast.Subscript):
        base = base.value
    if not calls and isinstance(base, ast.Name) and _is_results(ns.get(base.id)):
        return "by its position in the results (a fixed index), not by comparing the fits"
    for call in calls:
        key = next((k.value for k in call.keywords if k.arg == "key"), None)
        over = call.args[0] if call.args else None  # what max/sorted go through: the results themselves, or pairs made of them
        if not (isinstance(over, ast.Name) and _is_results(ns.get(over.id))) and not (isinstance(over, ast.Call) and "compute" in ast.unparse(over.func)):
            continue  # zip(features, res), a generator of (name, r2): entry numbers mean something else there
        if isinstance(key, ast.Lambda):
            arg = key.args.args[0].arg if key.args.args else None  # the entries of the result itself, not within them
            read = {
                i
                for n in ast.walk(key.body)
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == arg and (i := _index(n.slice)) is not None
            }
            if read and not read & {3, -1}:
                entry = sorted(read)[0]
                what = {0: " (its features)", 1: " (its coefficients)", 2: " (its intercept)"}.get(entry, "")
                return f"by entry {entry} of each result{what} (max/min/sorted's key), not by its R²"
    return None


#: Calls that choose by comparing values (the R² of the fits, in a right answer).
_COMPARING = frozenset(
    {"max", "min", "sorted", "sort", "sort_values", "argmax", "argmin", "nanargmax", "nanargmin", "argsort", "argpartition"}
    | {"idxmax", "idxmin", "nlargest", "nsmallest"}
)


def _compares(tree: ast.Module, ns: dict[str, Any]) -> bool:
    """True when the statements that make best_single_feature compare something (a max/min/sort call, or ``<``/``>``),
    or read a name of the notebook that an earlier cell made (the comparison may be there); False when nothing in its
    making compares: ``features[1] if res else None``, ``features[int(bool(res))]``, ``res[len("a")][0][0]``."""
    made_here: set[str] = set()
    body = [tree.body[i] for i in _depends(tree.body, "best_single_feature")]
    for statement in body:
        for node in ast.walk(statement):
            if _compares_values(node):
                return True
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _COMPARING:
                return True  # max handed on: dask.delayed(max)(single_fits, key=...) (learner review 15: a false reject)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                made_here.add(node.id)
    if any(_COMPARING & _function_globals(ns.get(n), set()) for statement in body for n in _loaded(statement)):
        return True  # a helper function of the learner's that compares (best_of(single_fits): max inside; review 17)
    known = {"features", "single_fits", "dask", "session", "client", "np", "pd", "df", "data_future", "fit_ols", "fit_one"}
    read = {n.id for statement in body for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    earlier = {n for n in read - made_here - known if n in ns and not callable(ns[n])}
    return bool(earlier)


def _compares_values(node: ast.AST) -> bool:
    """True for ``<``/``>``/``<=``/``>=``, or a call that chooses by comparing (max, sorted, idxmax...)."""
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.Gt, ast.LtE, ast.GtE)) for op in node.ops):
        return True
    func = node.func if isinstance(node, ast.Call) else None
    return func is not None and (getattr(func, "id", None) or getattr(func, "attr", None)) in _COMPARING


def _helper_compares(cell: str | None, ns: dict[str, Any]) -> bool:
    """True when a function of the learner's own that the answer cell calls compares values (``if r2 > best_r2`` in a
    loop: learner review 19 had it refused as "without comparing anything")."""
    return any(_compares_values(node) for _, code in own_trees(cell, ns, "05-1") for node in ast.walk(code))


def _loaded(statement: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _typed_feature(value: ast.expr, tree: ast.Module, ns: dict[str, Any]) -> str | None:
    """A feature's name written as a string in the expression that makes best_single_feature, or in the cell's
    assignment of a name that expression reads (``[r for r in res if r[0] == ("x1",)][0][0][0]``); None otherwise."""
    features = {str(f) for f in ns.get("features", ())}
    nodes = [value]
    for name in {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - {"single_fits"}:  # the fits may name their features
        made = getattr(_assigned(tree, name), "value", None)
        if isinstance(made, ast.expr):
            nodes.append(made)
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in features:
                return n.value
    return None


def _judge_05_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    best = ans["best_single_feature"]
    require_one_submission(ns, ans["single_fits"], "single_fits")
    passed = [a for d in ans["single_fits"] for t in d.__dask_graph__().values() for a in tuple(getattr(t, "args", ()))[1:2]]  # feature_cols
    if any(isinstance(a, str) for a in passed):
        raise Hint(
            "a feature is passed as a bare str: fit_ols takes a TUPLE of column names (it goes through them one by one, "
            "so a str would be read letter by letter). Pass a tuple of one name for each fit."
        )
    _uses_future(ns, ans["single_fits"], "single_fits")
    _fits_in_one_go(ns, ("best_single_feature", "single_fits"), ans["single_fits"])
    results = dask.compute(*ans["single_fits"])
    _fits_of_y(results, ns, "single_fits", "fit_ols(data_future, (name,))")
    features = [f for f in ns["features"]]
    if any("y" in tuple(r[0]) for r in results):
        raise Hint("single_fits includes a fit of y itself: y is the target the models predict, not a feature. Fit one model per name in features.")
    fitted = sorted(tuple(r[0]) for r in results)
    if len(fitted) < len(features) and set(fitted) < {(f,) for f in features}:  # (learner review 39: single_fits[:3] after)
        raise Hint(f"single_fits holds {len(fitted)} of the {len(features)} fits: one fit per feature, every feature, each with ONE feature.")
    if fitted != sorted((f,) for f in features):
        raise Hint("single_fits should hold one fit per feature, each with ONE feature (a tuple of length one).")
    if isinstance(best, (tuple, list)) and len(best) == 1:
        raise Hint(f"best_single_feature is {describe(best)} holding a name: the question asks for the column name itself, a str.")
    if not isinstance(best, str) or best not in features:
        raise Hint(f"best_single_feature should be one feature's name (a str, as in features); {describe(best)} that is not one of them is not it.")
    how = _picked_by(answer_cell(ns, "best_single_feature"), ns)
    if how is not None:
        raise Hint(
            f"your answer cell picks best_single_feature {how}: it may name the right feature by chance, but the "
            "question is which fit explains y best. Compare the R² of each result (its last entry)."
        )
    sliced = _sliced(answer_cell(ns, "best_single_feature"), "single_fits")
    if sliced is not None:  # (learner review 35: dask.compute(*single_fits[:6]) was told it picks "by where a feature sits")
        raise Hint(
            f"your answer cell computes only {sliced}, a part of the fits: the best feature is chosen among them all. "
            "Compute every fit in single_fits, then compare their R² (each result's last entry)."
        )
    _same_in_another_order(ns, best)
    r2 = {r[0][0]: float(r[3]) for r in results}
    if r2[best] < max(r2.values()):
        worst = " It has the LOWEST R²." if r2[best] == min(r2.values()) else ""
        raise Hint(f"that feature does not have the highest R² among your fits.{worst} Compare the R² of each result (its last entry).")
    _follows_other_data(ns, best)
    return "the single feature with the highest R², from fits that ran together on the cluster."


def _other_data(ns: dict[str, Any]) -> tuple[Any, str] | None:
    """``df`` with another y, in which every feature explains a little of y and a feature in the middle of ``features``
    (not the first, not the last) explains the most, the best feature's values 10 times larger (so its coefficient is
    not the largest); with the feature that has the highest R² there. None when the notebook's names are not there."""
    import numpy as np

    from ..compute import to_host

    df, features = ns.get("df"), ns.get("features")
    if df is None or not isinstance(features, list) or len(features) < 3 or not all(f in df.columns for f in features):
        return None
    host = to_host(df)
    middle = len(features) // 2
    y = sum((1.0 - 0.01 * abs(i - middle)) * np.asarray(host[f], dtype=float) for i, f in enumerate(features))
    r2 = {f: float(np.corrcoef(np.asarray(host[f], dtype=float), y)[0, 1] ** 2) for f in features}
    other = df.copy()
    other["y"] = y
    # The best feature measured in units 10 times smaller: its coefficient is then the smallest, R² stays (learner
    # review 24: a loop that kept the largest |coef| named the best feature, all features having the same spread).
    best = max(r2, key=lambda f: r2[f])
    other[best] = other[best] * 10.0
    return other, best


@contextlib.contextmanager
def _on_other_data(ns: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str] | None]:
    """The namespace changes that hand the answer cell ``_other_data`` (as ``df`` and, scattered, as ``data_future``) and
    the feature with the highest R² there; None when they cannot be made. The scattered copy is released after."""
    made = _other_data(ns)
    client = client_of(ns)
    if made is None or client is None:
        yield None
        return
    future = client.scatter(made[0], broadcast=True, hash=False)
    try:
        yield {"df": made[0], "data_future": future}, made[1]
    finally:
        future.release()


def _follows_other_data(ns: dict[str, Any], best: str) -> None:
    """A :class:`Hint` when the answer cell, run again on other data (``_other_data``, scattered as ``data_future``),
    does not name the feature with the highest R² there: a pick by a hand-set threshold (``next(r for r in res if
    r[3] > 0.3)``, learner review 14) or a name kept from elsewhere. Nothing when the cell cannot be run again."""
    with _on_other_data(ns) as other:
        if other is None:
            return
        changes, expected = other
        try:
            found = replay({**ns, **changes}, ("best_single_feature", "single_fits"), watch=False)
            again = found.values.get("best_single_feature") if found is not None else None
            failed = None
        except NotReplayed:
            return
        except Exception as err:  # the cell itself fails on that data
            again, failed, found = None, type(err).__name__, None
    if found is not None and _keys(found.values.get("single_fits")) == _keys(ns.get("single_fits")) != set():
        raise Hint(
            "your single_fits are made before the answer cell runs (in another cell, or kept from before): the check runs "
            "your answer cell again on other data, and those delayed calls still fit the old data. Build the list of "
            "delayed calls in the answer cell itself, as the exercise asks, then compute them together there."
        )
    if again == expected or (again is None and failed is None):
        return
    what = f"it fails ({failed})" if failed else "it names another feature"
    raise Hint(
        f"your answer cell does not pick the best fit whatever the data: run again on other data (another y, in which "
        f"every feature explains a little, and the best one's values are 10 times larger), {what}. A pick by anything "
        "but R² (a coefficient's size, the intercept, a threshold, a name kept from elsewhere) can agree with R² on one "
        "dataset only. Take the feature of the result with the highest R² (its last entry)."
    )


def _keys(fits: Any) -> set[Any]:
    """The keys of a list of delayed calls (set() for anything else)."""
    if not isinstance(fits, (list, tuple)):
        return set()
    return {getattr(f, "key", None) for f in fits if hasattr(f, "__dask_graph__")}


def _sliced(cell: str | None, name: str) -> str | None:
    """``single_fits[:6]`` when the cell takes a slice of ``name`` (a part of the list), else None.

    >>> _sliced("out = dask.compute(*single_fits[:6])", "single_fits"), _sliced("out = dask.compute(*single_fits)", "single_fits")
    ('single_fits[:6]', None)
    """
    tree = _parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name and isinstance(node.slice, ast.Slice):
            return ast.unparse(node)
    return None


def _same_in_another_order(ns: dict[str, Any], best: str) -> None:
    """A :class:`Hint` when the answer cell, run again with ``features`` listed in reverse order, names another feature:
    a pick by R² names the same one whatever the order; a pick by position (``features[1] if res else None``,
    ``res[-len(res) + 1]``, a key that favours one place) does not. Nothing when the cell cannot be run again."""
    features = ns.get("features")
    if not isinstance(features, list) or len(features) < 2:
        return
    try:
        found = replay({**ns, "features": list(reversed(features))}, ("best_single_feature",), watch=False)
    except Exception:
        return  # the cell cannot run with the order changed: judged by the rest
    again = found.values.get("best_single_feature") if found is not None else None
    if isinstance(again, str) and again != best:
        raise Hint(
            "your answer cell picks best_single_feature by where a feature sits, not by how well its fit explains y: "
            "run again with the features listed in another order, it names another feature. Compare the R² of each "
            "result (its last entry) and take the feature of the best one."
        )


def _early_05_2(filled: dict[str, Any]) -> None:
    """The answer cell raised before x0_results was set: a pair of x0 with itself is the usual reason."""
    for d in filled.get("lazy_fits", ()) if isinstance(filled.get("lazy_fits"), (list, tuple)) else ():
        args = [a for t in d.__dask_graph__().values() for a in getattr(t, "args", ()) if isinstance(a, tuple)]
        if any(len(a) == 2 and a[0] == a[1] for a in args):
            raise Hint(
                "x0_results was never set because computing lazy_fits failed: one of the fits pairs x0 with itself (the "
                "same column twice in one model, which fit_one refuses: a model's features must be different columns). Pair x0 only with the OTHER features."
            )


def _persisted(results: Any) -> bool:
    """True for persisted Delayed objects (``dask.persist(*lazy_fits)``): each points at a result held on a worker."""
    items = results if isinstance(results, (list, tuple)) else [results]
    return bool(items) and all(is_lazy(r) for r in items) and all(futures_of(r) for r in items)


def _judge_05_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    results = ans["x0_results"]
    if _persisted(results):
        raise Hint(
            "x0_results holds persisted Delayed objects: the fits ran, and their results are held on the workers, but "
            "x0_results is not those results (still Dask objects pointing at the workers). Store the computed results themselves."
        )
    if is_lazy(results) or (isinstance(results, (list, tuple)) and any(is_lazy(r) for r in results)):
        raise Hint("x0_results still holds lazy (Delayed) objects: nothing ran yet. Store the computed results.")
    lazy = ans["lazy_fits"]
    if isinstance(lazy, (list, tuple)) and lazy and all(isinstance(f, Future) for f in lazy):
        raise Hint(
            "lazy_fits holds Futures: the client sent each fit to the cluster as soon as it was made, so there is no list "
            "of lazy calls to hand over together. Build delayed calls (fit_ols(...)) first; compute them afterwards."
        )
    require_one_submission(ns, lazy, "lazy_fits")
    _uses_future(ns, lazy, "lazy_fits")
    _fits_in_one_go(ns, ("x0_results", "lazy_fits"), lazy)
    if isinstance(results, (list, tuple)) and any(isinstance(r, Future) for r in results):
        raise Hint(
            "x0_results holds Futures: the fits ran, but their results are still on the workers. Gather them (or compute "
            "the delayed calls) and store the results."
        )
    if not isinstance(results, (list, tuple)):
        raise Hint(f"x0_results should be the results of computing lazy_fits (a tuple or list), not {describe(results)}.")
    expected = sorted(f for f in ns["features"] if f != "x0")
    if len(results) == 1 and isinstance(results[0], (list, tuple)) and len(results[0]) == len(expected):
        raise Hint(  # dask.compute(lazy_fits): one argument, so one result, the list of fits
            f"x0_results is a {type(results).__name__} holding ONE item, itself the list of all results: dask.compute "
            "gives back one result per argument it was given (and a [...] around the call wraps its tuple once more). Pass "
            "the delayed calls as separate arguments (or take that one item)."
        )
    with_y = [r for r in results if isinstance(r, (list, tuple)) and r and isinstance(r[0], (list, tuple)) and "y" in tuple(r[0])]
    if with_y:  # (learner review 31: features from df.columns, y included, was told only "12 entries")
        raise Hint("lazy_fits includes a fit with y itself: y is the target the models predict, not a feature. Pair x0 with each name in features.")
    one_fit = len(results) == len(ENTRIES) and isinstance(results[0], (list, tuple)) and all(isinstance(f, str) for f in results[0])
    if one_fit and len(expected) != len(ENTRIES):  # (learner review 39: dask.compute(*lazy_fits)[0])
        raise Hint(
            f"x0_results is ONE fit's result (its {len(ENTRIES)} entries: features, coefficients, intercept, R²), not one "
            "result per pair: keep every result dask.compute gives."
        )
    if len(results) != len(expected):
        raise Hint(f"x0_results has {len(results)} entr{'y' if len(results) == 1 else 'ies'}; x0 pairs with {len(expected)} other features.")
    sliced = "lazy_fits[" in (answer_cell(ns, "x0_results") or "").replace(" ", "")
    if sliced and isinstance(lazy, (list, tuple)) and len(lazy) != len(results):  # (learner review 30: compute(*lazy_fits[1:]))
        raise Hint(
            f"lazy_fits holds {len(lazy)} delayed fits, and x0_results {len(results)} results: not every fit of lazy_fits "
            "was computed (a slice left some out). Make lazy_fits exactly the fits the question asks for, x0 with each "
            "other feature, and compute all of them."
        )
    pairs = [tuple(r[0]) if isinstance(r, (list, tuple)) and r and isinstance(r[0], (list, tuple)) else None for r in results]
    if all(p and len(p) == 2 and p[1] == "x0" and p[0] != "x0" for p in pairs):
        raise Hint(
            "each pair has x0 second: the question's pairs start with x0, so that the first coefficient of every result "
            "is x0's and the results line up. Put x0 first in each tuple."
        )
    others = sorted(p[1 - p.index("x0")] for p in pairs if p and len(p) == 2 and "x0" in p)
    if others != expected:
        raise Hint("each result should be a fit of x0 with one other feature, every other feature once.")
    _as_computed(results, lazy)
    kept = _filtered_after(answer_cell(ns, "x0_results"))
    if kept is not None:  # (learner review 46: a filter on R² that happened to drop nothing)
        raise Hint(
            f"your answer cell filters x0_results after computing it (`{kept}`): here it drops none of the results, but "
            "which it keeps depends on this data. Keep every result as dask.compute gives it back."
        )
    _fits_of_y(results, ns)
    _follows_other_data_05_2(ns)
    return f"{len(expected)} models, sent to the cluster in one submission{_side_by_side(ns)}."


def _fits_of_y(results: Any, ns: dict[str, Any], name: str = "x0_results", call: str = "fit_ols(data_future, pair)") -> None:
    """A :class:`Hint` when the first result is not the fit of the lesson's target (the notebook's own fit_one, its default
    target, on the notebook's frame): ``fit_ols(data_future, pair, target="x1")`` agrees with itself (learner review 37;
    05-1's ``target="x0"``, learner review 38)."""
    fit, frame = ns.get("fit_one"), ns.get("df")
    if not callable(fit):
        return
    try:
        pair, r2 = tuple(results[0][0]), float(results[0][3])
        want = float(fit(frame, pair)[3])
    except Exception:
        return
    if abs(want - r2) > 1e-6 * max(1.0, abs(want)):
        raise Hint(
            f"{name} are not fits of the lesson's target: the first one's R² differs from fit_one's own fit of the same "
            f"features (target= another column?). Keep the calls as the lesson makes them: {call}."
        )


#: What each entry of a fit's result is (fit_one returns them in this order).
ENTRIES = ("the features", "the coefficients", "the intercept", "R²")


def _filtered_after(cell: str | None) -> str | None:
    """The statement that makes x0_results again from x0_results with a filter (``[r for r in x0_results if ...]``,
    ``filter(...)``), as written; None when there is none.

    >>> _filtered_after("x0_results = dask.compute(*f)\\nx0_results = [r for r in x0_results if r[3] > 0.2]")
    'x0_results = [r for r in x0_results if r[3] > 0.2]'
    >>> _filtered_after("x0_results = dask.compute(*f)")
    """
    tree = _parse(cell) if cell else None
    bound = [n for n in (tree.body if tree is not None else []) if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "x0_results" for t in n.targets)]
    if len(bound) < 2:
        return None
    value = bound[-1].value
    loops = [n for n in ast.walk(value) if isinstance(n, (ast.ListComp, ast.GeneratorExp)) and any(g.ifs for g in n.generators)]
    filters = [n for n in ast.walk(value) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "filter"]
    return ast.unparse(bound[-1]) if loops or filters else None


def _as_computed(results: Any, lazy: list[Any]) -> None:
    """A :class:`Hint` when x0_results is not what computing lazy_fits gives, entry for entry (learner review 19: a
    typed R² in every result, ``[(c, k, i, 0.99) for c, k, i, r in ...]``, was Correct; the results reversed or rounded
    too). The check computes the learner's own delayed calls; nothing is said when that fails."""
    try:
        computed = list(dask.compute(*lazy))
    except Exception:
        return
    if len(computed) != len(results):
        raise Hint(
            f"lazy_fits holds {len(computed)} delayed calls and x0_results {len(results)} results: x0_results is not what "
            "computing lazy_fits gives (a call added or removed after the compute, or results from other calls). Build "
            "lazy_fits, then compute exactly those calls together, and leave both as they are."
        )
    if all(_same_fit(r, c) for r, c in zip(results, computed, strict=True)):
        return
    if all(any(_same_fit(r, c) for c in computed) for r in results):
        raise Hint(
            "x0_results holds the right results in another order than lazy_fits: dask.compute gives them back in the "
            "order of the delayed calls it is given. Keep that order (no sorting or reversing)."
        )
    wrong = sorted({i for r, c in zip(results, computed, strict=True) for i in range(min(len(r), len(c), 4)) if not _same_entry(r[i], c[i])})
    if not wrong:
        raise Hint("x0_results' entries are not what computing lazy_fits gives. Keep the results as dask.compute gives them.")
    rounded = all(_rounded(r[i], c[i]) for r, c in zip(results, computed, strict=True) for i in wrong)
    what = " and ".join(ENTRIES[i] for i in wrong)
    raise Hint(
        f"in x0_results, {what} of the results {'are rounded: ' if rounded else 'are not what the fits computed: '}the check "
        "computed your lazy_fits and got other values. Keep each result exactly as dask.compute gives it back."
    )


def _same_entry(given: Any, computed: Any) -> bool:
    """True for the same entry of a fit's result: equal names, or numbers equal to within what a second run of the same
    fit may change (a GPU's reductions need not add up in the same order)."""
    import numpy as np

    from .judging import host

    try:
        given, computed = host(given), host(computed)
        if isinstance(computed, (tuple, list, str)):
            return tuple(given) == tuple(computed) if not isinstance(computed, str) else given == computed
        a, b = np.asarray(given, dtype=float), np.asarray(computed, dtype=float)
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))
    except (TypeError, ValueError):
        return False


def _same_fit(given: Any, computed: Any) -> bool:
    """True for the same fit result, entry for entry (see :func:`_same_entry`)."""
    if not isinstance(given, (list, tuple)) or not isinstance(computed, (list, tuple)) or len(given) != len(computed):
        return False
    return all(_same_entry(a, b) for a, b in zip(given, computed, strict=True))


def _rounded(given: Any, computed: Any) -> bool:
    """True when ``given`` is ``computed`` rounded to some decimals (a number or an array of them)."""
    import numpy as np

    try:
        a, b = np.asarray(given, dtype=float), np.asarray(computed, dtype=float)
        return a.shape == b.shape and any(np.allclose(a, np.round(b, d), rtol=0, atol=1e-12) for d in range(0, 7))
    except (TypeError, ValueError):
        return False


def _follows_other_data_05_2(ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer cell, run again on other data, gives the same x0_results: the results were
    taken from fits made before it ran (learner review 15: ``x0_results = results[:11]``, the lesson's table of pairs)."""
    tree = _parse(answer_cell(ns, "x0_results") or "")
    if tree is None or _assigned(tree, "lazy_fits") is None:
        return  # lazy_fits made by an earlier run of the cell: run again, this cell alone could not follow other data
    with _on_other_data(ns) as other:
        kept = other is not None and unchanged_when(ns, "x0_results", other[0])
    if kept:
        raise Hint(
            "x0_results does not follow the data: run again on other data (another y), your answer cell gives the same "
            "results, so they were taken from fits made before it ran, not from the fits it sends to the cluster. Let the "
            "computation of your lazy_fits make x0_results."
        )


def _side_by_side(ns: dict[str, Any]) -> str:
    """ " and run side by side (4 threads)", or, on a cluster of one thread, that they ran one after another here."""
    client = getattr(ns.get("session"), "client", None)
    try:
        threads = sum(int(w.get("nthreads", 0)) for w in scheduler_view.workers(client).values()) if client is not None else 0
    except Exception:  # a client that cannot answer: say nothing about threads
        return ""
    if threads == 1:
        return "; this cluster has one thread, so they ran one after another, but as one graph: on more threads they run side by side"
    return f" and run side by side ({threads} threads)" if threads > 1 else ""


EXERCISES = [
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
