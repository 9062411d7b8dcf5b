"""Exercises of notebooks 06-07: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import ast
import re
from typing import Any

import dask
import numpy as np
from dask.core import flatten
from distributed import futures_of

from .. import scheduler_view
from .counting import counted_on_cluster
from .elsewhere import reads_other_data, require_no_notebook_rows, unchanged_when
from .evidence import persisted
from .hidden import require_not_hidden
from .judging import describe, fresh, from_cell, host, is_lazy, require_computed, require_persisted
from .lineage import made_from
from .model import Exercise, Hint
from .own_code import own_trees
from .replay import Replay, _assigned, _parse, answer_cell, rounding_calls, rounding_in, typed_in
from .speedup import extremes, reads_speed_ups, rounded_medians, sizes_read, uses_medians
from .typed import limits_read, numbers_read, size_not_computed
from .values import as_fraction, as_number, close
from .zeroed import require_contributes, require_no_chooser

# --- 06 · persist vs compute -------------------------------------------------------------------------


def _judge_06_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import numpy as np

    persisted, local = ans["col_sums_persisted"], ans["col_sums_local"]
    require_persisted(persisted, "col_sums_persisted", "Keep the values on the workers: ask Dask to compute them there and hold them.")
    if made_from(persisted, ns["x"]) is False:
        raise Hint(
            "col_sums_persisted was not computed from x on the workers: its data went through this notebook (x, or its "
            "sums, came here and were sent back to the cluster as a new array). Where to look: let the workers sum x "
            "and hold the result there; nothing needs to come to the notebook for that."
        )
    require_computed(local, "col_sums_local")
    if type(local).__module__.startswith("cupy"):
        raise Hint("col_sums_local is a CuPy array: its values are in GPU memory. Bring them to host memory (to_host) for a NumPy array.")
    if not isinstance(local, np.ndarray):
        raise Hint(f"col_sums_local should be a NumPy array (the values, here in the notebook); {describe(local)} is not.")
    n_cols = int(ns["N_COLS"])
    expected = host(ns["x"].sum(axis=0).compute())
    if local.shape != (n_cols,):
        if local.size == n_cols:  # (learner review 32: reshape(1, -1) was told to "sum over the rows")
            raise Hint(f"col_sums_local has shape {local.shape}: the {n_cols} sums are there, with an extra axis. Keep them 1-D, shape ({n_cols},).")
        if (
            local.ndim == 1 and 0 < local.size < n_cols and any(np.allclose(local, expected[i : i + local.size]) for i in range(n_cols - local.size + 1))
        ):  # (learner review 33: [:25] was told to "sum over the rows")
            raise Hint(f"col_sums_local holds {local.size} of the column sums, not all {n_cols} (a slice?): keep every column's sum.")
        raise Hint(f"col_sums_local has shape {local.shape}; there is one sum per column ({n_cols}): sum over the rows.")
    if not np.allclose(local, expected) and np.allclose(np.sort(local), np.sort(expected)):  # (learner review 33: .sort())
        raise Hint(
            "col_sums_local holds the column sums, but in another order (sorted or reordered after they came back): keep "
            "them in the order of x's columns, one sum per column."
        )
    if not np.allclose(local, expected):
        raise Hint("col_sums_local has one value per column, but not the column sums of x.")
    cell_06_1 = answer_cell(ns, "col_sums_local") or ""
    if not np.allclose(local, expected, rtol=1e-9, atol=0) and re.search(r"\.sum\([^)]*dtype\s*=", cell_06_1):
        raise Hint(  # (learner reviews 37-38: x.sum(axis=0, dtype="float32") was told the sums changed after they came back)
            f"col_sums_local holds {local.dtype} sums: your answer cell asks the sum for another dtype (dtype=...), so the "
            "workers added up in fewer digits than x's own values have. Sum in x's own dtype (leave dtype= out)."
        )
    if not np.allclose(local, expected, rtol=1e-9, atol=0):  # (learner review 25: .astype(int), .round(2) passed)
        raise Hint(
            "col_sums_local holds the column sums changed after they came back ("
            + ("rounded, or changed by arithmetic" if local.dtype == expected.dtype else f"rounded, or converted to {local.dtype}")
            + "): "
            "keep the values as the workers computed them."
        )
    rounding = rounding_calls(answer_cell(ns, "col_sums_local"), "col_sums_local")
    if rounding:  # (learner review 30: .round(6) changed them by less than the tolerance a GPU needs)
        called = rounding[0].func
        what = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "round")
        raise Hint(f"col_sums_local holds the column sums changed after they came back ({what}(...)): keep the values as the workers computed them.")
    if not np.allclose(host(persisted.compute()), expected):
        raise Hint("col_sums_persisted is persisted, but does not hold the column sums of x.")
    found = from_cell(ns, ("col_sums_local", "col_sums_persisted"), values=("col_sums_local",))
    if found is not None:
        require_contributes(found.cell, "col_sums_local", ns)  # x summed here + 0 * the persisted sums
        _read_from_memory(found, n_cols, {str(f.key) for f in futures_of(persisted)})
    cell = found.cell if found is not None else answer_cell(ns, "col_sums_local") or ""
    gpu = (
        ""
        if any(call in cell for call in ("to_host", ".get()", "asnumpy", ".to_numpy("))
        else (  # (learner review 33: np.asarray(col_sums_persisted) was told about a .compute() it did not call)
            " (On a GPU, the computed sums are a CuPy array, in GPU memory, which NumPy does not convert by itself: "
            "np.asarray(...) of it raises TypeError. to_host(...) makes the NumPy copy the exercise asks for.)"
        )
        if "asarray(" in cell or "np.array(" in cell
        else (" (On a GPU, .compute() gives a CuPy array here, in GPU memory: to_host(...) makes it the NumPy copy the exercise asks for.)")
    )
    return f"the {n_cols} sums are held on the workers, and a NumPy copy is in the notebook.{gpu}"


def _read_from_memory(found: Replay, n_cols: int, kept: set[str] | frozenset[str] = frozenset()) -> None:
    """A :class:`Hint` unless the statement making col_sums_local, run again, only fetched the sums held on the workers.
    ``kept``: the keys col_sums_persisted holds; a recipe with exactly those keys, fetched from the cluster, is read from
    the held sums (learner review 19: ``held = arr.persist(); return held, to_host(held.compute())`` in a helper, where
    the statement reads only the recipe ``col_sums``)."""
    # a sum over x, or a mean of it (times the row count: learner review 24, told "NumPy summed them here")
    summed = [r for r in found.made_by("col_sums_local") if any("sum" in p or p.startswith("mean") for p in r["prefixes"])]
    if len(summed) >= 3:
        raise Hint(
            f"your answer cell computed the sums in separate computations (one per column or block; the scheduler saw at least {len(summed)}): one "
            "Dask expression over x gives every column's sum in a single computation."
        )
    fetches = found.made_by("col_sums_local")
    if not summed and len(fetches) >= 3:
        raise Hint(
            f"col_sums_local was brought here in {len(fetches)} separate computations (a .compute() per value or piece): "
            "each is a round trip to the cluster. The persisted sums are one small array: one compute brings them all."
        )
    if summed:
        raise Hint(
            "col_sums_local was summed again: the check ran your answer cell again, and making col_sums_local ran "
            "tasks over x once more (a sum, or a mean) instead of fetching the sums already held on the workers. Bring "
            "back the persisted values themselves."
        )
    sums = {k: v for k, v in found.reads["col_sums_local"].items() if is_lazy(v) and getattr(v, "shape", None) == (n_cols,)}
    held = [v for v in sums.values() if persisted(v) is None or (fetches and {str(k) for k in flatten(v.__dask_keys__())} <= kept)]
    if sums and not held:  # read from a recipe of the sums, yet no summing ran on the cluster: a local scheduler ran it
        raise Hint(
            f"col_sums_local was added up in this notebook's threads, not on the workers: it was computed from "
            f"{', '.join(f'`{k}`' for k in sorted(sums))}, a recipe whose values no worker holds, and no summing task ran on "
            "the cluster (a compute with scheduler='threads' or 'sync' runs every task here, x's chunks included). Let the "
            "workers compute and hold the sums; bring back only those values."
        )
    if not held and re.search(r"\bx(\.persist\(\))?\.compute\(|to_host\(x\)|np\.asarray\(x\)", found.cell or ""):
        raise Hint(  # x's values themselves came here
            "col_sums_local was added up in this notebook: your answer cell brought x's values here (all of x, or block "
            "by block) and NumPy summed them on one core. Let the workers compute the sums; bring back only the small result."
        )
    if not held:  # neither summed on the cluster nor read from the (held) sums (learner review 40: a new persist of a sum)
        raise Hint(
            "col_sums_local was not brought back from the sums held on the workers: your answer cell either brought x's "
            "values here (all of x, or block by block) and summed them in this notebook, or summed x again (a new "
            "persist or compute of a sum over x) instead of fetching col_sums_persisted. Bring back the persisted values "
            "themselves."
        )


def _memory_in_use(cell: str | None, value: Any) -> None:
    """A :class:`Hint` when the answer divides by memory in use now (``session.memory()``), not by the limits: such a
    value moves from one run to the next, so the check would otherwise only say "not what your answer cell gives now"."""
    if cell is None or not re.search(r"\.memory\(\)", cell) or "memory_limit" in cell or as_fraction(value) == 0:
        return  # (session.memory(), not psutil.virtual_memory())
    tree = _parse(cell)
    divides = tree is not None and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and "memory(" in ast.unparse(n.right) for n in ast.walk(tree))
    if divides:
        raise Hint(
            "fraction divides by memory in use: session.memory() reports what the workers (and their processes) use at "
            "this moment, which moves as they work, not how much they may use. The question is about the workers' "
            "memory LIMITS, which the cluster was started with: the scheduler reports each worker's limit."
        )


def _judge_06_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import psutil

    value = ans["fraction"]
    require_computed(value, "fraction")
    _memory_in_use(answer_cell(ns, "fraction"), value)
    fresh(ns, ("fraction",))
    given = as_fraction(value)
    limits = [int(w["memory_limit"]) for w in scheduler_view.workers(ns["session"].client).values()]
    x = ns["x"]
    expected = x.nbytes / sum(limits)
    if given is None:
        raise Hint(f"fraction should be a number (a fraction) or a percent string; {describe(value)} is not.")
    if isinstance(value, str) and not value.strip().endswith("%") and close(given, expected, rel=0.01):  # (learner review 32)
        raise Hint(
            "fraction is a str holding a plain number: the question asks for a number (the fraction itself) or a "
            "percentage string ending in '%'. Keep the number as a number."
        )
    cell = answer_cell(ns, "fraction")
    if cell is not None and typed_in(cell, "fraction"):
        raise Hint("fraction is typed into the answer cell (a number written out): compute it from x and the workers' memory limits.")
    if given == 0 and cell is not None and "//" in cell:  # (learner review 44: x.nbytes // sum(limits) was told nothing is held)
        raise Hint(
            "fraction is 0: your answer cell divides with // (floor division), which rounds the share down to a whole "
            "number, and x takes less than all of the workers' memory, so that is 0. Divide with /."
        )
    if isinstance(value, str) and value.strip().endswith("%") and expected > 0:  # (learner review 53: f"{share:.1f}%" gave "0.0%")
        number = as_number(value.strip()[:-1])
        places = len(value.strip()[:-1].split(".")[1]) if "." in value else 0
        if number is not None and abs(number - expected) <= 0.5 * 10**-places and not close(given, expected, rel=0.05):
            rounded = " (and rounded to the format's digits)" if not close(number, expected, rel=1e-9) else ""
            raise Hint(  # (learner review 54: "and rounded" was said of an f-string without a format)
                f"that looks like the fraction written with a '%' sign{rounded}, which makes it a hundred times smaller: "
                "give the fraction alone, or the percentage (the fraction times 100) with its sign (the format `:.1%` "
                "multiplies by 100 and adds the sign for you)."
            )
    if given == 0 and cell is not None and "memory(" not in cell and rounding_in(cell) is None:  # bytes_held(x): nothing held
        raise Hint(
            "fraction is 0: what your answer cell measured counts none of x, because nothing of x is held on the workers "
            "now (x is a lazy recipe here, and a persisted copy is freed once its last reference is dropped). The "
            "question is about x's size once persisted, which a Dask array knows without computing anything."
        )
    if given == 0 and cell is not None and "memory(" in cell:
        raise Hint(
            "fraction is 0: session.memory() counts the task results the workers hold now, and they hold none of x now (x "
            "is a lazy recipe here, and a persisted copy is freed once its last reference is dropped). The question is "
            "about x's size once persisted, which does not depend on what is held at this moment."
        )
    require_not_hidden(cell, "fraction", given)
    limits_read(cell)
    own = own_trees(cell, ns, "06-2")  # the learner's own functions the cell calls: read once
    for function, code in own:
        limits_read(ast.unparse(code), f"your function `{function}` (which your answer cell calls)")
    numbers_read(cell, x.nbytes, limits, helpers=own)
    _item_size_typed(cell, x)
    size_not_computed(ns)
    one = _one_worker(cell) if close(given, expected, rel=1e-3) else None
    if one is not None:  # (learner review 38: memory.workers[0].managed_bytes / limits[0], max(... for w in memory.workers))
        raise Hint(
            f"your answer cell reads one worker's numbers ({one}): that worker's own share equals x's share of all the "
            "limits only while x's chunks happen to be spread evenly over workers with equal limits, as here. Divide x's "
            "size by the workers' memory limits added up."
        )
    if close(given, expected, rel=1e-3):  # session.memory()'s managed bytes also count small results still held
        return "x's share of the workers' memory limits together."
    shown = value if isinstance(value, str) else str(float(given))
    if cell is not None and _rounded_as_shown(shown, expected):
        return "x's share of the workers' memory limits together (computed, and rounded as shown)."
    digits = _shown_digits(shown, expected) if cell is not None else None
    # a string shows digits; round() keeps some; so does a format spec turned back into a number (learner review 31: .1g)
    rounds = isinstance(value, str) or rounding_in(cell) is not None or (cell is not None and re.search(r":[^{}:]*\.\d+[egf%]?\}", cell) is not None)
    if digits is not None and (rounds or not _typed_decimal_limit(given, expected)):
        raise Hint(
            f"fraction is computed, but rounded so far that {'no significant digit is' if not digits else 'only one significant digit is'} "
            "left, which says little about x's share. Keep at least two significant digits (or do not round)."
        )
    wrong = {
        "a percentage written as a plain number: add a '%' sign, or give the fraction": given / 100,
        "the memory limits divided by x, upside down": 1 / given if given else 0,
        "x's share of ONE worker's limit; the question asks for all workers together": given * limits[0] / sum(limits),
        "a count of elements, not bytes: take x's size in bytes": given * x.nbytes / x.size,
        "x's share of this machine's memory, not of the workers' limits": given * psutil.virtual_memory().total / sum(limits),
        "x's share of the spill threshold (the limits times the target fraction, where spilling starts): the question asks about the limits themselves": given
        * dask.config.get("distributed.worker.memory.target"),
        "sizes mixed between GB (10**9 bytes) and GiB (2**30 bytes): read both in bytes": given * 2**30 / 1e9,
        "sizes mixed between GiB (2**30 bytes) and GB (10**9 bytes): read both in bytes": given * 1e9 / 2**30,
        "x's size and the limits in different units (one in MiB, the other in GiB: a factor of 1024): read both in bytes": given / 1024,
        "x's size and the limits in different units (one in GiB, the other in MiB: a factor of 1024): read both in bytes": given * 1024,
    }
    if isinstance(value, str) and value.strip().endswith("%"):
        percent = (
            "the fraction written with a '%' sign, which makes it a hundred times smaller: give the fraction alone, or "
            "the percentage (the fraction times 100) with its sign"
        )
        wrong[percent] = given * 100
    for why, meant in wrong.items():
        if close(meant, expected, rel=1e-6):
            raise Hint(f"that looks like {why}.")
    if isinstance(value, str) and value.strip().endswith("%") and _shown_digits(value.strip().rstrip("%"), expected) is not None:
        raise Hint(f"that looks like {percent} (here rounded, too).")  # f"{fraction:.2f}%" (learner review 25)
    if not shown.strip().endswith("%") and _rounded_as_shown(shown, 100 * expected):  # "1.86", or round(100 * ..., 2)
        raise Hint("that looks like a percentage written as a plain number (rounded): add a '%' sign, or give the fraction.")
    raise Hint("that is not x's share of the limits: x's size in bytes, divided by the workers' memory limits added up (see scheduler_info).")


def _one_worker(cell: str | None) -> str | None:
    """The expression by which ``cell`` reads one worker's numbers: a fixed item of a per-worker list (``limits[0]``,
    ``memory.workers[0]``), or the largest/smallest of per-worker ratios (``max(a / b for w in ...)``); else None.

    >>> _one_worker("w0 = memory.workers[0]"), _one_worker("f = max(w.a / w.b for w in m.workers)"), _one_worker("f = x / limits[1]")
    ('memory.workers[0]', 'max(...) of per-worker ratios', 'limits[1]')
    >>> _one_worker("f = x.nbytes / sum(limits)") is None, _one_worker("f = x.nbytes / sum(w.host_memory_limit for w in memory.workers)") is None
    (True, True)
    """
    tree = _parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            base = node.value
            if (isinstance(base, ast.Name) and base.id == "limits") or (isinstance(base, ast.Attribute) and base.attr == "workers"):
                return ast.unparse(node)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("max", "min") and node.args:
            inner = node.args[0]
            if isinstance(inner, (ast.GeneratorExp, ast.ListComp)) and isinstance(inner.elt, ast.BinOp) and isinstance(inner.elt.op, ast.Div):
                return f"{node.func.id}(...) of per-worker ratios"  # type: ignore[attr-defined]
    return None


def _item_size_typed(cell: str | None, x: Any) -> None:
    """A :class:`Hint` when the answer cell works out x's bytes as shape times a typed item size (``N_ROWS * N_COLS * 8``)."""
    tree = ast.parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = (node.left, node.right)
            if any(isinstance(n, ast.Constant) and n.value == x.dtype.itemsize for n in sides) and not any(
                isinstance(n, ast.Attribute) and n.attr in ("itemsize", "nbytes") for side in sides for n in ast.walk(side)
            ):
                raise Hint(
                    f"your answer cell works out x's size by hand, with the size of one element typed in ({ast.unparse(node)}): "
                    "right only while x holds that dtype. Read the size in bytes from x itself."
                )


