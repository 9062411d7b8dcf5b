"""07-2's evidence: how the answer cell took the times out of ``medians`` (by cluster size, from medians' own keys)."""

from __future__ import annotations

import ast
from typing import Any

from .hidden import number_of
from .model import Hint
from .replay import evaluated_string
from .typed import REQUESTS
from .values import close

__all__ = ["sizes_read", "extremes", "rounded_medians", "reads_speed_ups", "uses_medians"]

#: The names holding notebook 07's measurements by cluster size.
MEASURED = ("medians", "all_times", "speed_ups", "times")


def sizes_read(cell: str, helpers: tuple[ast.AST, ...] = ()) -> None:
    """A :class:`Hint` when the answer cell reads a time at a cluster size that matches the sizes measured here only
    by chance: a count (``len(medians)``), the notebook's CPU cluster request, or a typed size other than 1 (one worker
    is always measured; the largest size is the GPU count on a GPU machine). ``helpers``: the code of the learner's own
    functions the cell calls, whose parameters stand for the measurements and whose defaults are typed too (learner
    review 19: ``def ratio2(t, k=2): return t[1] / t[k]``)."""
    tree = ast.parse(cell)
    roots = (tree, *helpers)
    made = {t.id: node.value for r in roots for node in ast.walk(r) if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    measured = set(MEASURED)
    for function in (n for h in helpers for n in ast.walk(h) if isinstance(n, (ast.FunctionDef, ast.Lambda))):
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        measured |= {a.arg for a in positional} | {a.arg for a in args.kwonlyargs}
        made.update({a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)})
        made.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    inside = [e for r in roots for n in ast.walk(r) if isinstance(n, ast.Call) and (e := evaluated_string(n)) is not None]  # eval("...")
    for node in [n for root in (*roots, *inside) for n in ast.walk(root)]:
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in measured):
            continue
        index = node.slice
        if isinstance(index, ast.Name) and index.id in made:
            index = made[index.id]  # n = len(medians); medians[n]
        why = _by_chance(index)
        if why:
            raise Hint(
                f"speed_up reads a time at a cluster size given by {why} ({ast.unparse(node)}): that size is one of the sizes measured on this "
                "machine, but not on every machine: on a machine with GPUs the sizes measured are 1 and the number of GPUs, "
                "so that key may not exist there. Take the largest cluster size from what was measured (the keys of medians)."
            )


def _by_chance(index: ast.expr) -> str | None:
    """What an index stands for when it is not a cluster size read from the measurements (None: it is, or 1)."""
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" for n in ast.walk(index)):
        return "a count of entries (len(...))"
    if any(isinstance(n, ast.Name) and n.id in REQUESTS for n in ast.walk(index)):
        return "the notebook's CPU cluster request (not used at all on a GPU machine)"
    value = number_of(index)
    if value is None and isinstance(index, ast.Call) and getattr(index.func, "id", None) in ("int", "float") and len(index.args) == 1:
        arg = index.args[0]  # int("2"): a size written out as a string
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            try:
                value = float(arg.value)
            except ValueError:
                value = None
    if value is not None and value != 1:
        return "a cluster size written out"
    return None


def extremes(cell: str) -> str | None:
    """What the answer cell takes with ``max``/``min``/``sorted`` of ``medians.values()`` (times) or of the table's
    speed-ups (``speed_ups.values()``, ``ours["speed-up"].max()``), not by cluster size: "the largest and the smallest
    of the median times", "the largest of the speed-ups"; else None."""
    taken: dict[str, str] = {}
    for node in ast.walk(ast.parse(cell)):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in ("max", "min", "sorted"):
            for arg in node.args:
                if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "values":
                    taken[node.func.id] = _what(arg.func.value) or "median times"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("max", "min") and not node.args:
            what = _what(node.func.value)  # a Series' or array's own max(): ours["speed-up"].max()
            if what:
                taken[node.func.attr] = what
    if not taken:
        return None
    what = " and ".join(sorted(set(taken.values())))
    if set(taken) == {"sorted"} and taken["sorted"] == "speed-ups":  # sorted(speed_ups.values())[-1]: one end of them
        return "one end of the sorted speed-ups (the largest, or the smallest)"
    if ("max" in taken and "min" in taken) or "sorted" in taken:
        return f"the largest and the smallest of the {what} (the slowest and the fastest, one divided by the other)"  # (review 45)
    return f"the {'smallest' if 'min' in taken else 'largest'} of the {what}"


def _what(owner: ast.expr) -> str | None:
    text = ast.unparse(owner).lower()
    return "speed-ups" if "speed" in text else "median times" if "median" in text else None


def rounded_medians(cell: str, ns: dict[str, Any], given: float, expected: float) -> bool:
    """True when ``given`` is the ratio of two medians rounded to 2 places (cell 20's "median s" column), not the speed-up."""
    medians = ns["medians"]
    rounded = round(medians[min(medians)], 2) / round(medians[max(medians)], 2)
    return "median s" in cell and close(given, rounded, rel=1e-9) and not close(given, expected, rel=1e-9)


def reads_speed_ups(cell: str, ns: dict[str, Any], given: float, expected: float) -> bool:
    """True when ``given`` was read from what notebook 07's table cell made of the medians: its ``speed_ups`` (a dict
    of medians[1] / median per size) or its ``ours["speed-up"]`` column (those, rounded to 2 places)."""
    names = {n.id for n in ast.walk(ast.parse(cell)) if isinstance(n, ast.Name)}
    for name in names & {"speed_ups", "ours"}:
        value: Any = ns.get(name)
        column = value.get("speed-up") if hasattr(value, "columns") else None
        found = [float(v) for v in (value.values() if isinstance(value, dict) else column if column is not None else [])]
        if any(close(v, expected, rel=1e-9) or v == round(expected, 2) for v in found) and close(given, expected, rel=0.01):
            return True
    return False


def uses_medians(cell: str, runs: int | None = None) -> bool:
    """True when the answer cell reads ``medians`` or takes a median itself (np.median, statistics.median, .median(),
    or the middle of ``runs`` sorted times: ``sorted(all_times[1])[1]`` for 3 runs).

    >>> uses_medians("a = sorted(t[1])[1] / sorted(t[4])[1]", runs=3), uses_medians("a = sorted(t[1])[0] / sorted(t[4])[0]", runs=3)
    (True, False)
    """
    tree = ast.parse(cell)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return any("median" in name for name in names) or (runs is not None and runs % 2 == 1 and _middle_of_sorted(tree, runs // 2))


def _middle_of_sorted(tree: ast.AST, middle: int) -> bool:
    """True when ``tree`` takes item ``middle`` (a number written out, or ``len(...) // 2``) of ``sorted(...)`` or of a
    name bound to one (``t1 = sorted(all_times[1])``)."""

    def is_sorted(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "sorted"

    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs: list[tuple[ast.expr, ast.expr]] = [(t, node.value) for t in node.targets]
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs += list(zip(target.elts, node.value.elts, strict=False))
            bound |= {t.id for t, v in pairs if isinstance(t, ast.Name) and is_sorted(v)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and (is_sorted(node.value) or (isinstance(node.value, ast.Name) and node.value.id in bound))):
            continue
        index = node.slice
        if isinstance(index, ast.Constant) and index.value == middle:
            return True
        if not (isinstance(index, ast.BinOp) and isinstance(index.op, ast.FloorDiv)):
            continue
        halved = isinstance(index.right, ast.Constant) and index.right.value == 2
        if halved and isinstance(index.left, ast.Call) and getattr(index.left.func, "id", None) == "len":
            return True
    return False
