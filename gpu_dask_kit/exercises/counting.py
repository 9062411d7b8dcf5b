"""07-1's evidence: the answer cell's computation read the processed Parquet with dask.dataframe and counted on the workers."""

from __future__ import annotations

import ast
import os
from typing import Any

from dask.utils import key_split

from .evidence import MOVES, all_runs, client_of
from .judging import from_cell, streak
from .model import Hint
from .replay import _parse, nodes_making
from .zeroed import require_contributes

__all__ = ["counted_on_cluster", "COUNTING"]

#: Task-prefix words of a count per group on the cluster (groupby size/count, value_counts' shuffle).
COUNTING = ("size", "count", "value_counts", "value-counts", "valuecounts", "shuffle")  # not "value": .values is no count
OTHER_REDUCTIONS = ("mean", "var", "std", "sum")  # a mean also counts (count-tree): its own prefixes tell it apart


def _counted_in_the_notebook(cell: str) -> None:
    """A :class:`Hint` when the answer cell counts in this notebook's process: ``head(..., npartitions=...)`` (pandas
    from there on) or ``compute(scheduler=...)`` (a local scheduler). Learner review 29: these were told "combined here
    by hand" and "did not read the processed Parquet with dask.dataframe"."""
    tree = _parse(cell)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)] if tree is not None else []
    for node in calls:
        chosen = next((k.value for k in node.keywords if k.arg == "scheduler"), None)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else node.func
        if method == "head" and any(k.arg == "npartitions" for k in node.keywords) and _counts_before(receiver):
            raise Hint(  # (learner review 37: value_counts().head(26, npartitions=-1) was told the count ran here)
                f"your answer cell cuts the counts with {ast.unparse(node.func)}(...): the workers counted, but a head keeps "
                "at most the number of rows written in it, so the answer is whole only while there are no more codes than "
                "that. Bring back the whole count."
            )
        if method == "head" and any(k.arg == "npartitions" for k in node.keywords):  # (learner review 29)
            raise Hint(
                "your answer cell calls head(..., npartitions=...), which brings those rows into this notebook as a pandas "
                "frame: everything after it (the count) runs here, on one core, not on the workers. Count with the Dask "
                "frame itself and bring back only the counts."
            )
        if chosen is not None:
            raise Hint(
                f"your answer cell computes with scheduler={ast.unparse(chosen)}: a local scheduler, which reads and counts "
                "in this notebook's own process, not on the cluster's workers. Leave scheduler= out: with the session's "
                "client, compute() runs on the cluster."
            )


