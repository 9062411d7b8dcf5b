"""An answer that is a value another cell made, whatever the answer cell does around it.

The answer cell reads a name it does not assign (``here``, ``X``, ``typed``...) and the answer ends up equal to what
that name holds: a value worked out before the cell ran (in a scratch cell, or typed there), not by the Dask
computation of the cell, however the cell is written: a lambda that drops its argument, a tuple assignment, ``next(iter(
[...]))``, a dict or ``zip`` pick, a later line, an in-place copy (``np.copyto``, ``+= here - answer``), a helper
function (learner review 14 found each of these shapes accepted).

Only data is compared (numbers, strings, arrays, pandas/cuDF objects, and short lists, tuples or dicts of them):
never Dask collections, futures, functions or modules.
"""

from __future__ import annotations

import ast
import contextlib
import numbers
from typing import Any

import numpy as np

from ..notebook.cellreads import names_read
from ..notebook.skipped import names_above
from .judging import host
from .model import Hint
from .own_code import own_trees
from .replay import CUTTING, _assigned, _parse, answer_cell, replay
from .typed import typed_numbers

__all__ = [
    "require_made_in_cell",
    "outside_lesson",
    "looks_up",
    "made_elsewhere",
    "notebook_rows_read",
    "reads_other_data",
    "require_no_notebook_rows",
    "unchanged_when",
    "value_when",
    "same",
    "typed_in_own_code",
]

#: Relative difference below which two floats are the same value (``a + (b - a)`` is not always ``b`` in floating point).
TOLERANCE = 1e-9

#: IPython's own names: never a learner's value.
IPYTHON = frozenset({"In", "Out", "get_ipython", "exit", "quit"})


def _pandas_like(value: Any) -> bool:
    """A pandas or cuDF DataFrame, Series or Index (data in the notebook), not a Dask collection."""
    return hasattr(value, "equals") and hasattr(value, "shape") and not hasattr(value, "__dask_graph__")


def _data(value: Any, depth: int = 0) -> bool:
    """True for a value a learner's answer can be (see the module docstring).

    >>> _data(3), _data("x0"), _data(np.arange(3)), _data([1.0, "a"]), _data(True), _data(len), _data([])
    (True, True, True, True, False, False, False)
    """
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return False
    if isinstance(value, (numbers.Number, str, bytes, np.generic, np.ndarray)):
        return True
    if hasattr(value, "__dask_graph__") or (callable(value) and not hasattr(value, "equals")):
        return False
    if _pandas_like(value) or hasattr(value, "__cuda_array_interface__"):  # (a CuPy array)
        return True
    if isinstance(value, (list, tuple)) and 0 < len(value) <= 1000 and depth < 4:
        return all(_data(v, depth + 1) for v in value)
    if isinstance(value, dict) and 0 < len(value) <= 1000 and depth < 4:
        return all(_data(v, depth + 1) for v in value.values())
    return False


def same(a: Any, b: Any) -> bool:
    """True when two answers hold the same values (a list and a tuple of the same items, a float and a NumPy float,
    two Series whatever their names and index order are alike).

    >>> same([1, 2.0], (1, np.float64(2))), same(3, 3.0000001), same("a", "b"), same(np.arange(3), [0, 1, 2])
    (True, False, False, True)
    >>> a, b = np.array([0.1, 7.3]), np.array([0.7, 2.9])
    >>> same(a + (b - a), b)
    True
    """
    if a is b:
        return True
    with contextlib.suppress(Exception):  # (a cuDF object that cannot come to the host: compared as it is)
        a, b = host(a), host(b)
    try:
        if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
            return type(a) is type(b) and a == b
        if isinstance(a, (numbers.Number, np.generic)) and isinstance(b, (numbers.Number, np.generic)):
            return bool(a == b) or bool(np.isclose(np.asarray(a), np.asarray(b), rtol=TOLERANCE, atol=0))
        if hasattr(a, "equals") and hasattr(b, "equals"):
            if type(a) is not type(b):
                return False
            if a.equals(b):
                return True
            if hasattr(a, "sort_index"):
                a, b = a.sort_index(), b.sort_index()
            return bool(a.equals(b) or (a.index.equals(b.index) and same(np.asarray(a), np.asarray(b))))
        if isinstance(a, dict) or isinstance(b, dict):
            return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            x, y = np.asarray(a), np.asarray(b)
            if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
                return False
            return bool(np.array_equal(x, y) or (x.dtype.kind in "fc" and np.allclose(x, y, rtol=TOLERANCE, atol=0)))
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    except Exception:
        return False
    return False


