"""How 00-2's answer cell got its size (a size typed in, spelled in steps; one limit times the worker count).

A size typed in as a string built from numbers written out: ``f"{2*2}GiB"``, ``str(2 + 2) + "GiB"``,
``"{}GiB".format(4)``, ``"%dGiB" % 4``. A plain ``"4GiB"`` is a typed size too (see ``typed.numbers_read``); these
only spell it in more steps. A size string made from values read in the cell (``f"{total / 2**30}GiB"``) is not one.

>>> spelled(ast.parse('m = f"{2*2}GiB"'), "m"), spelled(ast.parse('m = str(2 + 2) + "GiB"'), "m")
('4GiB', '4GiB')
>>> spelled(ast.parse('m = f"{total / 2**30}GiB"'), "m") is None
True
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from .model import Hint
from .replay import _depends, _parse
from .values import as_bytes

__all__ = ["spelled", "require_not_spelled", "require_each_limit"]

#: Calls that turn numbers written out into text (``str(4)``) or back (``int("4")``): still written out.
_TEXT_CALLS = frozenset({"str", "int", "float", "repr", "format"})
_SAFE = {call: getattr(builtins, call) for call in _TEXT_CALLS}


def _from_literals(node: ast.AST) -> bool:
    """True for an expression made of literals, formatted or turned into text (no name read, no other call)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            func = inner.func
            if isinstance(func, ast.Name) and func.id in _TEXT_CALLS:
                continue
            if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, (ast.Constant, ast.JoinedStr)):
                continue
            return False
        if isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript)) and not _call_name(inner, node):
            return False
    return True


def _call_name(inner: ast.AST, root: ast.AST) -> bool:
    """True when ``inner`` is the function name of an allowed call (``str`` of ``str(4)``, ``.format`` of a literal)."""
    return any(isinstance(c, ast.Call) and c.func is inner for c in ast.walk(root))


def _built(node: ast.AST) -> bool:
    """True for text put together (an f-string, a sum, ``%`` or ``.format``), not one plain string constant."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return True
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "format") or (isinstance(node.func, ast.Name) and node.func.id == "str")
    )


def spelled(tree: ast.Module, name: str) -> str | None:
    """The size string the statements making ``name`` build from numbers written out (None: they build none)."""
    for i in _depends(tree.body, name):
        for node in ast.walk(tree.body[i]):
            if not (isinstance(node, ast.expr) and _built(node) and _from_literals(node)):
                continue
            try:
                text = eval(compile(ast.Expression(node), "<spelled>", "eval"), {"__builtins__": _SAFE})  # literals only (checked)
            except Exception:
                continue
            if isinstance(text, str) and any(c.isalpha() for c in text) and as_bytes(text) is not None:
                return text
    return None


def require_not_spelled(cell: str | None, name: str) -> None:
    """A :class:`Hint` when ``name`` is made from a size string built out of numbers written out in the answer cell."""
    tree = _parse(cell) if cell is not None else None
    if tree is not None and spelled(tree, name) is not None:
        raise Hint(
            f"{name} is a size typed in, spelled as a string put together from numbers written out in your answer cell "
            "(an f-string, str(...) + a unit, or .format): the workers' limits are then typed, not read from the cluster, "
            "and wrong as soon as it is started with other limits. Where to look: the scheduler reports every worker's "
            "memory limit (the prompt says where)."
        )


def _counts_workers(node: ast.AST) -> bool:
    """True for an expression that stands for the number of workers (``session.n_workers``, ``len(workers)``)."""
    if isinstance(node, ast.Attribute) and node.attr == "n_workers":
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def _averages(node: ast.AST) -> bool:
    """True for a mean taken in the code (``statistics.mean(limits)``, ``np.mean(...)``, ``series.mean()``): a mean
    times the number of workers is the sum of every worker's own limit, equal or not."""
    func = node.func if isinstance(node, ast.Call) else None
    named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return named in ("mean", "fmean")


def require_each_limit(cell: str | None, name: str, limits: list[int], helpers: Sequence[tuple[str, ast.AST]] = ()) -> None:
    """A :class:`Hint` when the statements making ``name`` (or ``helpers``, the code of the learner's own functions the
    cell calls: learner review 19's ``def cm(client): return len(...) * limit``) multiply one limit by the number of
    workers (right only while every worker has the same limit) instead of adding up each worker's own."""
    tree = _parse(cell) if cell is not None else None
    body: list[ast.AST] = [tree.body[i] for i in _depends(tree.body, name)] if tree is not None else []
    body += [code for _, code in helpers]
    for node in (n for s in body for n in ast.walk(s)):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        if _averages(node.left) or _averages(node.right):
            continue  # the mean of the limits times their number: their sum
        if any(isinstance(side, ast.Constant) and side.value == 0 for side in (node.left, node.right)):
            continue  # `0 * len(ws)`: a part multiplied by 0 (padding, named as that by another check)
        if _counts_workers(node.left) or _counts_workers(node.right):
            other = node.right if _counts_workers(node.left) else node.left
            func = other.func if isinstance(other, ast.Call) else None
            if (isinstance(func, ast.Name) and func.id == "sum") or (isinstance(func, ast.Attribute) and func.attr == "sum"):
                raise Hint(  # (learner review 30: told "multiplies ONE worker's limit", as if the value were right here)
                    f"{name} multiplies a sum by the number of workers: a sum of the limits already counts every worker "
                    "once, so the product counts each of them again. Where to look: the sum of each worker's limit, alone."
                )
            same = "all have the same limit now" if len(set(limits)) == 1 else "do not all have the same limit"
            raise Hint(
                f"{name} multiplies ONE worker's limit by the number of workers: that holds only while every worker has "
                f"the same limit (these workers {same}; a cluster started with other options, or a worker that joins "
                "later, may differ). Where to look: add up the limit the scheduler reports for EACH worker."
            )
