"""Exercise 02-1's evidence: the rank-10 error, and whether the workers computed it from x in one computation."""

from __future__ import annotations

import ast
from typing import Any

from .evidence import client_of, latest_run
from .model import Hint
from .replay import Replay, answer_cell

__all__ = ["rank_error", "ratio_in_one_run", "ran_on_cluster", "cell_tree"]


def rank_error(s: Any, k: int) -> float:
    import numpy as np

    return float(np.sqrt((s[k:] ** 2).sum() / (s**2).sum()))


def ratio_in_one_run(found: Replay, ns: dict[str, Any] | None = None) -> str | None:
    """A :class:`Hint` unless the answer cell, run again, computed both norms on the cluster, in one computation or in
    two (one per norm: then a note to add to "Correct", learner review 24: the prompt does not ask for one).
    ``ns``: the notebook's namespace, to follow the helper functions the cell calls to the names they read."""
    from ..notebook.cellreads import names_read

    # A sum of squares, or a mean of them (the same ratio: the counts cancel; learner review 15 had it refused).
    summing = [r for r in found.working("rank10_error") if any("sum" in p or p.startswith("mean_") for p in r["prefixes"])]
    if not summing and found.working("rank10_error") and "ord" in found.cell:
        raise Hint(
            "the workers computed a norm, but not the one the question means: with ord=2, da.linalg.norm of a matrix is "
            "its largest singular value. The relative error here uses the default matrix norm (the square root of the "
            "sum of all squared entries)."
        )
    read = names_read(found.cell, ns or {})
    if "x" not in found.reads.get("rank10_error", {}) and "x" not in read and not _built_on_x(read, ns or {}):
        raise Hint(  # from the singular values alone, here or on the workers: the same shortcut, the same hint
            "the error was worked out from the singular values alone (a formula on s, from values already here or on "
            "the workers), never from x. The exercise "
            "measures the approximation itself: build approx from u, s and v, and let the workers compute the ratio of "
            "the two norms, norm(x - approx) and norm(x)."
        )
    working = found.working("rank10_error")
    if not summing and working and any(p.startswith("max") or p.startswith("amax") for r in working for p in r["prefixes"]):
        raise Hint(  # (learner review 36: max(abs(x - approx)) / max(abs(x)) was told nothing ran on the cluster)
            "the workers computed the largest absolute entries (a max of abs), not the norm the question means: the "
            "relative error divides the square roots of the sums of squared entries, norm(x - approx) and norm(x) "
            "(da.linalg.norm's default for a matrix)."
        )
    if not summing:
        raise Hint(
            "the error was not computed by Dask's blockwise work on the workers: your answer cell brought x (or the "
            "SVD's factors) here whole, or handed the whole matrix to one task (a delayed NumPy function), and NumPy "
            "did the work on one core; or nothing ran on the cluster. Build the ratio as Dask expressions from x, u, s "
            "and v, and compute only the result."
        )
    whole = [r for r in summing if any(p.startswith("truediv") for p in r["prefixes"])]
    if len(summing) > 1 and len(whole) == len(summing):  # (learner review 55: the errors of ranks 5, 10 and 20, each one ratio)
        return (
            f"(Your cell computed {len(summing)} errors, each a whole ratio in one pass over x (other ranks too?): the answer "
            "is the rank-10 one, and each extra error costs another pass over x.)"
        )
    if len(summing) > 2:
        raise Hint(
            f"your answer cell computed the norms in {len(summing)} separate computations (each reads x again): hand "
            "them to Dask at once (one expression, or one call with them all), so one pass over x shares the work."
        )
    if len(summing) == 2:
        return "(Your cell computed the two norms one after the other, each reading x: in one expression, or one dask.compute of both, they share one pass.)"
    return None


def _built_on_x(read: set[str], ns: dict[str, Any]) -> bool:
    """True when a lazy Dask collection the answer cell reads was built from x in an earlier cell (``lazy_err =
    norm(x - approx) / norm(x)``, then ``float(lazy_err.compute())`` in the answer cell: learner review 56)."""
    from dask.base import is_dask_collection

    x_name = getattr(ns.get("x"), "name", None)
    for name in read - {"x"}:
        value = ns.get(name)
        if x_name is None or value is None or not is_dask_collection(value):
            continue
        graph = value.__dask_graph__()
        layers = getattr(graph, "layers", None)
        if (layers is not None and x_name in layers) or any(isinstance(k, tuple) and k and k[0] == x_name for k in graph):
            return True
    return False


def ran_on_cluster(ns: dict[str, Any]) -> None:
    """A :class:`Hint` unless the latest computation on the cluster was the whole ratio (both norms, divided)."""
    client = client_of(ns, ns["x"])
    run = latest_run(client) if client is not None else None
    prefixes = run["prefixes"] if run else set()
    if not any(p.startswith(("sum", "mean_")) for p in prefixes):
        raise Hint(
            "the error was not computed by the workers: x (or the SVD's factors) came back here whole and NumPy did the "
            "work on one core, or nothing ran on the cluster. Build the ratio as Dask expressions from x, u, s and v, "
            "and compute only the one number."
        )
    if not any(p.startswith("truediv") for p in prefixes):
        raise Hint(
            "the two norms were computed in separate steps (the latest computation is not the whole ratio): build the "
            "ratio as one Dask expression, so one computation shares the work, then compute it once."
        )


def cell_tree(found: Replay | None, ns: dict[str, Any]) -> ast.Module:
    """The answer cell of rank10_error as a syntax tree (empty where there is none)."""
    cell = found.cell if found is not None else answer_cell(ns, "rank10_error")
    try:
        return ast.parse(cell or "")
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])