def made_elsewhere(cell: str | None, name: str, namespace: dict[str, Any]) -> str | None:
    """The name whose value (made before the answer cell ran) the answer ``name`` is, or None.

    >>> ns = {"here": 41.5, "rows": 41.5, "d": None}
    >>> made_elsewhere("rows, _ = here, d", "rows", ns)
    'here'
    >>> made_elsewhere("rows = 41.5", "rows", ns) is None   # typed in the cell: other checks say so
    True
    """
    if cell is None or name not in namespace:
        return None
    answer = namespace[name]
    if not _data(answer):
        return None
    for other in sorted(names_read(cell, namespace) - {name} - IPYTHON):  # (a helper function's data too)
        value = namespace.get(other)
        if _data(value) and (same(value, answer) or _run_of(answer, value)):
            return other
    return None


def _run_of(answer: Any, value: Any) -> bool:
    """True when ``answer`` (a list or tuple of 2 or more) is a run of consecutive items of the longer ``value``: a slice
    of values kept from before (learner review 17: ``typed5[:4]``).

    >>> _run_of(["w", "w"], ["w", "w", "w"]), _run_of([1.0, 2.0], (0.0, 1.0, 2.0)), _run_of([1, 3], [1, 2, 3])
    (True, True, False)
    """
    if not (isinstance(answer, (list, tuple)) and isinstance(value, (list, tuple)) and 2 <= len(answer) < len(value)):
        return False
    n = len(answer)
    return any(all(same(answer[j], value[i + j]) for j in range(n)) for i in range(len(value) - n + 1))


def _carries_numbers(value: Any, depth: int = 0) -> bool:
    """True for data with numbers in it that could carry an answer: a float, a large whole number, an array, a pandas
    or cuDF object, or a list/tuple/dict holding one. Strings, booleans, small whole numbers and containers of only
    those are parameters (a column name, a feature list, a resources dict, a rank k): a learner may set them anywhere.

    >>> [_carries_numbers(v) for v in (0.5, 2**31, 10, "x0", ["--n-workers", "4"], {"GPU_SLOT": 1}, [0.5, 0.1])]
    [True, True, False, False, False, False, True]
    """
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return False
    if isinstance(value, int):
        return abs(value) >= 1000
    if isinstance(value, (numbers.Number, np.generic, np.ndarray)) or hasattr(value, "__cuda_array_interface__"):
        return True
    if _pandas_like(value):
        return True
    if isinstance(value, (list, tuple)) and depth < 4 and len(value) <= 1000:
        return any(_carries_numbers(v, depth + 1) for v in value)
    if isinstance(value, dict) and depth < 4 and len(value) <= 1000:
        return any(_carries_numbers(v, depth + 1) for v in value.values())
    return False


def _stored_anywhere(cell: str) -> set[str]:
    """Every name the cell binds, wherever (a for loop's target, a with ... as, a def, an import, a walrus)."""
    import ast

    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return set()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    names |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return names


#: Exercises about the cluster's own numbers (its workers' memory limits): there a worker count or a limit set in a
#: cell of the learner's own, however small or written as text ("2GiB"), is typed in (learner review 17).
ABOUT_THE_CLUSTER = frozenset({"00-2", "06-2"})

#: Exercises whose answer is a value a learner may well write out (a size worked out by hand from the prompt's numbers):
#: reading a number set in another cell is fine there.
VALUES_WRITTEN_OUT = frozenset({"01-1", "01-2", "02-2", "09-2"})


def _on_the_cluster(value: Any) -> bool:
    """A Dask collection or a future (or a list of futures): judged by its graph and its keys, not by its values."""
    if isinstance(value, (list, tuple)) and value:
        return all(_on_the_cluster(v) for v in value)
    return hasattr(value, "__dask_graph__") or (hasattr(value, "key") and hasattr(value, "cancel"))


def outside_lesson(cell: str | None, key: str, answers: tuple[str, ...], namespace: dict[str, Any]) -> str | None:
    """A name of data with numbers in it (see ``_carries_numbers``) that the answer cell reads, that no cell of the
    lesson above the exercise makes (a scratch cell of the learner's, or a cell further down), or None; None also when
    the open notebook is not known.

    The answer then takes something (a slice, an index, a rounding, a sum of typed limits...) from values worked out
    outside the answer cell (learner review 15: ``x0_results = here12[:11]``, ``fraction = vals[1]``, ``speed_up =
    speed_ups[N_MAX]`` from the table the notebook makes after the exercise). A learner's own helper functions and
    parameters (names, flags, small constants) are not named (review 16: they were, in right answers); the data a
    helper function reads is (``def pick(v): return X``)."""
    if key in VALUES_WRITTEN_OUT or all(_on_the_cluster(namespace.get(a)) for a in answers):
        return None  # (a lazy or persisted answer is judged by its graph: a number set elsewhere is a parameter there)
    lesson = names_above(namespace, key)
    if cell is None or lesson is None:
        return None
    for name in sorted(names_read(cell, namespace) - _stored_anywhere(cell) - lesson - set(answers) - IPYTHON):
        value = namespace.get(name)
        strict = key in ABOUT_THE_CLUSTER and (_data(value) or isinstance(value, bool))
        if (strict or _carries_numbers(value)) and not name.startswith("__"):
            return name
    return None


