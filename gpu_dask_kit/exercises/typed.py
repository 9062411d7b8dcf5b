"""How 06-2's answer cell got its numbers: limits typed in (a literal divisor) or x computed just to read its size."""

from __future__ import annotations

import ast
from typing import Any

from .judging import from_cell
from .model import Hint

__all__ = ["limits_read", "size_not_computed"]


def limits_read(cell: str | None) -> None:
    """A :class:`Hint` when the answer cell divides by a number written out (limits typed in, not read from the cluster)."""
    tree = _parse_cell(cell)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _literal(node.right):
            gb = " (Also: 1 GB is 10**9 bytes, 1 GiB is 2**30; memory limits are set in GiB.)" if _decimal_size(node.right) else ""
            raise Hint(
                "fraction divides by a number written out in your answer cell: the workers' memory limits are typed in, not "
                "read from the cluster, so the answer is wrong as soon as the cluster is started with other limits. Where to "
                f"look: the scheduler reports every worker's memory limit (the prompt says where).{gb}"
            )


def _decimal_size(node: ast.expr) -> bool:
    """True for a literal size counted in powers of 1000 (GB, MB), not of 1024."""
    try:
        value = float(eval(compile(ast.Expression(node), "<typed>", "eval"), {"__builtins__": {}}))  # literals only (checked)
    except Exception:
        return False
    return value >= 1e6 and value % 1e6 == 0 and value % 2**20 != 0


def _literal(node: ast.AST) -> bool:
    return not any(isinstance(n, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for n in ast.walk(node))


def _parse_cell(cell: str | None) -> ast.Module | None:
    try:
        return ast.parse(cell) if cell is not None else None
    except SyntaxError:
        return None


def size_not_computed(ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer cell, run again, made the cluster compute (x came to the notebook for its size)."""
    found = from_cell(ns, ("fraction",))
    if found is not None and found.runs_for("fraction"):
        raise Hint(
            "your answer cell computed x (the check ran it again and the cluster ran x's tasks) just to read its size: that "
            "brings every value of x to this notebook. Where to look: a Dask array knows its size in bytes from its shape "
            "and dtype, without computing anything."
        )
