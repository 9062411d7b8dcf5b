"""Notebook 03's evidence: a computed Series per name, and the groupby that made it on the workers (or not)."""

from __future__ import annotations

import ast
from typing import Any

from dask.utils import key_split
from distributed import futures_of

from .evidence import MOVES
from .judging import describe, host, require_computed
from .model import Hint
from .replay import VALUE_CHANGES, Replay, _parse, rebound_with_other_values, rounding_in

__all__ = ["per_name", "reduces", "grouped_on_cluster"]


def per_name(got: Any, name: str, expected: Any, wrong: str, cell: str | None = None) -> None:
    """A :class:`Hint` unless ``got`` is a computed Series equal to ``expected`` (one value per name, any order);
    ``cell``: the answer cell, for what it did (read some partitions only)."""
    require_computed(got, name)
    if hasattr(got, "columns") and "name" in [str(c) for c in got.columns]:
        raise Hint(
            f"{name} is a DataFrame with the names in a column of their own (reset_index, or as_index=False, moves them "
            "out of the index): the question wants the Series the aggregation gives, one value per name, indexed by name."
        )
    if hasattr(got, "columns"):
        n = len(got.columns)
        raise Hint(
            f"{name} is a DataFrame ({n} column{'s' if n != 1 else ''}), not a Series: keep the Series that aggregating the one "
            "column the question is about gives (no list of columns before it, no to_frame() after it)."
        )
    if not (hasattr(got, "index") and hasattr(got, "sum")):
        raise Hint(f"{name} should be a Series with one value per name; {describe(got)} is not one.")
    got, expected = host(got).sort_index(), host(expected).sort_index()
    if getattr(got, "dtype", None) is not None and got.dtype.kind in "mMOU" and expected.dtype.kind in "iuf":  # (learner review 30: idxmax)
        if _numbers_as_text(got, expected):  # (learner review 51: `.astype(str)` got the idxmax words)
            raise Hint(
                f"{name} holds {got.dtype} values, not numbers: the values are turned into text (astype(str)?). Keep the "
                "numbers the aggregation gives, without converting them."
            )
        raise Hint(
            f"{name} holds {got.dtype} values, not numbers: for each name it gives something else than the value asked for "
            "(idxmax and idxmin give WHERE the extreme is, the row's index label, not the value itself)."
        )
    if not got.index.is_unique:
        raise Hint(
            f"{name} has some names more than once: each partition was reduced on its own and the partial results were "
            "never combined. A Dask groupby on the whole frame does both steps (per partition, then across them)."
        )
    same = len(got) == len(expected) and list(got.index) == list(expected.index)
    if not same or not (abs(got.values - expected.values) <= 1e-9 * (1 + abs(expected.values))).all():
        kept = set(got.index) <= set(expected.index) and len(got) < len(expected)
        if kept and (abs(got - expected.reindex(got.index)) <= 1e-9 * (1 + abs(expected.reindex(got.index)))).all():
            # (learner review 25: .compute().head(20) was told it "takes one partition (or the first rows)")
            raise Hint(
                f"{name} has the right value for each name it holds, but only {len(got)} of the {len(expected)} names: the "
                "result was cut after the aggregation (a .head(n), a filter). Keep the whole result, one value per name."
            )
        if any(part in (cell or "") for part in (".partitions[", "get_partition(", ".head(")):
            raise Hint(
                f"{name} was computed from part of the data: your answer cell takes one partition or a few (or the first rows), "
                "which hold only some rows of each name (maybe not every name). Aggregate the whole frame."
            )
    if len(got) != len(expected):
        raise Hint(f"{name} has {len(got)} rows; there are {len(expected)} names. Group by the name column.")
    if got.dtype.kind == "f" and got.dtype.itemsize < getattr(expected.dtype, "itemsize", 0):  # (learner review 30: 03-2)
        raise Hint(
            f"{name} is {got.dtype}: the values were converted to a smaller float type on the way, which rounds them "
            "(printed, they may still look equal). Keep the column's own dtype."
        )
    if list(got.index) != list(expected.index) or not (abs(got.values - expected.values) <= 1e-9 * (1 + abs(expected.values))).all():
        rounded = any(list(got.index) == list(expected.index) and (got.values == expected.round(d).values).all() for d in range(8))
        if rounded:
            digits = rounding_in(cell)  # what the cell asked for: the values alone cannot tell 0.99 from 1.0 rounded to 0-4 places
            some = f"rounded to {digits} decimal{'s' if digits != 1 else ''}" if digits is not None else "rounded"
            raise Hint(
                f"{name} is {some} (the values match the right ones to a few digits only): a "
                "rounded result is not accepted. Store the values the aggregation gives, as they are."
            )
        smaller = got.dtype.kind == "f" and got.dtype.itemsize < getattr(expected.dtype, "itemsize", 0)
        if list(got.index) == list(expected.index) and (smaller or (abs(got.values - expected.values) <= 1e-6 * (1 + abs(expected.values))).all()):
            raise Hint(
                f"{name} matches to a few digits only ({got.dtype}): the values were converted to a smaller float type "
                "on the way, which rounds them. Keep the column's own dtype."
            )
        if list(got.index) != list(expected.index) and sorted(got.values.tolist()) == sorted(expected.values.tolist()):
            raise Hint(  # (learner review 38: .index.str.lower() after the max was told to check the column and aggregation)
                f"{name} holds the right values, but not under the names as the data has them: the index was changed after "
                "the aggregation (renamed, reordered, re-labelled). Keep the index the groupby gives."
            )
        rebound = rebound_with_other_values(cell, name)
        if rebound is not None:  # (learner reviews 39-41: .clip/.fillna after the aggregation was told to check the column)
            raise Hint(
                f"{name} holds other values than the aggregation gave: your answer cell changes them after making them "
                f"(`{rebound}`). Keep the values the aggregation gives, as they are."
            )
        raise Hint(wrong)
    unchanged = rebound_with_other_values(cell, name)
    arithmetic = {"add", "sub", "mul", "div", "truediv", "floordiv", "mod", "pow", "radd", "rsub", "rmul", "rdiv", "rtruediv"}
    if unchanged is not None and any(f".{m}(" in unchanged for m in VALUE_CHANGES - arithmetic):
        # (learner review 42: a clip above every value changes nothing here, and is no answer; `* 0 + ...`: zeroed.py says it)
        raise Hint(
            f"the values are right here, but your answer cell changes them after making them (`{unchanged}`): that this "
            "changes nothing holds only for this data. Keep the values the aggregation gives, as they are."
        )


