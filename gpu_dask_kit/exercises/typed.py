"""How 06-2's (and 00-2's) answer cell got its numbers: limits, x's size or the worker count typed in, or x computed to read its size."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from .hidden import literal, number_of
from .judging import from_cell
from .model import Hint
from .replay import CUTTING, _depends, _parse, answer_cell, evaluated_string
from .values import as_bytes, close

__all__ = ["limits_read", "numbers_read", "size_not_computed", "typed_numbers"]

#: Names of the notebooks' cluster requests: what the notebook ASKED the kit for, not what the workers report.
REQUESTS = ("CPU_CLUSTER", "GPU_CLUSTER")


def limits_read(cell: str | None, where: str = "your answer cell") -> None:
    """A :class:`Hint` when the answer cell (or the code ``where`` names) divides by a number written out (limits typed
    in, not read from the cluster)."""
    tree = _parse_cell(cell)
    reads_limits = cell is not None and "memory_limit" in cell
    # (a floor division converts too: ``[l // 2**20 for l in limits]``, limits in whole MiB; learner review 24)
    divisions = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv))] if tree is not None else []
    units = [number_of(n.right) for n in divisions if _unit(n.right)]
    if len(set(units)) > 1:
        names = {2**10: "KiB", 2**20: "MiB", 2**30: "GiB", 2**40: "TiB", 1e3: "kB", 1e6: "MB", 1e9: "GB", 1e12: "TB"}
        said = " and ".join(dict.fromkeys(names.get(u, str(u)) for u in units if u is not None))
        raise Hint(
            f"fraction divides sizes given in different units ({said}): one side in one unit, the other in another, so "
            "the ratio is off by their factor. Put both sizes in the same unit (bytes, as Dask reports them)."
        )
    cancels = len(units) >= 2  # the same unit on both sides (``(x.nbytes / 1e6) / (sum(limits) / 1e6)``): it cancels
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and literal(node.right):
            if _unit(node.right) and "nbytes" in ast.unparse(node.left) and not cancels:
                raise Hint(
                    f"fraction divides x's size by {ast.unparse(node.right)} (another unit) while the limits stay in "
                    "bytes: the ratio is off by that factor. Keep both sizes in bytes, as Dask reports them."
                )
            if _unit(node.right) and re.search(r"\blimits\b|memory_limit", ast.unparse(node.left)) and not cancels:
                raise Hint(  # (learner review 40: x.nbytes / (sum(limits) / 2**20) was told the limits were typed in)
                    f"fraction divides the limits by {ast.unparse(node.right)} (another unit) while x's size stays in "
                    "bytes: the ratio is off by that factor. Keep both sizes in bytes, as Dask reports them."
                )
            if _cancelled(node) or ((reads_limits or cancels) and _unit(node.right)):
                continue  # ``* 100 / 100`` changes nothing; ``/ 2**30`` beside limits read from the cluster is a unit
            if _truncated(node):  # (learner review 36: int(f * 100) / 100 was told the limits were typed in)
                raise Hint(f"fraction was cut after it was computed ({ast.unparse(node)} drops its later digits): keep the ratio as the division gives it.")
            if (reads_limits or re.search(r"\blimits\b", cell or "")) and not _unit(node.right):  # (learner review 36: sum(limits) / 2)
                raise Hint(
                    f"fraction is also divided by {ast.unparse(node.right)}, a number written out in {where}, besides the "
                    "memory limits read from the cluster: x's share of the limits is x's size over their sum, nothing more."
                )
            gb = " (Also: 1 GB is 10**9 bytes, 1 GiB is 2**30; memory limits are set in GiB.)" if _decimal_size(node.right) else ""
            raise Hint(
                f"fraction divides by a number written out in {where}: the workers' memory limits are typed in, not "
                "read from the cluster, so the answer is wrong as soon as the cluster is started with other limits. Where to "
                f"look: the scheduler reports every worker's memory limit (the prompt says where).{gb}"
            )


def _cancelled(node: ast.BinOp) -> bool:
    """True for a division by a literal that the same literal multiplied just before (``a * 100 / 100``)."""
    left, divisor = node.left, number_of(node.right)
    return isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult) and divisor in (number_of(left.left), number_of(left.right))


def _truncated(node: ast.BinOp) -> bool:
    """True for ``int(a * 100) / 100`` (or round/floor/trunc): a value cut to a few decimals by hand."""
    call, divisor = node.left, number_of(node.right)
    if not (isinstance(call, ast.Call) and call.args and getattr(call.func, "id", getattr(call.func, "attr", "")) in CUTTING):
        return False
    inner = call.args[0]
    return isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult) and divisor in (number_of(inner.left), number_of(inner.right))


def _unit(node: ast.expr) -> bool:
    """True for a literal unit of bytes: a power of 1024 or of 1000 (``2**20``, ``1024**3``, ``1e9``)."""
    value = number_of(node)
    return value is not None and any(value == base**k for base in (1024, 1000) for k in range(1, 5))


def _decimal_size(node: ast.expr) -> bool:
    """True for a literal size counted in powers of 1000 (GB, MB), not of 1024."""
    value = number_of(node)
    return value is not None and value >= 1e6 and value % 1e6 == 0 and value % 2**20 != 0


def _parse_cell(cell: str | None) -> ast.Module | None:
    """The cell's tree, with each ``eval("...")`` replaced by the expression in its string (its numbers are typed too)."""
    try:
        tree = ast.parse(cell) if cell is not None else None
    except SyntaxError:
        return None
    return _Unevaluated().visit(tree) if tree is not None else None