def _rounded_as_shown(text: str, expected: float) -> bool:
    """True when a computed "1.9%" or 0.0186 is ``expected`` rounded to the digits it shows (2 significant digits at least)."""
    digits = _shown_digits(text, expected)
    return digits is not None and digits >= 2


def _shown_digits(text: str, expected: float) -> int | None:
    """How many significant digits a "2%" or 0.02 shows when it is ``expected`` rounded to the digits it shows; None
    when it is not such a rounding."""
    body = text.strip().rstrip("%").strip()
    scale = 100 if text.strip().endswith("%") else 1
    digits = body.replace("-", "").replace(".", "").lstrip("0")
    decimals = len(body.split(".")[1]) if "." in body else 0
    given = as_number(body)
    if given is None or "e" in body.lower() or abs(given - expected * scale) > 0.5 * 10**-decimals + 1e-12:
        return None
    return len(digits.rstrip("0") if "." not in body else digits)


# --- 07 · multi-GPU ETL ------------------------------------------------------------------------------


def _counts_by_code(ns: dict[str, Any]) -> dict[int, int] | None:
    """The count of rows per code of the processed Parquet (``PROCESSED``); None without it. Read with pandas here, not
    on the cluster: a count on the cluster would sit in the scheduler's record beside the answer's own, and could be
    taken for it (a reference answer with value_counts was told it "counted in many separate computations")."""
    if not isinstance(ns.get("PROCESSED"), str):
        return None
    import pandas as pd

    try:
        counts = pd.read_parquet(ns["PROCESSED"], columns=["name"])["name"].value_counts()
        return {int(code): int(n) for code, n in counts.items()}
    except Exception:
        return None