def reduces(run: dict[str, Any]) -> bool:
    """True for a submission that reduced on the workers (a tree reduction, a groupby aggregation), not just read data."""
    return any(p.endswith("-tree") or "aggregat" in p or p.startswith(("chunk", "groupby", "mean_chunk")) for p in run["prefixes"])


def _reductions(run: dict[str, Any]) -> int:
    """How many separate tree reductions a submission made (each its own task name, whatever its levels)."""
    names = set()
    for key in run["keys"]:
        try:
            name = ast.literal_eval(key)[0] if key.startswith("(") else key
        except (ValueError, SyntaxError, IndexError, TypeError):
            name = key
        if str(key_split(name)).endswith("-tree"):
            names.add(name)
    return len(names)


def grouped_on_cluster(found: Replay, data: Any, data_name: str, name: str, asked: str) -> list[dict[str, Any]]:
    """The runs of the answer cell that reduced on the workers; a :class:`Hint` for none, or a loop of many.
    ``asked``: what the question asks for, in words ("the mean of x per name")."""
    gathered = _gathers(found.cell, name, {data_name, "ddf", "ddf_fast", "raw"})
    if gathered:
        raise Hint(
            f"your answer cell brings every row of {gathered} to this notebook (a .compute() of it, or a .head() of every "
            f"partition, on the way to {name} or in a function the cell defines): "
            "the values then come from pandas here, on one core, whatever else the cell computes on the workers. "
            f"Where to look: let one Dask groupby aggregation make {name} on the workers, and bring back only its result."
        )
    reducing = [r for r in found.runs_for(name) if reduces(r)]
    prefixes = {p for r in found.runs_for(name) for p in r["prefixes"]}
    recipe = {key_split(k) for c in (data, data.optimize()) for k in dict(c.__dask_graph__())} | {key_split(f.key) for f in futures_of(data)}
    own = prefixes - recipe - {"getitem", "to_string_dtype", *MOVES}
    shuffled = any("shuffle" in p for p in prefixes)
    if reducing and shuffled and any(p.startswith("set_partitions") or "sort" in p for p in prefixes):
        raise Hint(
            f"the workers made {name}, but your answer cell first sorted every row of {data_name} (a full shuffle: all the "
            "data moves between the workers) to read the answer off the sorted order. Where to look: a groupby "
            "aggregation reduces each partition first and combines only the small partial results; no sort is needed."
        )
    if not reducing and shuffled and any(f"{call}(" in found.cell for call in (".apply", "map_partitions")):  # a function ran there
        raise Hint(
            f"the workers made {name}, but by moving every row between them (a shuffle), so that each partition (or a Python "
            "function) sees whole groups. Where to look: a groupby aggregation reduces each partition first and combines "
            "only the small partial results: use the aggregation itself."
        )
    if not reducing and "median" in found.cell:
        raise Hint(
            f"{name} holds medians, computed on the workers (a median needs all the rows of a group together, so they "
            f"moved between the workers): the question asks for {asked}. Check the aggregation."
        )
    mapped = any(call in found.cell for call in ("map_partitions(", ".apply(", "to_delayed(", "delayed("))  # a function of theirs ran
    if not reducing and own and mapped and not shuffled:
        raise Hint(
            f"the workers ran your own function on each partition of {data_name}, and only its partial results, one per "
            "partition, came back: combining them across partitions was left to this notebook (or not done at all). "
            "Where to look: a Dask groupby aggregation reduces each partition AND combines the partial results on the "
            "workers, in one computation."
        )
    if not reducing and shuffled and any("drop_duplicates" in p or "drop-duplicates" in p for p in prefixes):  # one row kept per group
        raise Hint(
            f"the workers made {name}, but by sorting every row of {data_name} (a full shuffle: all the data moves between "
            "the workers) and keeping one row per group. Where to look: a groupby aggregation reduces each partition "
            "first and combines only the small partial results; no sort is needed."
        )
    if not reducing:
        raise Hint(
            f"{name} was computed in this notebook: your answer cell brought {data_name}'s rows here (or ran nothing on "
            "the cluster), and pandas grouped them on one core. Let the workers group and reduce; bring back only the "
            "small result."
        )
    many = max(_reductions(r) for r in reducing)
    if many >= 3:
        raise Hint(
            f"the workers made {name} as {many} separate reductions of {data_name} in your answer cell's computations (one "
            f"per group: a filter on the name, then the aggregation, each going through {data_name}'s rows again). Where "
            "to look: a groupby aggregation goes through the rows once and reduces every group at the same time."
        )
    if len(reducing) >= 3:
        raise Hint(
            f"your answer cell ran {len(reducing)} separate computations on {data_name}, each answering a piece: one "
            "Dask groupby answers the whole question in a single computation."
        )
    return reducing


