"""Which of the notebook's names a cell reads, and which cells to run again, in order, to make them afresh.

A re-run hint names only what the failing cell needs (:mod:`gpu_dask_kit.notebook.rerun`): the names it reads
before it assigns them (``x = x.persist()`` reads ``x``; ``y = 1`` then ``print(y)`` does not read ``y``), and the
globals of the notebook's functions it calls (``matmul()`` reads the ``a`` its body uses).
"""

from __future__ import annotations

import ast
import os
import re
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["names_read", "gone_path", "cells_needed", "cell_of", "cells_making"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _stored(statement: ast.stmt) -> set[str]:
    """Names a top-level statement assigns (a def or import included; not the locals of its functions)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    found: set[str] = set()
    todo: list[ast.AST] = [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))
    return found


def _function_globals(value: Any, seen: set[int], depth: int = 3) -> set[str]:
    """The global names a notebook function uses (and those of the functions its code names, a few levels deep)."""
    if not isinstance(value, types.FunctionType) or id(value) in seen or depth == 0:
        return set()
    seen.add(id(value))
    names: set[str] = set()
    codes = [value.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    for name in list(names):
        names |= _function_globals(value.__globals__.get(name), seen, depth - 1)
    return names


def names_read(source: str, namespace: Mapping[str, Any] | None = None) -> set[str]:
    """The names ``source`` reads before assigning them, and the globals of the notebook functions it calls.

    >>> sorted(names_read("y = x + 1\\nprint(y)"))
    ['print', 'x']
    """
    namespace = namespace or {}
    try:
        tree = ast.parse(source or "")
    except SyntaxError:  # IPython magics, or a cell that does not parse: every word, to be safe
        found = set(re.findall(r"[A-Za-z_]\w*", source or ""))
    else:
        found = _reads(tree.body, set())
    seen: set[int] = set()
    for name in list(found):
        found |= _function_globals(namespace.get(name), seen)
    return found


def _reads(body: list[ast.stmt], assigned: set[str]) -> set[str]:
    """The names the statements of ``body`` read before assigning them (``assigned``: those assigned so far, updated).
    A ``with ... as f:`` or ``for f in ...:`` binds ``f`` before its body reads it (learner review 41: cell 16 of 08,
    `with open(SCHEDULER_FILE) as f:`, was taken to read a notebook variable ``f``).

    >>> sorted(_reads(ast.parse("with open(p) as f:\\n    a = json.load(f)\\nfor i in r:\\n    print(i)").body, set()))
    ['json', 'open', 'p', 'print', 'r']
    """
    found: set[str] = set()

    def loads(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    for statement in body:
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                found |= loads(item.context_expr) - assigned
                assigned |= _stored(ast.Expr(item.optional_vars)) if item.optional_vars is not None else set()
            found |= _reads(statement.body, assigned)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            found |= loads(statement.iter) - assigned - _local_names(ast.Expr(statement.iter))
            assigned |= _stored(ast.Expr(statement.target))
            found |= _reads(statement.body, assigned) | _reads(statement.orelse, assigned)
        else:
            found |= loads(statement) - assigned - _local_names(statement)
            assigned |= _stored(statement)
    return found


def _local_names(statement: ast.stmt) -> set[str]:
    """Names local to the comprehensions, lambdas and functions in ``statement`` (``a`` in ``{a for held in w for a in
    held}``): reading them reads no notebook variable of that name.

    >>> sorted(_local_names(ast.parse("w = {a: 1 for held in where.values() for a in held}").body[0]))
    ['a', 'held']
    >>> sorted(_local_names(ast.parse("def pick(rs):\\n    best = None\\n    for r in rs:\\n        best = r\\n    return best").body[0]))
    ['best', 'r', 'rs']
    >>> sorted(_local_names(ast.parse("def bump():\\n    global n\\n    n = n + 1").body[0]))
    []
    """
    local: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.comprehension):
            local |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            local |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None}
            if not isinstance(node, ast.Lambda):  # a name the function assigns is its own (unless declared global)
                declared = {name for n in ast.walk(node) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
                stored = {n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                local |= stored - declared
    return local


def gone_path(value: Any) -> bool:
    """True for an absolute path (a str) that is not there any more (a clean-up cell removed it)."""
    return isinstance(value, str) and os.path.isabs(value) and "\n" not in value and not os.path.exists(value)


def cell_of(history: Iterable[str], pattern: str) -> int | None:
    """The execution number of the last cell in ``history`` (IPython's ``In``) that matches ``pattern``.

    >>> cell_of(["", "x = 1", "y = x.persist()", "print(y)"], r"^\\s*y\\s*=")
    2
    """
    found = None
    for number, source in enumerate(history):
        if re.search(pattern, source or "", flags=re.MULTILINE):
            found = number
    return found


def cells_making(history: list[str], name: str) -> list[int]:
    """The cells to run again, in order, to make ``name`` afresh: the last cell assigning it and, while that cell
    builds it from itself (``x = x.persist()``), the cell before that assigns it.

    >>> cells_making(["", "x = da.ones(9)", "x = x.persist()", "print(x)", "x = x.persist()"], "x")
    [1, 4]
    >>> cells_making(["", "x = da.ones(9)\\nx = x.persist()", "x = x[:4]", "x = da.ones(9)\\nx = x.persist()"], "x")
    [3]
    """
    target = re.compile(rf"(?:^|;)\s*(?:[\w, ]*,\s*)?{re.escape(name)}\s*(?:,[\w, ]*)?=(?!=)(?P<rhs>.*)$", flags=re.MULTILINE)
    found: list[int] = []
    for number in range(len(history) - 1, 0, -1):
        matches = list(target.finditer(history[number] or ""))
        if not matches or any(history[number] == history[n] for n in found):
            continue  # not this name, or the same cell run again (named once)
        found.insert(0, number)
        if not all(re.search(rf"\b{re.escape(name)}\b", m.group("rhs")) for m in matches):
            break  # made from other names once in the cell (04's `ddf = ...`, then `ddf = ddf.persist()`): nothing earlier is needed
    return found


def cells_needed(
    history: list[str],
    sources: list[int],
    namespace: Mapping[str, Any],
    is_needed: Callable[[str], bool],
    making: Callable[[str], list[int]],
) -> tuple[list[int], list[str]]:
    """The cells of ``history`` to run again before ``sources`` (execution numbers; 0 stands for the failing cell,
    ``history[-1]``): those that make the names these cells read for which ``is_needed(name)``, and, in turn, what
    those cells need. Returns them in execution order, and the names they make."""
    cells: set[int] = set()
    names: list[str] = []
    todo = list(sources)
    while todo:
        number = todo.pop()
        source = history[number] if number else (history[-1] if history else "")
        for name in sorted(names_read(source, namespace)):
            if name in names or not is_needed(name):
                continue
            names.append(name)
            for made_in in making(name):
                if made_in not in cells and made_in not in sources:
                    cells.add(made_in)
                    todo.append(made_in)
    return _in_order(history, cells, namespace, {n: making(n) for n in names}), names


def _in_order(history: list[str], cells: set[int], namespace: Mapping[str, Any], makers: dict[str, list[int]]) -> list[int]:
    """``cells`` in execution order, except that a cell comes after the cells that make what it reads (a frame made
    again since a result was made from it: the frame's cell first, then the result's)."""
    needs = {c: {m for name in names_read(history[c], namespace) for m in makers.get(name, []) if m in cells and m != c} for c in cells}
    ordered: list[int] = []
    while len(ordered) < len(cells):
        left = sorted(c for c in cells if c not in ordered)
        ready = [c for c in left if needs[c] <= set(ordered)]
        ordered.append((ready or left)[0])  # (a cycle: the earliest first)
    return ordered
