"""An answer whose Dask part contributes nothing: ``(a ** 2).sum() * 0 + formula`` computes on the workers, but its value
comes from the notebook-side part (a closed-form formula, plain Python, NumPy on values already here, pandas on a
gathered frame, typed literals split in two).

The statements that make an answer are read as written: a part multiplied by a zero written out (``* 0``, ``0.0 *``,
``* (1 - 1)``, ``* False``, ``.mul(0)``, a name set to 0 in the cell), raised to the power 0, or added and subtracted
again (``- x + x``, ``x + c - x``) contributes nothing to the value, whatever it computed. Any exercise can call
:func:`require_contributes` with its answer cell and answer name.

>>> zeroing(ast.parse("t = (a ** 2).sum() * 0 + (N - 1) * N"), "t")
'multiplies part of the expression by 0 (`* 0`)'
>>> zeroing(ast.parse("t = (a ** 2).sum() * 1 + 0"), "t") is None
True
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np
from dask import is_dask_collection

from .hidden import literal
from .judging import host, is_lazy
from .model import Hint
from .replay import _assigned, _depends, _parse, nodes_making

__all__ = ["zeroing", "require_contributes", "require_not_worked_out", "require_no_chooser", "only_decides"]

#: Calls that wrap a value without changing it (for "the same part, added then subtracted").
_WRAPPERS = frozenset({"float", "int", "compute", "item", "result"})

#: Methods that multiply (pandas/cuDF ``Series.mul``, NumPy ``np.multiply``).
_MULTIPLY = frozenset({"mul", "multiply", "__mul__", "rmul"})


def _number(node: ast.AST, zeros: set[str]) -> float | None:
    """The number a literal expression writes out (a name in ``zeros`` is 0; ``False`` is 0); None for anything else."""
    if isinstance(node, ast.Name) and node.id in zeros:
        return 0.0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("float", "int") and len(node.args) == 1:
        return _number(node.args[0], zeros)
    if not isinstance(node, ast.expr) or not literal(node):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<written>", "eval"), {"__builtins__": {}})  # literals only (checked)
    except Exception:
        return None
    return float(value) if isinstance(value, (int, float)) else None


def _terms(node: ast.AST, sign: int = 1) -> list[tuple[int, ast.AST]]:
    """The signed terms of a chain of sums (``a - b + c``: (+1, a), (-1, b), (+1, c))."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = -sign if isinstance(node.op, ast.Sub) else sign
        return _terms(node.left, sign) + _terms(node.right, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _terms(node.operand, -sign if isinstance(node.op, ast.USub) else sign)
    return [(sign, node)]


def _plain(node: ast.AST) -> str:
    """``node`` without the wrappers that keep its value (``float(x.compute())`` reads as ``x``), for comparing terms."""
    while isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in _WRAPPERS and len(node.args) == 1:
            node = node.args[0]
        elif isinstance(func, ast.Attribute) and func.attr in _WRAPPERS and not node.args:
            node = func.value
        else:
            break
    return ast.dump(node)


def _cancelled(node: ast.AST) -> bool:
    """True when a chain of sums adds and subtracts the same computed part (``- x + x``, ``x + c - x``)."""
    terms = [(sign, _plain(t)) for sign, t in _terms(node) if not literal(t)]
    return any(sign == 1 and (-1, text) in terms for sign, text in terms)


def _zero(node: ast.AST, zeros: set[str]) -> bool:
    """True for a factor that is 0 as written: a literal 0, a product with such a factor, or ``x - x``."""
    if _number(node, zeros) == 0:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _zero(node.left, zeros) or _zero(node.right, zeros)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        terms = [(sign, _plain(t)) for sign, t in _terms(node)]
        return all((-sign, text) in terms for sign, text in terms)
    return False


def _why(node: ast.AST, zeros: set[str]) -> str | None:
    """What one expression node does that leaves a computed part out of the value; None when it does none of that."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for zero, other in ((node.left, node.right), (node.right, node.left)):
            if _zero(zero, zeros) and not literal(other):
                return "multiplies part of the expression by 0 (`* 0`)"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MULTIPLY:
        if any(_zero(arg, zeros) for arg in node.args):
            return f"multiplies part of the expression by 0 (`.{node.func.attr}(0)`)"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right, zeros) == 0 and not literal(node.left):
        return "raises part of the expression to the power 0 (`** 0`: always 1)"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _cancelled(node):
        return "adds a part of the expression and subtracts it again (`- x + x`)"
    return None


def zeroing(tree: ast.Module, name: str) -> str | None:
    """How the statements of ``tree`` that make ``name`` leave a computed part out of its value (None: they do not)."""
    found = _zeroed(tree, name)
    return found[0] if found else None


def _zeroed(tree: ast.Module, name: str) -> tuple[str, ast.AST] | None:
    """(how, the expression node that does it) for :func:`zeroing`."""
    body = [tree.body[i] for i in _depends(tree.body, name)]
    zeros = {t.id for s in body if isinstance(s, ast.Assign) and _number(s.value, set()) == 0 for t in s.targets if isinstance(t, ast.Name)}
    for statement in body:
        for node in ast.walk(statement):
            why = _why(node, zeros)
            if why:
                return why, node
    return None


def _read(node: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node is not None else set()


def _free(node: ast.AST | None) -> set[str]:
    """The names ``node`` reads from outside itself: :func:`_read` without those it binds (see :func:`_bound_inside`)."""
    return _read(node) - _bound_inside(node)


def _made_earlier_in_cell(tree: ast.Module, name: str, left_out: ast.AST | None) -> list[str]:
    """The names the rest of the expression making ``name`` reads (what ``left_out`` does not), when every one of them
    is assigned by an earlier statement of the cell and nothing else is read (a literal would be a typed value)."""
    node = _assigned(tree, name)
    value = getattr(node, "value", None)
    if node is None or value is None:
        return []
    zeroed = {id(n) for n in ast.walk(left_out)} if left_out is not None else set()
    # the names read outside the zeroed part (learner review 48: `m.copy() * 0 + m` reads m in both)
    rest = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in zeroed}
    if not rest or any(isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and n.value != 0 for n in ast.walk(value) if id(n) not in zeroed):
        return []
    before = tree.body[: tree.body.index(node)] if node in tree.body else []
    stored = {n.id for st in before for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return sorted(rest) if rest <= stored else []


def _other_dask(tree: ast.Module, name: str, left_out: ast.AST | None, namespace: dict[str, Any]) -> list[str]:
    """The Dask collections the rest of the expression making ``name`` reads (what ``left_out`` does not read), in order."""
    value = getattr(_assigned(tree, name), "value", None)
    rest = _free(value) - _read(left_out)  # (learner review 51: `for x in range(N)` is no Dask x)
    return sorted(n for n in rest if is_dask_collection(namespace.get(n)))


def _bound_inside(node: ast.AST | None) -> set[str]:
    """The names ``node`` binds itself: comprehension targets and lambda parameters (``sum(x * x for x in range(N))``).

    >>> sorted(_bound_inside(ast.parse("sum(x * x for x in range(N)) + f(lambda y: y)", mode="eval")))
    ['x', 'y']
    """
    if node is None:
        return set()
    comps = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    bound = {n.id for c in ast.walk(node) if isinstance(c, comps) for g in c.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    return bound | {a.arg for c in ast.walk(node) if isinstance(c, ast.Lambda) for a in c.args.args}


def _rest_reads_the_cluster(tree: ast.Module, name: str, term: str, namespace: dict[str, Any]) -> bool:
    """True when a term of the sum that makes ``name``, other than ``term``, reads a Dask collection or computes
    (``(a ** 2).sum() + a[:0].sum()``: the zero term is padding, not a notebook-side value in disguise; review 23)."""
    value = getattr(_assigned(tree, name), "value", None)
    for _, other in _terms(value) if isinstance(value, ast.expr) else []:
        if ast.unparse(other) == term:
            continue
        reads = _free(other)
        computes = any(isinstance(n, ast.Attribute) and n.attr in ("compute", "result", "persist") for n in ast.walk(other))
        if computes or any(is_lazy(namespace.get(r)) for r in reads):
            return True
    return False


def _rest_computes(tree: ast.Module, name: str, left_out: ast.AST, namespace: dict[str, Any]) -> bool:
    """True when the sum that makes ``name`` has a term besides the one holding ``left_out`` that reads the cluster
    (``(a ** 2).sum() + 0 * a.sum() + 1 - 1``: the value comes from the workers, the zeroed part is padding)."""
    value = getattr(_assigned(tree, name), "value", None)
    terms = [t for _, t in (_terms(value) if isinstance(value, ast.expr) else [])]
    holding = [t for t in terms if any(n is left_out for n in ast.walk(t))]
    return len(holding) == 1 and any(_on_workers(t, namespace) for t in terms if t is not holding[0])


def _on_workers(term: ast.AST, namespace: dict[str, Any]) -> bool:
    """True when ``term`` is a Dask expression (it reads a Dask collection and computes nothing itself) or ends in its
    computation (``(...).compute()``, ``float(f.result())``); False when something runs here after a compute
    (``ddf.compute().groupby(...)``: pandas in the notebook)."""
    while isinstance(term, ast.Call) and isinstance(term.func, ast.Name) and term.func.id in ("float", "int") and term.args:
        term = term.args[0]
    if isinstance(term, ast.Call) and isinstance(term.func, ast.Attribute) and term.func.attr in ("compute", "result"):
        return True
    if any(isinstance(n, ast.Attribute) and n.attr in ("compute", "result", "gather") for n in ast.walk(term)):
        return False
    return any(is_lazy(namespace.get(name)) for name in _free(term))  # (learner review 52: `for x in range(N)` beside a Dask x)


def zero_valued_term(tree: ast.Module, name: str, namespace: dict[str, Any]) -> str | None:
    """A term of the sum that makes ``name`` which reads the cluster (a Dask collection, or ``.compute()``) and is 0
    here, evaluated: ``(a**2).sum() // N**3 + formula``, ``... % 1``, ``... * a[0]``; None otherwise. Terms are
    evaluated in ``namespace`` (expressions of an answer cell the learner ran; nothing is assigned)."""
    node = _assigned(tree, name)
    value = getattr(node, "value", None)
    terms = _terms(value) if isinstance(value, ast.expr) else []
    if len(terms) < 2:
        return None
    for _, term in terms:
        if not isinstance(term, ast.expr):
            continue
        reads = _free(term)
        computes = any(isinstance(n, ast.Attribute) and n.attr in ("compute", "result") for n in ast.walk(term))
        if not (computes or any(is_lazy(namespace.get(r)) for r in reads)):
            continue
        try:
            got = eval(compile(ast.Expression(term), "<term>", "eval"), namespace)
            got = got.compute() if is_lazy(got) else got
            zero = bool(np.all(np.asarray(host(got), dtype=float) == 0))
        except Exception:
            continue
        if zero:
            return ast.unparse(term)
    return None


def require_contributes(cell: str | None, name: str, namespace: dict[str, Any] | None = None) -> None:
    """A :class:`Hint` when the answer cell's statements that make ``name`` zero out a part of its expression (see
    :func:`zeroing`), or a term of it that reads the cluster is 0 here (:func:`zero_valued_term`, with ``namespace``):
    that part (the Dask computation) then contributes nothing, and the value comes from the rest."""
    tree = _parse(cell) if cell is not None else None
    found = _zeroed(tree, name) if tree is not None else None
    why, left_out = found if found else (None, None)
    if why is None and tree is not None and namespace is not None:
        term = zero_valued_term(tree, name, namespace)
        same_data = term is not None and not _other_dask(tree, name, ast.parse(term, mode="eval"), namespace)
        if term is not None and same_data and _rest_reads_the_cluster(tree, name, term, namespace):
            raise Hint(
                f"your answer cell adds a term to {name} that is 0 here (made from the data, then emptied: a slice of "
                f"nothing, a floor division, a remainder): it adds nothing, and the rest of the expression computes on "
                f"the workers. Remove that term, so that one Dask expression alone makes {name}."
            )
        # the term itself is not quoted: it holds the right Dask expression, which a hint must not show
        why = "adds a Dask part that is 0 here (a factor, a floor division or a remainder made it 0)" if term is not None else None
        left_out = ast.parse(term, mode="eval") if term is not None else None
    if why is None and tree is not None and namespace is not None and (_one_factor(tree, name, namespace) or _zero_pair(tree, name, namespace)):
        raise Hint(
            f"your answer cell multiplies {name} by a factor that is 1 here, or adds terms that are 0 here, made from a "
            "number written out (such as `(n // 2)` or `+ n - 8`, with n the count it stands for): it only holds while "
            "that typed number matches this cluster or "
            f"data. Remove the factor, and let the computation alone make {name}."
        )
    if not why:
        return
    earlier = _made_earlier_in_cell(tree, name, left_out) if tree is not None else []
    if earlier:  # (learner review 24: `col_sums_local = col_sums_local + 0 * to_host(x.sum(axis=0).compute())`)
        made = " and ".join(f"`{n}`" for n in earlier)
        raise Hint(
            f"your answer cell {why}: that part adds nothing, and the value of {name} is {made} as an earlier line of "
            f"the cell made it. Remove the part that contributes nothing, so that the cell shows how {name} is made."
        )
    others = _other_dask(tree, name, left_out, namespace) if tree is not None and namespace is not None else []
    if others and namespace is not None and left_out is not None and not _dask_in(left_out, namespace, set()):
        raise Hint(  # (learner review 44: `(a ** 2).sum() + 0 * N`: the zeroed part is no Dask part)
            f"your answer cell {why}: that part adds nothing to {name}, and the rest of the expression computes on the "
            f"workers. Remove the part that contributes nothing, so that the computation alone makes {name}."
        )
    if others:  # the rest computes on the workers too, but from other data than the part that is left out
        source = " and ".join(f"`{n}`" for n in others)
        raise Hint(
            f"the Dask part of your answer contributes nothing to {name}: your answer cell {why}, so the value comes from "
            f"the rest of the expression, which computes from {source}. Where to look: make {name} from one Dask "
            f"expression on the data the question names, and remove the part that contributes nothing."
        )
    value = getattr(_assigned(tree, name), "value", None) if tree is not None else None
    inside = isinstance(value, ast.expr) and len(_terms(value)) == 1  # the zeroed part sits inside a call, not beside a term
    if "subtracts it again" in why and isinstance(value, ast.expr) and namespace is not None:  # (learner reviews 40-43)
        signed = [(sign, ast.unparse(t), t) for sign, t in _terms(value)]  # `(a ** 2).sum() + a.sum() - a.sum()`: the
        kept = [t for sign, text, t in signed if (-sign, text) not in {(s, x) for s, x, _ in signed}]  # rest is Dask
        inside = bool(kept) and all(_on_workers(t, namespace) for t in kept)
    if inside or (tree is not None and namespace is not None and left_out is not None and _rest_computes(tree, name, left_out, namespace)):
        rest = "" if inside else ", and the rest of the expression computes on the workers"
        raise Hint(
            f"your answer cell {why}: that part adds nothing to {name}{rest}. Remove the part that contributes nothing "
            f"(and any terms that cancel out), so that the computation alone makes {name}."
        )
    raise Hint(
        f"the Dask part of your answer contributes nothing to {name}: your answer cell {why}, so the value comes from "
        "the rest of the expression, worked out in this notebook (a formula, plain Python, NumPy or pandas on data "
        f"already here, or numbers written out), not from the computation on the workers. Where to look: let the "
        f"Dask expression alone make {name}, and remove the part that works it out here."
    )


#: Builtins a notebook-side part may call (a formula in plain Python): anything else is not evaluated by the check.
_PLAIN_CALLS = frozenset({"sum", "range", "int", "float", "abs", "pow", "len", "max", "min", "round", "divmod"})


def _plain_value(value: Any) -> bool:
    """True for what a notebook-side formula reads: numbers, NumPy arrays, the numpy and math modules."""
    import math

    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float, np.integer, np.floating, np.ndarray)) or any(value is module for module in (np, math))


def require_not_worked_out(cell: str | None, name: str, namespace: dict[str, Any], expected: float, whole: bool = False) -> None:
    """A :class:`Hint` when a part of the expression that makes ``name`` uses no Dask and already gives ``expected`` (a
    closed-form formula or plain Python), the Dask part around it only passing it on or choosing it
    (``da.maximum((a**2).sum(), formula)``, ``da.where(a.sum() > 0, formula, 0)``). Only parts made of numbers, NumPy
    and the builtins in ``_PLAIN_CALLS`` are evaluated; literals alone are :func:`hidden.require_not_hidden`'s.
    ``whole``: the whole expression too (for an answer that is a number, not a lazy collection), except where it reads
    names the cell made with a computation (``num, den = dask.compute(...)``: their values came from Dask)."""
    tree = _parse(cell) if cell is not None else None
    value = getattr(_assigned(tree, name), "value", None) if tree is not None else None
    if value is None or tree is None:
        return
    computed = _assigned_from(tree, lambda n: getattr(n, "attr", getattr(n, "id", None)) in ("compute", "result", "gather"))
    for node in ast.walk(value):
        if (node is value and not whole) or not isinstance(node, (ast.BinOp, ast.Call)) or literal(node):
            continue
        names = _read(node)
        if names & computed:
            continue
        calls = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        attributes = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        if calls - _PLAIN_CALLS or attributes & {"compute", "persist", "result"} or not names:
            continue
        if not all(n in _PLAIN_CALLS or _plain_value(namespace.get(n)) for n in names - _comprehension_names(node)):
            continue
        try:
            got = eval(compile(ast.Expression(node), "<part>", "eval"), {"__builtins__": __builtins__}, dict(namespace))
            same = bool(np.isclose(float(got), float(expected), rtol=1e-12, atol=0))
        except Exception:
            continue
        if same:
            raise Hint(
                f"{name} is worked out in this notebook: a part of your expression uses no Dask (a formula, plain Python "
                "or NumPy) and already gives the answer, and the Dask part around it only passes that value on or picks "
                f"it. Where to look: let the Dask expression alone make {name}, and remove the part that works it out here."
            )


def _assigned_from(tree: ast.Module, computes: Callable[[ast.AST], bool]) -> set[str]:
    """The names the cell's top-level assignments bind from a statement with a node for which ``computes`` holds
    (``num, den = dask.compute(...)``: their values came from a computation, not from a formula here)."""
    return {
        t.id
        for statement in tree.body
        if isinstance(statement, ast.Assign) and any(computes(n) for n in ast.walk(statement))
        for target in statement.targets
        for t in ast.walk(target)
        if isinstance(t, ast.Name)
    }


def _comprehension_names(node: ast.AST) -> set[str]:
    """The loop variables of the comprehensions in ``node`` (``i`` in ``sum(i * i for i in range(N))``)."""
    return {t.id for c in ast.walk(node) if isinstance(c, ast.comprehension) for t in ast.walk(c.target) if isinstance(t, ast.Name)}


#: Calls that pick one of several values (or clip one): an answer that is ONE computation's value needs none of them.
_CHOOSERS = frozenset({"where", "maximum", "minimum", "fmax", "fmin", "max", "min", "clip", "select", "choose"})


def require_no_chooser(cell: str | None, name: str) -> None:
    """A :class:`Hint` when the statements that make ``name`` pick among values (``da.where(cond, a, b)``,
    ``da.maximum(a, b)``, ``max(a, b)``): for an exercise whose answer is one computation's value, the pick lets
    another value (a formula, a shortcut) stand in for it (learner review 11: 00-1 and 02-1 were "Correct" so)."""
    tree = _parse(cell) if cell is not None else None
    if tree is None:
        return
    for node in nodes_making(tree, name):
        func = node.func if isinstance(node, ast.Call) else None
        called = getattr(func, "attr", None) or getattr(func, "id", None)
        values = len(node.args) + len(node.keywords) if isinstance(node, ast.Call) else 0
        if called in _CHOOSERS and values >= 2:  # a pick among values; a.max() is a reduction
            raise Hint(
                f"your answer cell picks {name} among values ({called}(...)): the value it keeps may come from the "
                f"other side of that pick (a number written out, say), not from the computation. {name} is the value "
                "of one computation: remove the pick and let that computation alone make it."
            )


def _one_factor(tree: ast.Module, name: str, namespace: dict[str, Any]) -> bool:
    """True when a product in the statements making ``name`` has a factor that mixes a number written out with a
    value of the notebook and is 1 here (``* (len(info) // 2)``, ``* (ddf.npartitions // 8)``): a typed count in disguise.
    A factor of literals alone (``* 100 / 100``) or of no literal is not one."""
    for node in nodes_making(tree, name):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, (ast.Div, ast.FloorDiv))
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Mult)
        ):
            # x * len(cols) // 4: the last factor over the divisor is the factor of 1
            pairs: list[ast.expr] = [ast.BinOp(left=f, op=node.op, right=node.right) for f in (node.left.left, node.left.right)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            pairs = [node.left, node.right]
        else:
            continue
        for factor in pairs:
            numbers = [n for n in ast.walk(factor) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)]
            reads = [n for n in ast.walk(factor) if isinstance(n, ast.Name)]
            if not numbers or not reads or literal(factor) or not isinstance(factor, ast.BinOp):
                continue
            try:
                value = eval(compile(ast.fix_missing_locations(ast.Expression(factor)), "<factor>", "eval"), dict(namespace))
            except Exception:
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and value == 1:
                return True
    return False


#: Calls that bring a computation's result here: a part holding one of them used the cluster.
_COMPUTING = frozenset({"compute", "result", "gather", "persist"})


def _dask_in(node: ast.AST, namespace: dict[str, Any], computed: set[str]) -> bool:
    """True when ``node`` computes with Dask or reads a Dask collection, a future, or a name the cell computed."""
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in _COMPUTING:
            return True
        if isinstance(n, ast.Name) and (n.id in computed or is_dask_collection(namespace.get(n.id)) or hasattr(namespace.get(n.id), "key")):
            return True
    return False


def only_decides(cell: str | None, name: str, namespace: dict[str, Any]) -> str | None:
    """How the statement making ``name`` uses its Dask computation only to decide, not to make the value (learner
    review 12): ``X if <dask> else None``, ``<dask> and X``, ``[X for _ in [<dask>]]`` with X not reading the loop
    variable; None when it does not."""
    tree = _parse(cell) if cell is not None else None
    node = _assigned(tree, name) if tree is not None else None
    value = getattr(node, "value", None)
    if value is None or tree is None:
        return None
    computed = _assigned_from(tree, lambda n: isinstance(n, ast.Attribute) and n.attr in _COMPUTING)
    counts = _counting_loops(value)
    while isinstance(value, (ast.Subscript, ast.Call)) and not isinstance(value, ast.IfExp):  # [...][0], float(...)
        inner = value.value if isinstance(value, ast.Subscript) else (value.args[0] if len(value.args) == 1 and not value.keywords else None)
        if inner is None or not isinstance(inner, (ast.IfExp, ast.BoolOp, ast.ListComp, ast.GeneratorExp, ast.Subscript, ast.Call)):
            break
        value = inner
    own = _decided_on_arguments(value) | counts
    for node in ast.walk(value):
        found = _decides(node, namespace, computed) if id(node) not in own else None
        if found:
            return found
    return None


def _counting_loops(value: ast.AST) -> set[int]:
    """The loops that count what they run over (``sum(1 for _ in rows)``, ``len([r for r in rows])``): their items are
    the value, so a loop variable left unused is no sign of a decision (learner review 41: a row count by itertuples).

    >>> len(_counting_loops(ast.parse("n = sum(1 for _ in p.compute().itertuples())").body[0].value))
    1
    >>> len(_counting_loops(ast.parse("n = [41200 for _ in [p.compute()]][0]").body[0].value))
    0
    """
    found: set[int] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
            loop = node.args[0]
            one = isinstance(loop, (ast.ListComp, ast.GeneratorExp)) and isinstance(loop.elt, ast.Constant) and loop.elt.value == 1
            if (node.func.id == "sum" and one) or (node.func.id == "len" and isinstance(loop, ast.ListComp)):
                found.add(id(loop))
    return found


def _decided_on_arguments(value: ast.AST) -> set[int]:
    """The ``if ... else`` nodes inside a lambda that test only the lambda's own arguments and write out no value but
    an empty one (``lambda xs: sum(xs) if xs else 0``: a function the workers run on the values, which learner review
    18 had refused as a decision; ``... else 285`` is still a typed fallback).

    >>> tree = ast.parse("f = c.submit(lambda xs: sum(xs) if xs else 0, fs)").body[0].value
    >>> len(_decided_on_arguments(tree)), len(_decided_on_arguments(ast.parse("v = 1 if x.compute() else 0").body[0].value))
    (1, 0)
    """
    found: set[int] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda):
            args = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg) if a}
            for inner in ast.walk(node.body):
                if not isinstance(inner, ast.IfExp):
                    continue
                typed = [b for b in (inner.body, inner.orelse) if isinstance(b, ast.Constant) and b.value not in (0, None, "")]
                if not typed and {n.id for n in ast.walk(inner.test) if isinstance(n, ast.Name)} <= args:
                    found.add(id(inner))
    return found


def _looks_only(test: ast.AST) -> bool:
    """True when ``test`` computes nothing (no ``.compute()``-like call, no ``len``): it only looks at a name or at what a
    collection knows without computing (``f is not None``, ``ddf.npartitions > 1``)."""
    computes = any(isinstance(n, ast.Attribute) and n.attr in _COMPUTING for n in ast.walk(test))
    return not computes and not any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "len" for n in ast.walk(test))


#: What a Dask collection knows without computing anything.
_METADATA = frozenset({"npartitions", "numblocks", "chunks", "shape", "ndim", "dtype", "dtypes", "columns", "divisions", "known_divisions"})


def _metadata_only(test: ast.Compare) -> bool:
    """True when every name ``test`` reads is read for what it knows without computing (``ddf.npartitions > 1``,
    ``x.shape[0] == n``): the comparison computes nothing on the workers.

    >>> _metadata_only(ast.parse("ddf.npartitions > 1", mode="eval").body)
    True
    >>> _metadata_only(ast.parse("ddf.x.sum() > 0", mode="eval").body)
    False
    """
    known = {id(n) for a in ast.walk(test) if isinstance(a, ast.Attribute) and a.attr in _METADATA for n in ast.walk(a.value)}
    return _looks_only(test) and all(id(n) in known for n in ast.walk(test) if isinstance(n, ast.Name))


def _empty(node: ast.AST) -> bool:
    """True for ``None``, ``[]``, ``()``, ``{}``: a branch that gives no answer (not a typed one)."""
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    return isinstance(node, ast.Dict) and not node.keys


def _decides(value: ast.AST, namespace: dict[str, Any], computed: set[str]) -> str | None:
    """:func:`only_decides` for one expression node."""
    if isinstance(value, ast.IfExp):
        branches = (value.body, value.orelse)
        written = [b for b in branches if not _empty(b)]  # None, [], (): no answer written out
        if any(literal(b) or isinstance(b, ast.Constant) for b in written) or any(
            isinstance(b, ast.Call) and getattr(b.func, "id", None) in ("float", "int", "str", "eval") and b.args and isinstance(b.args[0], ast.Constant)
            for b in written
        ):
            return "has a fallback value written out in an `if ... else` (a typed answer, whichever branch runs, wherever it runs)"
        # a test that only looks at a collection (`f is not None`) computes nothing (review 47: `f.x.mean().compute() if f is
        # not None else None` was told it computes only in the condition)
        looks_only = _looks_only(value.test)
        both = _dask_in(value.body, namespace, computed) and _dask_in(value.orelse, namespace, computed)
        if _dask_in(value.test, namespace, computed) and looks_only and both:
            return "chooses with an `if ... else` between two computations, by a test on a name, not by the question"
        if _dask_in(value.test, namespace, computed) and not (looks_only and _dask_in(value.body, namespace, computed)):
            return "computes with Dask only in the condition of an `if ... else`, which decides which part gives the value"
        if _dask_in(value.body, namespace, computed) != _dask_in(value.orelse, namespace, computed):
            if any(_empty(b) for b in branches):  # (learner review 48: `....compute() if len(...) else None`)
                return "leaves the value None (or empty) in one part of an `if ... else`, by a test the question does not ask for"
            return "makes the value in one part of an `if ... else` without Dask"
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        for side in (value.left, value.right):
            if isinstance(side, ast.Compare) and _dask_in(side, namespace, computed):
                if _metadata_only(side):  # (learner review 48: `* (ddf.npartitions > 1)` reads metadata, computes nothing)
                    return f"multiplies by a test ({ast.unparse(side)}: True counts as 1, False as 0), so it holds only while that test does"
                return "computes with Dask only in a comparison it multiplies by (True counts as 1)"
            other = value.right if side is value.left else value.left
            # `== 2` names a count; `> 1` beside a value made here is a guard too (learner review 44); beside a typed
            # number (`3.5 * (medians[1] > 0)`) the typed number is the fault, said elsewhere
            equal = isinstance(side, ast.Compare) and (all(isinstance(op, (ast.Eq, ast.NotEq)) for op in side.ops) or not literal(other))
            if equal and any(isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) for n in ast.walk(side)):
                # (learner review 43: `* (session.n_workers == 2)`, a worker count written out in a test)
                test = ast.unparse(side)
                return f"multiplies by a test with a number written out ({test}: True counts as 1, False as 0), so it holds only while that test does"
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) in ("max", "min", "sorted"):
        key = next((k.value for k in value.keywords if k.arg == "key"), None)
        if isinstance(key, ast.Lambda):
            args = {a.arg for a in key.args.args}
            if not args & {n.id for n in ast.walk(key.body) if isinstance(n, ast.Name)} and value.args and _dask_in(value.args[0], namespace, computed):
                return "picks with a key that ignores the values (max/min/sorted then keep the first), so the Dask result need not be the one kept"
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) and len(value.values) > 1:
        if any(_dask_in(v, namespace, computed) for v in value.values[:-1]) and not _dask_in(value.values[-1], namespace, computed):
            return "computes with Dask only on the left of an `and`, and the value comes from its right"
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        loop: set[str] = set()
        for g in value.generators:  # enumerate(<dask>): the index says nothing of the values
            pair = isinstance(g.target, ast.Tuple) and len(g.target.elts) == 2
            enumerated = isinstance(g.iter, ast.Call) and getattr(g.iter.func, "id", None) == "enumerate"
            target = g.target.elts[1] if pair and enumerated and isinstance(g.target, ast.Tuple) else g.target
            loop |= {t.id for t in ast.walk(target) if isinstance(t, ast.Name)}
        feeds = any(_dask_in(g.iter, namespace, computed) for g in value.generators)
        used = {n.id for n in ast.walk(value.elt) if isinstance(n, ast.Name)}
        if feeds and not loop & used:
            return "computes with Dask only in what a loop runs over, and the loop's values are not used"
    return None


def _zero_pair(tree: ast.Module, name: str, namespace: dict[str, Any]) -> bool:
    """True when the sum that makes ``name`` has a term of the notebook's values and a number written out that cancel
    here (``len(p) + ddf.npartitions - 8``): a typed count in disguise (learner review 13)."""
    value = getattr(_assigned(tree, name), "value", None)
    terms = _terms(value) if isinstance(value, ast.expr) else []
    typed = [(sign, number) for sign, t in terms if (number := _number(t, set())) is not None and number != 0]
    for sign, term in terms:
        if literal(term) or not any(isinstance(n, ast.Name) for n in ast.walk(term)) or not isinstance(term, (ast.Attribute, ast.Call, ast.Name)):
            continue
        try:
            got = eval(compile(ast.Expression(term), "<term>", "eval"), dict(namespace))
        except Exception:
            continue
        if isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, bool):
            if any(sign * float(got) + s * n == 0 for s, n in typed):
                return True
    return False