def _sums_a_column(cell: str | None) -> str | None:
    """ "label.sum()": a ``.sum()`` in the statement making rows_per_name (a column's values added up); None otherwise."""
    tree = _parse(cell) if cell is not None else None
    node = _assigned(tree, "rows_per_name") if tree is not None else None
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)) if node is not None else ():
        if isinstance(call.func, ast.Attribute) and call.func.attr == "sum":
            target = call.func.value
            column = target.attr if isinstance(target, ast.Attribute) else None
            return f"{column}.sum()" if column else ".sum()"
    return None


def _fewer_rows_per_code(got: Any, truth: dict[int, int]) -> bool:
    """True when ``got`` counts whole rows per code (integers, at least one each) but no more than ``truth`` for every code:
    the rows of some partitions (or some filtered out) were never counted."""
    try:
        pairs = [(truth[int(code)], n) for code, n in host(got).items()]
    except (KeyError, TypeError, ValueError):
        return False
    return all(float(n).is_integer() and 1 <= n <= want for want, n in pairs)


def _true_counts(ns: dict[str, Any]) -> list[int] | None:
    """The counts per code of the processed Parquet (``PROCESSED``), sorted, without their codes; None without it."""
    by_code = _counts_by_code(ns)
    return sorted(by_code.values()) if by_code is not None else None