def _counts_before(receiver: ast.AST) -> bool:
    """True when the expression a ``.head(...)`` is called on already counts (value_counts, size, count)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("value_counts", "size", "count") for n in ast.walk(receiver))


def counted_on_cluster(ns: dict[str, Any]) -> None:
    """A :class:`Hint` unless the answer cell's computation read the Parquet AND counted there, in one go.

    The answer cell is run again (``from_cell``); outside IPython, the latest computation on the cluster is read."""
    found = from_cell(ns, ("rows_per_name",), values=("rows_per_name",))
    if found is not None:
        require_contributes(found.cell, "rows_per_name", ns)  # a pandas count + 0 * the Dask count
        _counted_in_the_notebook(found.cell)
        _pandas_read(found.cell)
        _sent_back(found.cell)
        _read_back(found.cell, list(found.reads["rows_per_name"].values()), ns)
    client = client_of(ns)
    # made_earlier: counts persisted in one statement and brought here in the next; the replay's persist finds them held
    # (learner review 23)
    runs = found.runs_for("rows_per_name", made_earlier=True) if found is not None else all_runs(client) if client is not None else []
    # From the last run that read the Parquet on: a persist reads and counts, the compute after it only brings the counts
    # here (learner review 22: `.persist().compute()` was told it did not read with dask.dataframe).
    reading = [i for i, r in enumerate(runs) if any(p.startswith("read_parquet") for p in r["prefixes"])]
    last = set().union(*(r["prefixes"] for r in runs[reading[-1] :])) if reading else runs[-1]["prefixes"] if runs else set()
    if not any(p.startswith("read_parquet") for p in last):
        raise Hint(
            "your answer's computation on the cluster did not read the processed Parquet with dask.dataframe: rows_per_name "
            "was counted some other way (pandas here, a task of your own that reads the files, or data read earlier). "
            "Read it with dask.dataframe; the workers count."
        )
    single = [r for r in runs if any(key_split(k) == "read_parquet" and not str(k).startswith("(") for k in r["keys"])]
    if len(single) > 1:
        raise Hint(
            f"the Parquet was read in {len(single)} separate computations, one task each (pandas' read_parquet in delayed "
            "calls, each computed on its own), and the pieces were put together and counted here in this notebook, on one "
            "core. Read the folder with dask.dataframe: the workers read and count every file in one computation."
        )
    one_task = [k for r in runs[-1:] for k in r["keys"] if key_split(k) == "read_parquet" and not k.startswith("(")]
    if one_task:
        raise Hint(
            "the Parquet was read by ONE task (pandas' read_parquet in a delayed or submitted call): one worker read every "
            "file and counted alone. Read it with dask.dataframe, so that each worker reads and counts its own files."
        )
    if streak(runs) >= 3:
        raise Hint("the data was counted in many separate computations, one after another: one groupby answers it in one computation.")
    counted = any(word in p for p in last for word in COUNTING) and not any(p.startswith(OTHER_REDUCTIONS) for p in last)
    # A groupby reduction whose result is the right count (the judge compared the values first) counted per code, however
    # it is spelled: a sum of ones, an aggregation's "count" (learner review 15: told "to_delayed ... by hand").
    counted = counted or ("eq" not in last and any(p.endswith("-tree") or "aggregation" in p for p in last))
    if not counted and any(p.endswith("-values") or p.startswith(("values", "to_dask_array")) for p in last):
        raise Hint(
            "your answer cell brings the column to this notebook as an array (.values, .to_dask_array()) and counts it "
            "here, on one core: every row comes back. Let the workers count per code (a groupby, or value_counts); bring "
            "back only the counts."
        )
    if not counted and "eq" in last and any(p.startswith("sum") for p in last):
        raise Hint(
            "the workers counted, but one code at a time: a mask over all rows and its sum for every code. A groupby "
            "(or value_counts) counts every code in one pass over the rows: use it."
        )
    own = {p for p in last if not p.startswith(("read_parquet", *MOVES))}
    if not counted and own:
        raise Hint(
            "the workers ran your own functions on the partitions (map_partitions, to_delayed or delayed), and the partial results "
            "were combined here by hand: Dask cannot see that they count. A groupby (or value_counts) on the frame counts "
            "on the workers AND combines the partial counts there."
        )
    if not counted:
        raise Hint(
            "your answer's computation on the cluster did not count rows: the processed data came back to this notebook (or "
            "was read here) and was counted here, on one core. Let the workers count per code; bring back only the counts."
        )


def paths_of(value: Any) -> list[str]:
    """The paths ``value`` stands for: itself (a path string), or every path a Dask DataFrame's expression reads.

    >>> paths_of("/data/x"), paths_of(3)
    (['/data/x'], [])
    """
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    expr: Any = getattr(value, "expr", None)
    found: list[str] = []
    for node in expr.walk() if hasattr(expr, "walk") else ():
        for operand in getattr(node, "operands", ()):
            items = operand if isinstance(operand, (list, tuple)) else [operand]
            found += [os.fspath(i) for i in items if isinstance(i, (str, os.PathLike))]
    return found


def _under(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder + os.sep)


def _read_back(cell: str, reads: list[Any], ns: dict[str, Any]) -> None:
    """A :class:`Hint` unless the statements making rows_per_name read the processed Parquet (``PROCESSED``, a path in
    it, a frame read from it, or its parent folder joined with its name in the cell)."""
    processed, raw = ns.get("PROCESSED"), ns.get("RAW")
    if not isinstance(processed, str):
        return  # not notebook 07's namespace: nothing to compare with
    paths = [p for value in reads for p in paths_of(value) if os.path.isabs(p)]
    literals = {n.value for n in ast.walk(ast.parse(cell)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    paths += [p for p in literals if os.path.isabs(p)]  # dd.read_parquet("/tmp/.../processed-2-0"): a path typed in
    if any(_under(p, processed) for p in paths):
        return
    if os.path.basename(processed) in literals and any(_under(processed, p) for p in paths):
        return  # os.path.join(WORKDIR, "processed")
    if isinstance(raw, str) and any(_under(p, raw) for p in paths):
        raise Hint(
            "rows_per_name was counted from the raw input (the Parquet in RAW), with its names turned into codes again in "
            "your cell: the counts match, but the exercise is reading back what the pipeline wrote. Read the processed "
            "Parquet (the output of etl(...)) with dask.dataframe and count there."
        )
    if paths:
        raise Hint(
            "your answer cell read other files than the processed Parquet (PROCESSED, the output of the etl(...) cell "
            "above): another run's output, or another folder. Read PROCESSED back with dask.dataframe and count there."
        )
    raise Hint(
        "your answer cell did not read the processed Parquet back: rows_per_name was counted from data already in this "
        "notebook (a frame made earlier, or the raw input). Read the Parquet the pipeline wrote with dask.dataframe and count there."
    )


def _pandas_read(cell: str) -> None:
    """A :class:`Hint` when the statements making rows_per_name read the Parquet with pandas (``pd.read_parquet``): the
    rows then come to this notebook and pandas counts them here, whatever Dask computes beside it (learner review 11:
    a pandas count returned from an ``if`` after a Dask compute was "Correct")."""
    tree = _parse(cell)
    if tree is None:
        return
    in_task = {id(n) for lam in ast.walk(tree) if isinstance(lam, ast.Lambda) for n in ast.walk(lam.body)}
    for node in nodes_making(tree, "rows_per_name"):
        func = node.func if isinstance(node, ast.Call) else None
        module = getattr(func.value, "id", None) if isinstance(func, ast.Attribute) and func.attr == "read_parquet" else None
        if module in ("pd", "pandas", "cudf") and id(node) in in_task:  # (learner review 25: submit(lambda p: pd.read_parquet(p)...))
            raise Hint(
                f"your answer cell reads the Parquet with {module}.read_parquet inside one function it hands to the cluster: "
                "ONE task, on one worker, reads every file and counts alone, while the other workers wait. Read it with "
                "dask.dataframe, so that each worker reads and counts its own files."
            )
        if module in ("pd", "pandas", "cudf"):
            raise Hint(
                f"your answer cell reads the Parquet with {module}.read_parquet on the way to rows_per_name: every row "
                "comes to this notebook and is counted here, whatever else the cell computes on the workers. Read and "
                "count with dask.dataframe, so that the workers count."
            )


def _sent_back(cell: str) -> None:
    """A :class:`Hint` when the answer cell brings rows here (``.compute()``) and hands them back to Dask
    (``dd.from_pandas(...)``): the workers then count a copy that went through this notebook (learner review 25: once
    "Correct", depending on timing)."""
    tree = _parse(cell)
    if tree is None:
        return
    computed = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and "compute" in ast.unparse(n.value) for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in ("from_pandas", "from_dict", "from_array") or not isinstance(node, ast.Call):
            continue
        given = " ".join(ast.unparse(a) for a in node.args)
        if ".compute()" in given or any(n.id in computed for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)):
            raise Hint(
                f"your answer cell brings the rows to this notebook (.compute()) and hands them back to Dask ({name}): "
                "every row travels here and back, and the workers count a copy. Read the processed Parquet with "
                "dask.dataframe and count there, without computing the rows first."
            )