def _gathers(cell: str, name: str, frames: set[str]) -> str | None:
    """The frame (of ``frames``) that the answer cell computes whole (``ddf.compute()``,
    ``ddf[["name", "y"]].compute()``, ``ddf.head(len(ddf), npartitions=-1)``): every row comes to the notebook; None
    when none does."""
    tree = _parse(cell)
    if tree is None:
        return None
    # Anywhere in the cell, not only in the statements making name: inside a helper the cell defines (``def keep(r):
    # return raw.compute()...``, learner review 15) the gather would hide from them.
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        every = node.func.attr == "head" and any(k.arg == "npartitions" and ast.unparse(k.value) == "-1" for k in node.keywords)
        if node.func.attr != "compute" and not every:  # (head of every partition: all rows)
            continue
        base = node.func.value
        while isinstance(base, ast.Subscript) and not isinstance(base.slice, ast.Compare):  # a column selection
            base = base.value
        if isinstance(base, ast.Name) and base.id in frames:
            return base.id
    return None


def _numbers_as_text(got: Any, expected: Any) -> bool:
    """True when ``got`` holds ``expected``'s numbers written as text (``.astype(str)`` after the aggregation).

    >>> import pandas as pd
    >>> _numbers_as_text(pd.Series([0.5, 1.25]).astype(str), pd.Series([0.5, 1.25]))
    True
    >>> _numbers_as_text(pd.Series(["a", "b"]), pd.Series([0.5, 1.25]))
    False
    """
    try:
        values = [float(v) for v in got.tolist()]
        wanted = [float(v) for v in expected.tolist()]
    except (TypeError, ValueError):
        return False
    return len(values) == len(wanted) and all(abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(values, wanted, strict=True))