class _Unevaluated(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        inner = evaluated_string(node)
        return self.visit(inner) if inner is not None else self.generic_visit(node)


def typed_numbers(node: ast.AST, parent: ast.AST | None = None) -> list[tuple[float, ast.AST | None, bool]]:
    """(value, parent node, a size?) of each number written out in ``node``: the largest sub-expressions made of literals
    only (``2 * 2**30``, ``80e6``, ``0.5``), sizes written as a string (``'2GiB'``, also given to ``parse_bytes``), and
    the product of the literal factors of a product (``len(workers) * 2 * 1024**3``: ``2 * 1024**3`` is one size).
    """
    if isinstance(node, ast.FormattedValue):  # f"{share:.3g}%": a format spec (".3g") is no size (learner review 29)
        return typed_numbers(node.value, node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        unit = any(c.isalpha() for c in node.value)  # "2GiB" is a size; "0.0186" or "4294967296" a number in a string
        try:
            size = as_bytes(node.value) if unit else float(node.value.replace("_", ""))
        except (TypeError, ValueError):
            size = None
        return [(float(size), parent, unit)] if size is not None and any(c.isdigit() for c in node.value) else []
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant)) and literal(node):
        value = number_of(node)
        return [(value, parent, False)] if value is not None else []
    found = [found for child in ast.iter_child_nodes(node) for found in typed_numbers(child, node)]
    factors = [number_of(f) for f in _factors(node)] if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, ast.Mult) else []
    known = [f for f in factors if f is not None]
    if len(known) >= 2:
        product = 1.0
        for f in known:
            product *= f
        found.insert(0, (product, node, False))
    return found