def _judge_07_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["rows_per_name"]
    require_computed(got, "rows_per_name")
    require_no_notebook_rows(ns, "rows_per_name", "processed")
    if hasattr(got, "columns"):
        raise Hint(
            "rows_per_name is a DataFrame (a count per column, or codes and counts as columns after reset_index): the "
            "question wants a Series, one count per code, indexed by the codes."
        )
    if not (hasattr(got, "index") and hasattr(got, "sum")):
        raise Hint(f"rows_per_name should be a Series with one count per name code; {describe(got)} is not.")
    distinct = _distinct_call(answer_cell(ns, "rows_per_name"))
    if distinct is not None:  # (learner review 29: same numbers here only because no x repeats and no row is doubled)
        raise Hint(
            f"your answer cell calls {distinct}, which counts distinct values (or drops repeated rows): a count of rows "
            "per name counts every row, repeated values and rows included. Count the rows themselves."
        )
    got = host(got)
    floats = getattr(got, "dtype", None) is not None and got.dtype.kind == "f"
    shares = floats and len(got) > 0 and bool((got.abs() <= 1).all())  # (value_counts(normalize=True): judged below)
    if getattr(got, "dtype", None) is not None and got.dtype.kind not in "iufb":  # (learner review 50: .astype(str))
        raise Hint(
            f"rows_per_name holds {got.dtype} values, not a number type (text, categories, objects): a count of rows is a "
            "whole number. Keep the integers the count gives, without converting them."
        )
    small = got.dtype.kind in "iu" and got.dtype.itemsize < 8  # (learner review 52: astype("int8") wraps the counts around)
    truth = _true_counts(ns) if small else None
    if small and truth and max(truth) > np.iinfo(got.dtype).max:
        raise Hint(
            f"rows_per_name holds {got.dtype} numbers, too small a type for these counts: a count above its largest value "
            f"({np.iinfo(got.dtype).max}) wraps around. Keep the integers the count gives (int64), without converting them."
        )
    if floats and not shares:  # (learner review 26: shares times N, astype(float))
        raise Hint(
            f"rows_per_name holds {got.dtype} numbers: a count of rows is a whole number (an integer). Count the rows "
            "themselves, and keep the integers the count gives."
        )
    if not got.index.is_unique:
        raise Hint(
            "rows_per_name has some codes more than once: each partition was counted on its own and the partial counts "
            "were never combined. A Dask groupby (or value_counts) on the whole frame does both steps."
        )
    codes = set(ns["lookups"]["name"].values())
    counted = getattr(got.index, "name", None)
    if not set(got.index) <= codes and isinstance(counted, str) and counted != "name":  # (learner review 33: .id.value_counts())
        raise Hint(f"rows_per_name counts the values of the column {counted!r}, not the name codes: count the rows per value of the name column.")
    if not set(got.index) <= codes:
        if set(got.index) <= set(ns["lookups"]["name"]):  # (learner review 31: codes turned back into names)
            raise Hint(
                "the index holds the names as text, not the codes the processed data stores (the raw input counted, or the "
                "codes turned back into names): keep each count under its code."
            )
        if set(got.index) > codes:  # (learner review 31: reindex(range(0, 27), fill_value=0))
            raise Hint(
                "rows_per_name holds every name code and more (a reindex over a range adds codes that have no rows): keep only the codes the count gives."
            )
        if {str(c) for c in codes} >= {str(i) for i in got.index}:
            raise Hint(
                "the index holds the name codes as text (str), not as the integer codes the processed data stores: keep "
                "the codes as the count gives them, without turning them into text (before or after counting)."
            )
        values = sorted(got.tolist()) if hasattr(got, "tolist") else []
        truth = _true_counts(ns)
        if truth is not None and values == truth:  # (learner review 25: reset_index(drop=True), an index renamed)
            raise Hint(
                "the counts are right, but the index is no longer the name codes (dropped, renumbered or renamed after "
                "counting): each count must stay labelled with its code. Keep the index the count gives."
            )
        raise Hint("the index is not the name codes: the rows were grouped by another column. Group by the column of name codes.")
    if len(got) < len(codes):
        raise Hint(
            f"rows_per_name has only {len(got)} of the {len(codes)} name codes: it is a part of the whole result (a .head(n) "
            "keeps n rows at most, and a Dask .head(n) reads only the result's first partition; a filter drops codes). "
            "Compute the whole count per code."
        )
    if len(got) != len(codes):
        raise Hint(f"rows_per_name has {len(got)} entries; there are {len(codes)} name codes. Group by the name column.")
    total = int(got.sum())
    if total != int(ns["N_INPUT_ROWS"]) and total in _partition_rows(ns["PROCESSED"]):
        raise Hint("those are the counts of ONE partition of the data: count every row of the processed frame, not a part of it.")
    summed = _sums_a_column(answer_cell(ns, "rows_per_name"))
    if summed is not None and total != int(ns["N_INPUT_ROWS"]):  # (learner review 34: .label.sum() was told rows were left out)
        raise Hint(
            f"your answer cell adds up a column's values ({summed}): a count of rows per name counts the rows themselves, "
            "whatever their values (size(), count(), value_counts())."
        )
    if shares and abs(float(got.sum()) - 1.0) < 1e-6:  # (learner review 34: normalize=True got the general words)
        raise Hint("rows_per_name holds shares that add up to 1 (value_counts(normalize=True)?), not counts: count the rows per code as whole numbers.")
    by_code = _counts_by_code(ns)
    if total < int(ns["N_INPUT_ROWS"]) and by_code is not None and _fewer_rows_per_code(got, by_code):  # (learner review 32: .partitions[:-1])
        raise Hint(
            "the counts add up to fewer rows than the processed data has: some rows were left out (a slice of the "
            "partitions? a filter?). Count every row of the processed frame."
        )
    if total != int(ns["N_INPUT_ROWS"]):
        raise Hint("the counts do not add up to the number of rows: count rows (not distinct values, not a column's sum).")
    by_code = _counts_by_code(ns)
    given = {int(code): int(n) for code, n in got.items()}
    if by_code is not None and given != by_code and sorted(given.values()) == sorted(by_code.values()):  # (learner review 30)
        raise Hint(
            "the counts are right, but not under their own codes: the index was set after counting (value_counts sorts by "
            "count, most frequent first, so a new index puts each count beside another code). Keep the index the count gives."
        )
    if by_code is not None and given != by_code:
        raise Hint("rows_per_name does not hold each code's own count of rows: count the rows per code of the processed data.")
    counted_on_cluster(ns)
    return f"one count per code, {len(codes)} codes, every row counted once."