#: Looking a value up by a name built at run time: where it comes from cannot be read from the cell.
LOOKUPS = ("globals", "locals")  # (eval of typed numbers: the typed-number checks say more)


def looks_up(cell: str | None, namespace: dict[str, Any]) -> str | None:
    """The run-time lookup (``globals()``, ``eval(...)``...) the answer cell calls, or None.

    >>> looks_up("m = globals()['XM']", {}), looks_up("m = locals()['XM']", {}), looks_up("m = f(x)", {}) is None
    ('globals', 'locals', True)
    """
    if cell is None:
        return None
    return next((n for n in LOOKUPS if n in names_read(cell, namespace) and n not in namespace), None)


def require_made_in_cell(cell: str | None, name: str, key: str, answers: tuple[str, ...], namespace: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer ``name`` is not made by its answer cell ``cell``: a run-time lookup
    (``looks_up``), data from outside the lesson's cells (``outside_lesson``), or a value kept from another cell
    (``made_elsewhere``)."""
    lookup = looks_up(cell, namespace)
    if lookup is not None:
        raise Hint(
            f"your answer cell looks a value up by a name built while it runs ({lookup}(...)): where {name} comes from "
            "cannot be read from the cell. Write the computation out in the cell itself."
        )
    outside = outside_lesson(cell, key, answers, namespace)
    if outside is not None:
        raise Hint(
            f"your answer cell reads `{outside}`, which no cell of the lesson above this exercise makes (a cell of your "
            "own, or one further down): what your answer takes from it was worked out outside this cell. Compute it in "
            "this cell, from the lesson's data."
        )
    function = typed_in_own_code(cell, name, key, namespace)
    if function is not None:
        raise Hint(
            f"{name} is a number written out in your function `{function}` (typed in its code or as a parameter's "
            f"default), which your answer cell calls: it is not worked out by the computation, and would stay the same on "
            f"other data. Let {name} be what the computation itself returns."
        )
    source = made_elsewhere(cell, name, namespace)
    held = namespace.get(source) if source is not None else None
    number = isinstance(held, numbers.Real) and not isinstance(held, bool)
    if number and isinstance(held, int) and _rounds(cell):  # equal by chance (learner review 35: round(t1 / t2) == N_MAX)
        return
    if number and isinstance(held, int) and source is not None and _only_an_index(cell, source):  # (H100: medians[1] / medians[N_MAX] == N_MAX == 1)
        return
    if number and _copied(cell, name):
        made = (  # (learner review 56: rel10 computed with Dask in a cell of the learner's own was called a parameter)
            "a number the notebook sets in another cell (one of its parameters)"
            if str(source).isupper()
            else "a number another cell made (this cell only copies it)"
        )
        raise Hint(  # (learner review 33: speed_up = N_MAX, the largest cluster size)
            f"{name} is `{source}`, {made}, not what this exercise asks you to work out. Let {name} be what this cell itself computes from the lesson's data."
        )
    if source is not None:
        calls = _calls_anything(cell)
        raise Hint(
            f"{name} holds values taken from `{source}` (all of them, or a part), which your answer cell reads but does not make: those values "
            f"were worked out before this cell ran (in another cell){', whatever the Dask step of this cell computes' if calls else ''}. "
            f"Let {name} be what this cell itself computes."
        )


def _copied(cell: str | None, name: str) -> bool:
    """True when the statement of ``cell`` making ``name`` only reads another value (``speed_up = N_MAX``,
    ``x = d["k"]``): no arithmetic, no call."""
    tree = _parse(cell) if cell is not None else None
    node = getattr(_assigned(tree, name), "value", None) if tree is not None else None
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))


def _only_an_index(cell: str | None, source: str) -> bool:
    """True when ``cell`` reads ``source`` only to pick an item (``medians[N_MAX]``): a value equal to it is equal by
    chance (one GPU: ``medians[1] / medians[N_MAX]`` is 1, and so is N_MAX).

    >>> _only_an_index("s = m[1] / m[N]", "N"), _only_an_index("s = m[1] / m[N] * N", "N"), _only_an_index("s = N", "N")
    (True, False, False)
    """
    tree = _parse(cell) if cell is not None else None
    if tree is None:
        return False
    indices = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == source and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(n) in indices for n in reads)


def _rounds(cell: str | None) -> bool:
    """True when the cell rounds or cuts a number to a whole one (a :data:`CUTTING` call, or ``//``)."""
    try:
        tree = ast.parse(cell or "")
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return True
        called = node.func if isinstance(node, ast.Call) else None
        if getattr(called, "id", getattr(called, "attr", None)) in CUTTING:
            return True
    return False


def _calls_anything(cell: str | None) -> bool:
    """True when the cell calls something (a Dask step it may take); True too when it cannot be read."""
    try:
        return cell is None or any(isinstance(node, ast.Call) for node in ast.walk(ast.parse(cell)))
    except SyntaxError:
        return True


def typed_in_own_code(cell: str | None, name: str, key: str, namespace: dict[str, Any]) -> str | None:
    """The name of a function of the learner's own (see :mod:`.own_code`), called by the answer cell, in whose code the
    answer ``name`` (a number) is written out, or None (learner review 18: ``def rows_def(frame, i, n=...)`` returning
    ``n``, ``def rel_d(kk, val=...)``). Whole numbers below 100 (a rank, a partition number, a worker count) are
    parameters."""
    value = namespace.get(name)
    if key in VALUES_WRITTEN_OUT or isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        return None
    answer = float(value)
    whole = answer == int(answer) if np.isfinite(answer) else False
    if not np.isfinite(answer) or (whole and abs(answer) < 100) or answer == 0:
        return None
    for function, tree in own_trees(cell, namespace, key):
        for typed, _, _ in typed_numbers(tree):
            if typed == answer or (not whole and abs(typed - answer) <= 1e-3 * abs(answer)):
                return function
    return None


def _frame(value: Any) -> bool:
    """A pandas or cuDF DataFrame or Series (rows in the notebook), not a Dask collection."""
    return _pandas_like(value) and hasattr(value, "index")


def notebook_rows_read(cell: str | None, name: str, namespace: dict[str, Any]) -> str | None:
    """The name of a pandas (or cuDF) frame or Series, already in the notebook, that the answer cell reads without
    making it (``pdf``, made by ``raw.compute()`` in a scratch cell), or None.

    >>> import pandas as pd
    >>> notebook_rows_read("m, _ = pdf.x.max(), d", "m", {"pdf": pd.DataFrame({"x": [1]}), "d": 1})
    'pdf'
    >>> notebook_rows_read("pdf = ddf.compute()\\nm = pdf.x.max()", "m", {"pdf": pd.DataFrame({"x": [1]})}) is None
    True
    """
    if cell is None:
        return None
    return next((n for n in sorted(names_read(cell) - {name} - IPYTHON) if _frame(namespace.get(n))), None)


def require_no_notebook_rows(namespace: dict[str, Any], name: str, source: str) -> None:
    """A :class:`Hint` when the answer cell of ``name`` reads rows already in the notebook (see notebook_rows_read)."""
    rows = notebook_rows_read(answer_cell(namespace, name), name, namespace)
    if rows is not None:
        raise Hint(
            f"your answer cell reads `{rows}`, rows already in this notebook (made before the cell ran): what it works out "
            f"from them is pandas work here, not the cluster's, whatever the Dask step beside it computes. Compute {name} "
            f"from {source} with Dask in this cell."
        )


def reads_other_data(cell: str, namespace: dict[str, Any], *names: str) -> bool:
    """True when ``cell`` reads data other than ``names`` (and plain whole numbers such as a cluster size): a value made
    from them (07's table of speed-ups from medians) would not change when only they are changed.

    >>> reads_other_data("s = medians[1] / table[2]", {"medians": {1: 2.0}, "table": [1.0]}, "medians")
    True
    >>> reads_other_data("s = medians[1] / medians[N]", {"medians": {1: 2.0}, "N": 2}, "medians")
    False
    """
    return any(_data(namespace.get(n)) and not isinstance(namespace.get(n), int) for n in names_read(cell) - set(names) - IPYTHON)


def value_when(namespace: dict[str, Any], name: str, changes: dict[str, Any]) -> Any:
    """The value the answer cell gives ``name`` when run again with ``changes`` in its namespace (other inputs);
    ``Ellipsis`` when it cannot be run again (judged by the rest)."""
    try:
        found = replay({**namespace, **changes}, (name,), watch=False)
    except Exception:
        return Ellipsis
    return found.values.get(name, Ellipsis) if found is not None else Ellipsis


def unchanged_when(namespace: dict[str, Any], name: str, changes: dict[str, Any]) -> bool:
    """True when the answer cell, run again with ``changes`` in its namespace (other inputs), gives ``name`` the same
    value as now: the answer does not follow those inputs. False when it cannot be run again (judged by the rest)."""
    again = value_when(namespace, name, changes)
    return again is not Ellipsis and same(again, namespace.get(name))
