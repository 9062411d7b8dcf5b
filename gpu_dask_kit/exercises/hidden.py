"""A typed answer hidden in an expression: ``len(ddf.partitions[2]) * 0 + 41200`` computes, but its value is typed.

A number written out in the statements that make an answer, equal to that answer (within the check's tolerance), is
the answer typed in, whatever Dask expression surrounds it. Other numbers (a chunk size, ``2**30``, a rank of 10, a
partition index) differ from the answer, so right answers that hold them are not affected.
"""

from __future__ import annotations

import ast
from typing import Any

from .model import Hint
from .replay import _depends, _parse
from .values import as_number, close

__all__ = ["literal", "number_of", "written_numbers", "require_not_hidden"]


def literal(node: ast.AST) -> bool:
    """True for an expression made of literals only (no name, attribute, call or subscript)."""
    return not any(isinstance(n, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for n in ast.walk(node))


def number_of(node: ast.AST) -> float | None:
    """The number a literal expression (or a string such as ``'41200'``) writes out; None for anything else."""
    if not isinstance(node, ast.expr) or not literal(node):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # float("0.48..."), int("41200")
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return None
    try:
        value = eval(compile(ast.Expression(node), "<typed>", "eval"), {"__builtins__": {}})  # literals only (checked)
    except Exception:
        return None
    if isinstance(value, str):  # "412" + "00": digits spelled in pieces
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def written_numbers(node: ast.AST) -> list[float]:
    """Each number written out in ``node``: the largest sub-expressions made of literals only (``2 * 2**30``, ``0.5``),
    and strings that read as a number.

    >>> written_numbers(ast.parse("t = (a ** 2).sum() * 0 + 3_000 + int('12')"))
    [2.0, 0.0, 3000.0, 12.0]
    """
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant)) and literal(node):
        value = number_of(node)
        return [value] if value is not None else []
    return [found for child in ast.iter_child_nodes(node) for found in written_numbers(child)]


def require_not_hidden(cell: str | None, name: str, value: Any, rel: float = 1e-6) -> None:
    """A :class:`Hint` when a statement that makes ``name`` in ``cell`` writes out a number equal to ``value`` (a number;
    other values are not looked at), within ``rel``."""
    number = as_number(value) if not isinstance(value, bool) else None
    tree = _parse(cell) if cell is not None else None
    if number is None or number == 0 or tree is None:
        return
    for i in _depends(tree.body, name):
        if any(close(found, number, rel=rel) for found in written_numbers(tree.body[i])):
            raise Hint(
                f"{name} is computed, but the number it holds is also written out in your answer cell: the value comes "
                "from that typed number (the Dask expression around it adds nothing, or is multiplied by 0), not from "
                f"the computation. Remove the typed number and let Dask compute {name}."
            )
