"""07-1's evidence: the answer cell's computation read the processed Parquet with dask.dataframe and counted on the workers."""

from __future__ import annotations

from typing import Any

from dask.utils import key_split

from .evidence import MOVES, all_runs, client_of
from .judging import from_cell, streak
from .model import Hint

__all__ = ["counted_on_cluster", "COUNTING"]

#: Task-prefix words of a count per group on the cluster (groupby size/count, value_counts' shuffle).
COUNTING = ("size", "count", "value", "shuffle")
OTHER_REDUCTIONS = ("mean", "var", "std", "sum")  # a mean also counts (count-tree): its own prefixes tell it apart


def counted_on_cluster(ns: dict[str, Any]) -> None:
    """A :class:`Hint` unless the answer cell's computation read the Parquet AND counted there, in one go.

    The answer cell is run again (``from_cell``); outside IPython, the latest computation on the cluster is read."""
    found = from_cell(ns, ("rows_per_name",), values=("rows_per_name",))
    client = client_of(ns)
    runs = found.runs_for("rows_per_name") if found is not None else all_runs(client) if client is not None else []
    last = runs[-1]["prefixes"] if runs else set()
    if not any(p.startswith("read_parquet") for p in last):
        raise Hint(
            "your answer's computation on the cluster did not read the processed Parquet: rows_per_name was counted some "
            "other way (pandas in this notebook, or data read earlier). Read it with dask.dataframe; the workers count."
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
    if not counted and "eq" in last and any(p.startswith("sum") for p in last):
        raise Hint(
            "the workers counted, but one code at a time: a mask over all rows and its sum for every code. A groupby "
            "(or value_counts) counts every code in one pass over the rows: use it."
        )
    own = {p for p in last if not p.startswith(("read_parquet", *MOVES))}
    if not counted and own:
        raise Hint(
            "the workers ran your own functions on the partitions (through to_delayed or delayed), and the partial results "
            "were combined here by hand: Dask cannot see that they count. A groupby (or value_counts) on the frame counts "
            "on the workers AND combines the partial counts there."
        )
    if not counted:
        raise Hint(
            "your answer's computation on the cluster did not count rows: the processed data came back to this notebook (or "
            "was read here) and was counted here, on one core. Let the workers count per code; bring back only the counts."
        )