def _factors(node: ast.AST) -> list[ast.AST]:
    """The operands of a chain of products (``a * 2 * b * 3``: a, 2, b, 3); [] for anything else."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return []
    return [f for side in (node.left, node.right) for f in (_factors(side) or [side])]


def numbers_read(cell: str | None, nbytes: int | None, limits: list[int], name: str = "fraction", helpers: Sequence[tuple[str, ast.AST]] = ()) -> None:
    """A :class:`Hint` when the statements making ``name`` type in what the exercise asks to read: x's size (``nbytes``;
    None: not asked), the limits (a size written out), the number of workers, or the notebook's cluster request.
    ``helpers``: the code of the learner's own functions the cell calls (``own_code.own_trees``), read too (learner
    review 18: a typed limit moved into ``def tl3(client): ...`` in another cell)."""
    tree = _parse_cell(cell)
    body = [tree.body[i] for i in _depends(tree.body, name)] if tree is not None else []
    places: list[tuple[str, list[ast.AST]]] = [("your answer cell", list(body))]
    for function, code in helpers:
        places.append((f"your function `{function}` (which your answer cell calls)", [_Unevaluated().visit(code)]))
    for where, statements in places:
        _numbers_in(where, statements, nbytes, limits, name)


def _numbers_in(where: str, body: list[ast.AST], nbytes: int | None, limits: list[int], name: str) -> None:
    """The checks of :func:`numbers_read` on the statements ``body`` of the code ``where`` names."""
    if any(isinstance(n, ast.Name) and n.id in REQUESTS for s in body for n in ast.walk(s)):
        raise Hint(
            f"{name} reads the notebook's cluster request (CPU_CLUSTER or GPU_CLUSTER): what the set-up cell ASKED the "
            "kit for, not what the workers have (on a GPU machine CPU_CLUSTER is not used at all). Where to look: the "
            "scheduler reports every worker's memory limit (the prompt says where)."
        )
    n = len(limits)
    _workers_assumed(body, n, name, where)
    typed = sorted((found for s in body for found in typed_numbers(s)), key=lambda found: not found[2])  # sizes first
    sizes = [node for value, node, _ in typed if value >= 2**20 and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)]
    for value, parent, size_string in typed:
        share = nbytes / sum(limits) if nbytes is not None and limits and sum(limits) else None
        if share is not None and value > 0 and any(close(value, s, rel=0.01) for s in (share, 100 * share)):
            raise Hint(
                f"the answer itself is written out in {where} (typed, even where that part does not run): {name} "
                f"must come from the computation alone. Remove the typed number."
            )
        if nbytes is not None and close(value, nbytes, rel=1e-3):
            raise Hint(
                f"x's size is a number written out in {where}: it is right only for this x. Where to look: a "
                "Dask array knows its size in bytes (from its shape and dtype), without computing anything."
            )
        divisor = isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and number_of(parent.right) == value  # a unit: / 2**30
        if size_string or (not divisor and any(close(value, v, rel=1e-3) for v in (*limits, sum(limits)))):
            raise Hint(
                f"a memory size is written out in {where} (a size string, or bytes typed in): the workers' "
                "limits are then typed, not read from the cluster, and wrong as soon as it is started with other "
                "limits. Where to look: the scheduler reports every worker's memory limit (the prompt says where)."
            )
        scaling = isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div))
        if any(parent is part for chain in sizes for part in ast.walk(chain)):
            continue  # a factor of a size typed in (`len(limits) * 2 * 10**9`: 2 GB, learner review 48): said by the unit check
        if n > 1 and scaling and (close(value, n, rel=1e-9) or close(value, 1 / n, rel=1e-9)):
            shape = " and x has this shape. Use x's own size, and" if nbytes is not None else ". So"  # (00-2 has no x: review 39)
            raise Hint(  # (learner review 38: x[:, :25].nbytes * 2, the 2 meaning two halves, was told it is the workers)
                f"a number written out in {where} ({number_text(value)}, a multiplier or divisor) equals the number of "
                f"workers here: whatever it stands for, the answer is right only while the cluster has that many workers"
                f"{shape} add up the limit the scheduler reports for EVERY worker."
            )


def number_text(value: float) -> str:
    """``2`` for 2.0, ``0.5`` for 0.5: a number as a learner typed it."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _workers_assumed(body: list[ast.AST], n: int, name: str, where: str = "your answer cell") -> None:
    """A :class:`Hint` when the statements making ``name`` take the first workers by a typed slice (``limits[:2]``), or
    one worker's limit times the number of workers (``n_workers * min(limits)``: right only while all limits are equal)."""
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and n > 1:
            bounds = [number_of(b) for b in (node.slice.lower, node.slice.upper) if b is not None]
            if any(b is not None and abs(b) == n for b in bounds):
                raise Hint(
                    f"the number of workers is written out in {where} (the slice {ast.unparse(node.slice)} takes "
                    "that many): the cluster may have another number of workers. Add up the limit the scheduler reports "
                    "for EVERY worker, without counting them by hand."
                )
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)) and n > 1 and _items_by_typed_count(node, n):
            raise Hint(  # (learner review 40: sum(workers[i].host_memory_limit for i in range(2)))
                f"the number of workers is written out in {where} (range({n}) counts them by hand): the cluster may have "
                "another number of workers. Add up the limit the scheduler reports for EVERY worker."
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = [ast.unparse(side) for side in (node.left, node.right)]
            one = [i for i, side in enumerate((node.left, node.right)) if _one_limit(side)]
            if one and any(w in sides[1 - one[0]] for w in ("n_workers", "len(")):
                raise Hint(
                    f"{name} multiplies one worker's limit by the number of workers ({ast.unparse(node)}): right only while "
                    "every worker has the same limit, which a cluster need not have. Add up the limit the scheduler "
                    "reports for EVERY worker."
                )


def _items_by_typed_count(node: ast.GeneratorExp | ast.ListComp, n: int) -> bool:
    """True when the comprehension takes items by an index running over ``range(n)`` typed in (``limits[i] for i in
    range(2)``), ``n`` the number of workers."""
    for gen in node.generators:
        call = gen.iter
        typed = isinstance(call, ast.Call) and getattr(call.func, "id", None) == "range" and len(call.args) == 1 and number_of(call.args[0]) == n
        if typed and isinstance(gen.target, ast.Name):
            index = gen.target.id
            if any(isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Name) and s.slice.id == index for s in ast.walk(node.elt)):
                return True
    return False


