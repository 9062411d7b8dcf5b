"""The learner's own functions (and classes) that an answer cell calls: what is typed in them is typed in the answer.

Learner review 18 found numbers moved out of the answer cell into a function of the learner's own, defined in another
cell or in the answer cell: ``def tl3(client): return len(client.scheduler_info()["workers"]) * 2 * 2**30``, a default
parameter that holds the answer (``def rows_def(frame, i, n=...)``), a hand-made object whose ``scheduler_info``
returns typed limits. The answer cell then shows no typed number, and the checks that read it found none.

A function is the learner's own when a cell of this notebook defines it (its globals are the notebook's namespace) and
no lesson cell above the exercise does (when the open notebook is known; see :func:`..notebook.skipped.names_above`).
Its code is read from IPython's cell cache (``inspect.getsource``); where that is not there, from its code object's
constants and its defaults.
"""

from __future__ import annotations

import ast
import inspect
import numbers
import textwrap
import types
from typing import Any

import numpy as np

from ..notebook.cellreads import _function_globals, names_read
from ..notebook.skipped import names_above

__all__ = ["own_functions", "own_trees"]


def _notebook_made(value: Any, namespace: dict[str, Any]) -> bool:
    """True for a function defined by a cell of the notebook whose namespace is ``namespace``."""
    if isinstance(value, types.MethodType):
        value = value.__func__
    if not isinstance(value, types.FunctionType):
        return False
    return value.__globals__ is namespace or value.__module__ == "__main__"


def _functions_of(value: Any, namespace: dict[str, Any]) -> list[Any]:
    """The notebook-made functions ``value`` is or holds: itself, a class's methods, an object's own attributes and its
    class's methods (``types.SimpleNamespace(scheduler_info=lambda: ...)``, ``Fake()``)."""
    if _notebook_made(value, namespace):
        return [value]
    found: list[Any] = []
    if isinstance(value, type):
        holders = [vars(value)]
    elif isinstance(value, types.ModuleType) or not hasattr(value, "__dict__"):
        holders = []
    else:
        holders = [vars(value), vars(type(value))]
    for holder in holders:  # (only functions a cell made are kept: a library object's methods are not)
        for item in list(holder.values()):
            item = item.__func__ if isinstance(item, (staticmethod, classmethod)) else item
            if isinstance(item, property):
                item = item.fget
            if _notebook_made(item, namespace):
                found.append(item)
    return found


def own_functions(cell: str | None, namespace: dict[str, Any], key: str = "") -> list[tuple[str, Any]]:
    """(name, function) of each notebook-made function (or method of a notebook-made class or object) that ``cell``
    reads, directly or through another such function, that no lesson cell above exercise ``key`` makes."""
    if cell is None:
        return []
    lesson = names_above(namespace, key) if key else None
    found: list[tuple[str, Any]] = []
    seen: set[int] = set()
    candidates = names_read(cell, namespace) | _defined_in(cell, namespace)  # (a def in the answer cell itself: review 20)
    for name in sorted(candidates):
        if lesson is not None and name in lesson:
            continue
        for function in _functions_of(namespace.get(name), namespace):
            if id(function) not in seen:
                seen.add(id(function))
                found.append((name, function))
    return found


def _defined_in(cell: str, namespace: dict[str, Any]) -> set[str]:
    """The names of the functions (and classes) the cell itself defines, and the globals those functions use."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return set()
    names = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    names |= {t.id for s in tree.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Lambda) for t in s.targets if isinstance(t, ast.Name)}
    seen: set[int] = set()
    for name in list(names):
        names |= _function_globals(namespace.get(name), seen)
    return names


def _tree(function: Any) -> ast.AST | None:
    """The function's code as IPython keeps it (the ``def`` or the line with the lambda), or None when not kept."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None
    try:
        return ast.parse(source)
    except SyntaxError:  # a lambda in the middle of a longer statement: the line alone may not parse
        try:
            return ast.parse(source.strip().rstrip(",)"))
        except SyntaxError:
            return None


def _constants(code: types.CodeType) -> list[Any]:
    """The numbers a code object (and those nested in it) holds."""
    found: list[Any] = []
    todo = [code]
    while todo:
        current = todo.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
            elif isinstance(const, numbers.Number) and not isinstance(const, bool):
                found.append(const)
    return found


def own_trees(cell: str | None, namespace: dict[str, Any], key: str = "") -> list[tuple[str, ast.AST]]:
    """(name, tree) of the code of each of the learner's own functions ``cell`` calls (see :func:`own_functions`)
    whose source IPython keeps; a function without it stands as a module of its defaults and constants written out."""
    trees: list[tuple[str, ast.AST]] = []
    for name, function in own_functions(cell, namespace, key):
        tree = _tree(function)
        if tree is None:
            defaults = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
            kept = [v for v in (*defaults, *_constants(function.__code__)) if isinstance(v, (numbers.Number, str, np.generic))]
            tree = ast.parse("\n".join(repr(v) for v in kept if not isinstance(v, bool)) or "pass")
        trees.append((name, tree))
    return trees