def _distinct_call(cell: str | None) -> str | None:
    """``nunique(...)`` / ``drop_duplicates(...)`` / ``unique(...)`` when the answer cell calls one, else None."""
    tree = _parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        counts = any(k.arg == "return_counts" for k in node.keywords) if isinstance(node, ast.Call) else False  # np.unique(..., return_counts=True)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("nunique", "drop_duplicates", "unique") and not counts:
            return f"{node.func.attr}(...)"
    return None


def _partition_rows(path: str) -> set[int]:
    """The row count of each partition of the processed Parquet (what a count of ONE partition adds up to)."""
    import dask.dataframe as dd

    return {int(n) for n in dd.read_parquet(path).map_partitions(len).compute()}


def _require_medians_of_the_runs(medians: Any, all_times: Any, cell: str | None) -> None:
    """A :class:`Hint` when ``medians`` is no longer the median of each size's runs in ``all_times`` (as the timing cell
    made it): a cell wrote into it (learner review 29: ``medians[N_MAX] = medians[1]`` after the ratio; every later
    answer then read the changed times)."""
    import statistics

    if not (isinstance(all_times, dict) and all_times and isinstance(medians, dict)):
        return
    runs = {n: statistics.median(t) for n, t in all_times.items() if isinstance(t, (list, tuple)) and t}
    if all(n in medians and close(medians[n], m, rel=1e-12) for n, m in runs.items()):
        return
    tree = _parse(cell) if cell is not None else None
    writes = tree is not None and any(
        isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "medians"
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AugAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
    )
    who = "your answer cell writes into it (medians[...] = ...)" if writes else "a cell changed it after the timing cell made it"
    raise Hint(
        f"medians no longer holds the median time of each cluster size's runs (all_times): {who}. Run the timing cell "
        "again to make medians, then compute speed_up from it without changing it."
    )