def _one_limit(node: ast.expr) -> bool:
    """True for ``min(...)``/``max(...)`` or an item taken by a typed index (``limits[0]``): one worker's limit."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        return True
    return isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice) and number_of(node.slice) is not None


def _runs_x(cell: str | None) -> bool:
    """True when ``cell`` persists or computes x itself (``x.persist()``, ``dask.persist(x)``, ``client.compute(x)``).

    >>> _runs_x("fraction = x.persist().nbytes / sum(limits)"), _runs_x("fraction = x.nbytes / sum(limits)")
    (True, False)
    """
    tree = _parse(cell) if cell else None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("persist", "compute"):
            on = [node.func.value, *node.args]
            if any(isinstance(n, ast.Name) and n.id == "x" for n in on):
                return True
    return False


def size_not_computed(ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer cell, run again, ran x's tasks for its size: a compute brings x's values to the
    notebook; a persist (learner review 45: ``x.persist().nbytes``) makes every chunk for a number the lazy x knows."""
    found = from_cell(ns, ("fraction",))
    runs = found.runs_for("fraction") if found is not None else []
    if any(p.startswith(("sum", "mean", "max", "min", "var", "std")) for r in runs for p in r["prefixes"]):
        raise Hint(  # (learner review 37: x.sum().compute() was told it brought every value of x here)
            "your answer cell computed something of x's values on the cluster (a sum, a mean?): x's size in bytes is not "
            "in its values. A Dask array knows its size in bytes from its shape and dtype, without computing anything."
        )
    if any(p.startswith("finalize") for r in runs for p in r["prefixes"]):
        raise Hint(
            "your answer cell computed x (the check ran it again and the cluster ran x's tasks) just to read its size: that "
            "brings every value of x to this notebook. Where to look: a Dask array knows its size in bytes from its shape "
            "and dtype, without computing anything."
        )
    cell = found.cell if found is not None else answer_cell(ns, "fraction")
    measured = any(m in (cell or "") for m in ("bytes_held(", "memory(", "nbytes_held"))
    if _runs_x(cell) and not measured:  # (learner review 45: x.persist().nbytes; review 6: persisting x and measuring
        # what the workers hold, bytes_held(x_p), is a measurement and passes)
        raise Hint(
            "your answer cell runs x's tasks on the cluster (a persist or compute of x) just "
            "to read x's size: every chunk of x was made for a number the lazy x already knows. A Dask array knows its "
            "size in bytes from its shape and dtype, without running anything."
        )