def _typed_decimal_limit(given: float, expected: float) -> bool:
    """True when ``given`` is ``expected`` with the memory limits read in GB (10**9 bytes) instead of GiB: a unit, not a
    rounding (learner review 14: ``x.nbytes / (len(limits) * 2e9)`` is 0.02 exactly, and was told "rounded so far")."""
    return close(given, expected * 2**30 / 1e9, rel=1e-3)


def _judge_07_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    medians = ns["medians"]
    _require_medians_of_the_runs(medians, ns.get("all_times"), answer_cell(ns, "speed_up"))  # before the re-run (it writes too)
    fresh(ns, ("speed_up",))
    n = max(medians)
    expected = medians[min(medians)] / medians[n]
    value = ans["speed_up"]
    require_computed(value, "speed_up")
    given = None if isinstance(value, str) else as_number(value)
    if given is None:
        raise Hint(f"speed_up should be a plain number (how many times faster), computed from medians; {describe(value)} is not.")
    cell = answer_cell(ns, "speed_up")
    if cell is not None and typed_in(cell, "speed_up"):
        raise Hint("speed_up is typed into the answer cell (a number written out): compute it from the times in medians.")
    require_no_chooser(cell, "speed_up")  # (learner review 29: max(ratio, 1), min(ratio, 2): a typed bound)
    slower = {k: v * (2.0 if k == min(medians) else 1.0) for k, v in medians.items()}  # medians alone: the table made
    # With one size (a machine with one GPU: medians = {1: t}) every ratio of its times is 1 with any times: the
    # re-run tells nothing (H100, fourteenth session: the reference solution was told it "does not follow")
    if len(medians) > 1 and cell is not None and not reads_other_data(cell, ns, "medians") and unchanged_when(ns, "speed_up", {"medians": slower}):
        raise Hint(
            "speed_up does not follow the times in medians: run again with other times (one worker twice as slow), your "
            "answer cell gives the same number, so that number was not worked out from medians. Compute it from medians."
        )
    if cell is not None:
        sizes_read(cell, tuple(code for _, code in own_trees(cell, ns, "07-2")))
    extreme = extremes(cell) if cell is not None else None
    if extreme is not None:
        raise Hint(
            f"speed_up takes {extreme}, whichever cluster size it belongs to: the speed-up only while the largest cluster "
            "happens to be the fastest (on a loaded machine it may not be). Take the times by number of workers: one "
            "worker, and the largest cluster."
        )
    if cell is not None and rounded_medians(cell, ns, given, expected):
        raise Hint(
            "speed_up is a ratio of the medians as the table shows them, rounded to 2 decimal places, so it is off in the "
            "later digits. Use the unrounded median times."
        )
    runs = {len(t) for t in ns.get("all_times", {}).values()} if isinstance(ns.get("all_times"), dict) else set()
    if cell is not None and not uses_medians(cell, runs.pop() if len(runs) == 1 else None) and not reads_speed_ups(cell, ns, given, expected):
        raise Hint(
            "speed_up is not made from median times: one run's time (whichever run) or a mean varies from run to "
            "run, and the lesson compares the median of the runs. Use the median times in medians."
        )
    if float(given).is_integer() and not close(given, expected, rel=1e-9):  # (learner review 35: //, int(), round())
        raise Hint(
            "speed_up is a whole number: the ratio of the two times rounded too far, or cut (//, int(), round() in your "
            "answer cell): a whole number drops the part of the speed-up that was measured. Keep the ratio's decimals."
        )
    if (close(given, expected, rel=1e-9) or (cell is not None and _rounded_as_shown(repr(float(given)), expected))) and len(medians) == 1:
        return (
            f"the largest cluster measured here is the {n}-worker one (one per GPU, and this machine has one GPU), so it is "
            "compared with itself; on a machine with more GPUs the same formula compares one worker with all of them."
        )
    if close(given, expected, rel=1e-9) or (cell is not None and _rounded_as_shown(repr(float(given)), expected)):
        return f"the measured speed-up on {n} workers (ideal: {n}); efficiency is speed-up / workers."
    if close(given, 1 / expected, rel=0.005):
        raise Hint("that is the inverse: a speed-up above 1 means faster, so the time on ONE worker goes on top.")
    if close(given, expected / n, rel=0.005):
        raise Hint("that is the efficiency (speed-up per worker); the question asks for the speed-up itself.")
    if close(given, medians[min(medians)] - medians[n], rel=0.005):
        raise Hint("that is a difference of seconds; a speed-up is a ratio of times.")
    if close(given, 100 * expected, rel=0.005):
        raise Hint("that is the speed-up times 100 (a percentage written as a plain number): the question asks for the ratio itself.")
    digits = rounding_in(cell) if cell is not None else None
    if digits is not None and close(given, round(expected, digits), rel=1e-9):
        raise Hint("that is the speed-up rounded too far (round(...) in your answer cell): keep the ratio as computed; round only to print it.")
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", 8)
    if itemsize < 8 and close(given, expected, rel=0.01):  # (learner reviews 22-23: np.float16(ratio) was "not the ratio")
        raise Hint(
            f"that is the ratio of the median times, stored as a {value.dtype}: a {itemsize * 8}-bit float keeps only a "
            "few digits of it. Keep it a Python float (64 bits)."
        )
    raise Hint("that is not the ratio of the median times: use the median times in medians, one worker against the largest cluster.")


EXERCISES = [
    Exercise(
        "06-1",
        ("col_sums_persisted", "col_sums_local"),
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())\n",
        _judge_06_1,
        "one of them stays a Dask array held on the workers; the other comes back to the notebook.",
    ),
    Exercise(
        "06-2",
        ("fraction",),
        'workers = session.client.scheduler_info(n_workers=-1)["workers"].values()\nfraction = x.nbytes / sum(w["memory_limit"] for w in workers)\n',
        _judge_06_2,
        "x's size in bytes, and the workers' memory limits from scheduler_info.",
    ),
    Exercise(
        "07-1",
        ("rows_per_name",),
        # value_counts, not groupby("name").size(): cuDF 26.10's size() fails on a frame with a column called name
        # (notebook.hints.CUDF_SIZE), and the reference must run on GPU too
        'rows_per_name = dd.read_parquet(PROCESSED)["name"].value_counts().compute()\n',
        _judge_07_1,
        "read the processed Parquet with dask.dataframe, group, count, compute.",
    ),
    Exercise("07-2", ("speed_up",), "speed_up = medians[1] / medians[max(medians)]\n", _judge_07_2, "a ratio of two entries of medians.", cluster=False),
]
