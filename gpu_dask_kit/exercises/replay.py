"""Evidence tied to the answer itself: find the cell that made an answer and run it again while watching the scheduler.

A plain value (a float, a Series) carries no trace of how it was made, and the scheduler's log holds every cell's
work: an earlier correct run, or an unrelated cell run after the answer, would otherwise be read as the answer's
doing. So for such answers the check takes the answer cell from IPython's input history (``In``: the latest cell
that assigns the answer name; the check's own call is left out), runs it again in a scratch copy of the notebook's
namespace, and judges what THAT made the cluster do (its graph submissions, from the scheduler's transition log),
and that it gives the same value as the answer. A value typed into the cell is seen as typed.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import gc
import io
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from distributed import futures_of, wait

from .evidence import MOVES, WAIT, all_runs, client_of, runs_with_keys, scheduler_now, wait_for_releases, wait_for_running

__all__ = [
    "Replay",
    "NotReplayed",
    "answer_cell",
    "typed_in",
    "rounding_in",
    "rounding_calls",
    "ROUNDING",
    "CUTTING",
    "changed_after",
    "nodes_making",
    "replay",
    "moves_only",
    "CELL",
    "LIMIT",
    "UNSAFE_CALLS",
]

#: Seconds the replay waits at most, first, for the client's "release these keys" messages (batched) to reach the scheduler.
SETTLE = 0.5

#: Seconds the check lets the answer cell run again (the exercises' answers take seconds on the notebooks' data).
LIMIT = 120.0

#: Calls the check never runs a second time: they end or change the cluster, start another, or write files.
UNSAFE_CALLS = frozenset(
    "close restart shutdown scale adapt retire_workers start_cluster register_plugin upload_file to_parquet to_csv "
    "to_hdf to_json to_zarr to_npy_stack write_text write_bytes open unlink remove rmtree system kill terminate".split()
)


class NotReplayed(Exception):
    """The answer cell was not run again (the message says why): the check says it could not judge, never "Correct"."""


#: Namespace entry ``check`` sets when it ran the reference solution itself (CI): that is then the answer cell.
CELL = "__answer_cell__"


@dataclass
class Replay:
    """What the answer cell did when the check ran it again, statement by statement: the graph submissions (runs) of
    each statement, which statements each name depends on, and the values the names got."""

    cell: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    steps: list[list[dict[str, Any]]] = field(default_factory=list)  # runs per top-level statement
    needs: dict[str, list[int]] = field(default_factory=dict)  # statements each name depends on
    reads: dict[str, dict[str, Any]] = field(default_factory=dict)  # per name: the objects its statements read
    earlier: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # statement -> the run that made what it persisted, held since

    def runs_for(self, name: str, made_earlier: bool = False) -> list[dict[str, Any]]:
        """The runs of the statements ``name`` depends on (what made its value), oldest first; ``made_earlier``: with,
        for a statement that persisted what the notebook still held, the run that made it (see :func:`_made_before`)."""
        needed = self.needs.get(name, range(len(self.steps)))
        return [run for i in needed for run in (self.earlier.get(i, []) if made_earlier else []) + self.steps[i]]

    def made_by(self, name: str) -> list[dict[str, Any]]:
        """The runs of the statements that store ``name`` themselves (not of those it reads from)."""
        body = ast.parse(self.cell).body
        return [run for i, node in enumerate(body) if name in _names(node)[0] for run in self.steps[i]]

    def working(self, name: str | None = None) -> list[dict[str, Any]]:
        """The runs (of ``name``'s statements, or all) that computed something, not only moved held data here."""
        return [r for r in (self.runs if name is None else self.runs_for(name)) if not moves_only(r)]


def _names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(names a statement stores or mutates through a method call, names it reads)."""
    stores: set[str] = set()
    loads: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (stores if isinstance(n.ctx, (ast.Store, ast.Del)) else loads).add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            stores.add(n.func.value.id)  # results.append(...), df.update(...): a change to that object
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            base = n.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                stores.add(base.id)  # r2s[f] = ..., obj.attr = ...: a change to that object (learner review 57)
    return stores, loads


def _depends(body: list[ast.stmt], name: str) -> list[int]:
    """The statements (indices) that made ``name``: those storing it, then those storing what they read, backwards."""
    needed, found = {name}, []
    for i in range(len(body) - 1, -1, -1):
        stores, loads = _names(body[i])
        if stores & needed:
            found.append(i)
            needed |= loads
    return sorted(found)


def nodes_making(tree: ast.Module, name: str) -> Iterator[ast.AST]:
    """Every node of the statements of ``tree`` that make ``name`` (:func:`_depends`), statement by statement."""
    for i in _depends(tree.body, name):
        yield from ast.walk(tree.body[i])


def moves_only(run: dict[str, Any]) -> bool:
    """True for a submission whose tasks only moved or assembled data (a plain ``.compute()`` of data)."""
    return all(p.startswith(MOVES) for p in run["prefixes"])


def _is_check(node: ast.stmt) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    func = getattr(call, "func", None)
    return isinstance(call, ast.Call) and getattr(func, "attr", getattr(func, "id", "")) in ("check", "solution")


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` in order, those inside ``for``/``with``/``if``/``try`` too (not inside functions)."""
    for node in body:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, block, None)
                if isinstance(inner, list):
                    yield from _statements(
                        [n for n in inner if isinstance(n, ast.stmt)] + [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body]
                    )


def _assigned(tree: ast.Module, name: str) -> ast.AST | None:
    """The value last assigned to ``name`` in ``tree``, at the top level or inside a loop, ``with``, ``if`` or ``try``
    (None: the cell does not assign it)."""
    value = None
    for node in _statements(tree.body):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(_binds(target, name) for target in targets):
            value = node
    return value


def _binds(target: ast.AST, name: str) -> bool:
    """True when assigning to ``target`` rebinds ``name`` itself (``name = ``, ``a, name = ``), not an attribute or an
    item of it (``name.index.name = "name"`` changes the value ``name`` holds, it does not make it)."""
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Starred):
        return _binds(target.value, name)
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds(t, name) for t in target.elts)
    return False


#: Cell and line magics whose code IPython runs as it is (``%%time``, ``%time``): the check reads the code inside.
TIMING_MAGICS = ("time", "timeit", "capture")


def _unmagic(node: ast.stmt) -> list[ast.stmt]:
    """The statements of ``node``; for ``get_ipython().run_cell_magic('time', '', code)`` (how ``In`` holds a ``%%time``
    cell) or ``run_line_magic('time', code)``, the statements of ``code``."""
    call = node.value if isinstance(node, ast.Expr) else None
    func = getattr(call, "func", None)
    if isinstance(call, ast.Call) and getattr(func, "attr", "") in ("run_cell_magic", "run_line_magic") and call.args:
        magic, code = call.args[0], call.args[-1]
        if isinstance(magic, ast.Constant) and magic.value in TIMING_MAGICS and isinstance(code, ast.Constant) and isinstance(code.value, str):
            inner = _parse(code.value)
            return inner.body if inner is not None else [node]
    return [node]


def _parse(source: str) -> ast.Module | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    tree.body = [inner for node in tree.body for inner in _unmagic(node) if not _is_check(inner)]
    return tree


def called_name(func: ast.expr) -> str:
    """The name a call is written with: ``filter`` for ``filter(...)``, ``filterfalse`` for ``itertools.filterfalse(...)``; '' otherwise."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def answer_cell(namespace: dict[str, Any], name: str | tuple[str, ...]) -> str | None:
    """The source of the latest cell in ``In`` that assigns ``name`` (or any of the names of a tuple: learner review 49,
    04-1's placeholder cell `demean = ...` was taken for the answer cell of `demean` while a later cell made both) (the
    check's own call removed); None outside IPython."""
    if isinstance(namespace.get(CELL), str):
        return namespace[CELL]
    history = namespace.get("In")
    if not isinstance(history, list):
        return None
    for source in reversed(history):
        tree = _parse(source) if isinstance(source, str) else None
        if tree is not None and any(_assigned(tree, one) is not None for one in ((name,) if isinstance(name, str) else name)):
            return ast.unparse(tree)
    return None


def evaluated_string(node: ast.AST) -> ast.expr | None:
    """The expression inside ``eval("...")`` / ``ast.literal_eval("...")`` written as a string; None otherwise.

    >>> ast.unparse(evaluated_string(ast.parse('eval("80_000_000 / 4294967296")', mode="eval").body))
    '80000000 / 4294967296'
    """
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return None
    if called_name(node.func) not in ("eval", "literal_eval"):
        return None
    try:
        return ast.parse(node.args[0].value.strip(), mode="eval").body
    except SyntaxError:
        return None


def typed_in(cell: str, name: str, holds: Any = Ellipsis) -> bool:
    """True when the cell's last assignment to ``name`` is a value written out (a literal, or arithmetic on literals,
    also inside ``eval("...")``). With ``holds`` (the value ``name`` holds now), a written-out value that is not that
    value did not make it: the branch that ran was another one (``try: n = ... except ...: n = 0``, learner review 55).

    >>> typed_in("n = 41200", "n"), typed_in("n = len(p)", "n")
    (True, False)
    >>> typed_in("try:\\n    n = p.shape[1]\\nexcept Exception:\\n    n = 0", "n", holds=4)
    False
    """
    tree = _parse(cell)
    node = _assigned(tree, name) if tree is not None else None
    value = getattr(node, "value", None)
    if value is None or isinstance(node, ast.AugAssign):
        return False
    value = evaluated_string(value) or value
    if any(isinstance(n, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for n in ast.walk(value)):
        return False
    if holds is Ellipsis or any(isinstance(n, ast.Pow) for n in ast.walk(value)):
        return True  # (a power of literals is not worked out here: 9 ** 9 ** 9 would take the check minutes)
    try:
        written = eval(compile(ast.Expression(body=value), "<typed>", "eval"), {"__builtins__": {}})
        return bool(written == holds)
    except Exception:
        return True


#: Calls that round a value (as a function, ``np.round(v)``, or a method, ``v.round()``).
ROUNDING = ("round", "around", "floor", "ceil", "trunc", "rint")
#: Calls that round or cut a number to a whole one: the rounding calls and ``int``.
CUTTING = (*ROUNDING, "int")


def rounding_calls(cell: str | None, name: str) -> list[ast.Call]:
    """The rounding calls (:data:`ROUNDING`) in the statements of ``cell`` that make ``name``, outermost first.

    >>> [ast.unparse(c) for c in rounding_calls("n = len(p)\\nm = round(n, -2)\\nk = n", "m")]
    ['round(n, -2)']
    """
    tree = _parse(cell) if cell is not None else None
    found = []
    for node in nodes_making(tree, name) if tree is not None else ():
        func = node.func if isinstance(node, ast.Call) else None
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if isinstance(node, ast.Call) and called in ROUNDING:
            found.append(node)
    return found


def rounding_in(cell: str | None) -> int | None:
    """The decimals a ``.round(n)`` or ``round(value, n)`` in ``cell`` rounds to (the last one), or None.

    >>> rounding_in("m = ddf.y.max().compute().round(2)"), rounding_in("m = round(a / b, 3)"), rounding_in("m = a / b")
    (2, 3, None)
    """
    tree = _parse(cell or "")
    digits = None
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "round":  # x.round(n)
            args = node.args
        elif isinstance(node.func, ast.Name) and node.func.id == "round":  # round(x, n)
            args = node.args[1:]
        else:
            continue
        keyword = [k.value for k in node.keywords if k.arg in ("decimals", "ndigits")]
        given = args[0] if args else keyword[0] if keyword else None
        if given is None:
            digits = 0
        elif isinstance(given, ast.Constant) and isinstance(given.value, int):
            digits = given.value
    return digits


def _rooted_at(node: ast.AST, name: str) -> bool:
    """True for ``name``, ``name[...]``, ``name.loc[...]``, ``name.values``: an expression that reaches into ``name``."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def changed_after(cell: str | None, name: str) -> str | None:
    """The first line after the cell's last binding of ``name`` that writes values into it (``name[:] = ...``,
    ``name.loc[...] += ...``, ``name.update(...)``), as written; None: nothing does. A changed label
    (``name.index.name = "name"``) is not a change of values.

    >>> changed_after("m = ddf.y.max().compute()\\nm[:] = pdf.y.max()", "m"), changed_after("m = a.compute()\\nm.index.name = 'n'", "m")
    ('m[:] = pdf.y.max()', None)
    """
    tree = _parse(cell or "")
    if tree is None:
        return None
    statements = list(_statements(tree.body))
    bound = [i for i, node in enumerate(statements) if any(_binds(t, name) for t in _targets(node))]
    for node in statements[bound[-1] + 1 :] if bound else []:
        writes = [t for t in _targets(node) if isinstance(t, ast.Subscript) and _rooted_at(t, name)]
        call = node.value if isinstance(node, ast.Expr) else None
        updates = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update" and _rooted_at(call.func.value, name)
        if writes or updates:
            return ast.unparse(node)
    return None


#: Methods that change a result's values (not its type, place or labels): ``m = m.fillna(0)`` after the aggregation.
VALUE_CHANGES = frozenset(
    "fillna clip round abs where mask replace apply map transform cumsum cummax cummin cumprod diff shift rank add sub mul "
    "div truediv floordiv mod pow radd rsub rmul rdiv rtruediv interpolate".split()
)


#: Calls that make a result (an aggregation, or bringing it here): a value change chained after one changes the result.
AGGREGATING = frozenset("max min mean sum median std var count size agg aggregate first last nunique compute result gather".split())


def rebound_with_other_values(cell: str | None, name: str) -> str | None:
    """How the cell changes ``name``'s values after making them, as written, or None: its last binding makes ``name``
    from ``name`` itself with other values (a method of :data:`VALUE_CHANGES`, or arithmetic on it), or the statement
    making it chains such a method after an aggregation (``....max().compute().clip(upper=1)``); ``m = m.compute()``
    keeps the values.

    >>> rebound_with_other_values("m = g.mean().compute()\\nm = m.fillna(0).clip(-1, 1)", "m")
    'm = m.fillna(0).clip(-1, 1)'
    >>> rebound_with_other_values("m = g.y.max().compute().clip(upper=0.99)", "m")
    '.clip(upper=0.99) after .compute()'
    >>> rebound_with_other_values("m = g.mean()\\nm = m.compute()", "m"), rebound_with_other_values("m = a + 1", "m")
    (None, None)
    """
    bound = _bindings(cell, name)
    last = bound[-1] if bound else None
    value = getattr(last, "value", None)
    if last is None or value is None:
        return None
    if len(bound) > 1 and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
        for node in ast.walk(value):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VALUE_CHANGES and _rooted_in(node.func.value, name):
                return ast.unparse(last)
            if isinstance(node, ast.BinOp) and (_rooted_in(node.left, name) or _rooted_in(node.right, name)):
                return ast.unparse(last)
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VALUE_CHANGES:
            receiver = node.func.value
            if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr in AGGREGATING:
                arguments = ", ".join([ast.unparse(a) for a in node.args] + [ast.unparse(k) for k in node.keywords])
                return f".{node.func.attr}({arguments}) after .{receiver.func.attr}()"
    return None


def rebound_after_persist(cell: str | None, name: str) -> str | None:
    """The cell's last binding of ``name`` when an earlier one persisted it and this one does not, as written; None
    otherwise.

    >>> rebound_after_persist("f = ddf.persist()\\nm = f.x.mean().compute()\\nf = ddf", "f"), rebound_after_persist("f = ddf.persist()", "f")
    ('f = ddf', None)
    """
    bound = _bindings(cell, name)

    def persists(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) == "persist" for n in ast.walk(node))

    if len(bound) > 1 and any(persists(node) for node in bound[:-1]) and not persists(bound[-1]):
        return ast.unparse(bound[-1])
    return None


def _bindings(cell: str | None, name: str) -> list[ast.stmt]:
    """The statements of ``cell`` that bind ``name`` itself, in order (inside ``for``/``with``/``if`` too); [] when the
    cell does not parse."""
    tree = _parse(cell or "")
    return [node for node in _statements(tree.body) if any(_binds(t, name) for t in _targets(node))] if tree is not None else []


def _rooted_in(node: ast.AST, name: str) -> bool:
    """True when the chain of calls, attributes and items ``node`` ends at ``name`` (``name.fillna(0).clip``)."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and node.id == name


def _targets(node: ast.AST) -> list[ast.AST]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []


def unsafe_call(tree: ast.Module) -> str | None:
    """The first call in ``tree`` the check will not run twice (see ``UNSAFE_CALLS``), or None.

    >>> unsafe_call(ast.parse("x = a.sum()\\nsession.close()"))
    'close'
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in UNSAFE_CALLS:
                return name
    return None


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Stop the re-run after ``seconds`` (a timer signal: only in the main thread, where a kernel runs cells)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise NotReplayed(f"running it again took longer than {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, stop)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)  # a timer already set (e.g. pytest-timeout's) is put back after
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


def _scratch(namespace: dict[str, Any], tree: ast.Module) -> dict[str, Any]:
    """A copy of ``namespace`` for the re-run: plain containers the cell stores into or appends to are copied (deep where
    that works), so the re-run does not change the learner's objects a second time; everything else is shared."""
    changed = _names(tree)[0]
    scratch = {k: v for k, v in namespace.items() if k != CELL}  # names the cell does not assign keep their values
    for name in changed & scratch.keys():
        if type(scratch[name]) in (list, dict, set):
            try:
                scratch[name] = copy.deepcopy(scratch[name])
            except Exception:
                scratch[name] = copy.copy(scratch[name])
    return scratch


def replay(namespace: dict[str, Any], names: tuple[str, ...], watch: bool = True) -> Replay | None:
    """Run the answer cell of ``names[0]`` again, statement by statement, on a scratch copy of ``namespace``.

    None where there is no cell (not IPython) or, with ``watch`` (read the scheduler's log), no cluster. Raises the
    cell's own exception (the judge turns it into a hint). What the cell prints is swallowed.
    """
    cell = answer_cell(namespace, names[0])
    client = client_of(namespace) if watch else None
    tree = _parse(cell) if cell is not None else None
    if tree is None or (watch and client is None):
        return None
    call = unsafe_call(tree)
    if call is not None:
        raise NotReplayed(f"it also calls {call}(...), which the check does not run a second time")
    scratch = _scratch(namespace, tree)
    if watch:
        gc.collect()  # futures nobody holds any more are released ...
        wait_for_releases(client, SETTLE)  # ... and their release reaches the scheduler: else a result in memory would not run again
        wait_for_running(client, WAIT)  # the cell's first run, if it returned before its tasks ended, has ended
    marks: list[float] = []
    persisted: dict[int, list[Any]] = {}  # statement -> the keys it persisted
    with _time_limit(LIMIT), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), _quiet_client_log():
        for node in tree.body:
            marks.append(scheduler_now(client) if watch else 0.0)
            exec(compile(ast.Module(body=[node], type_ignores=[]), "<your answer cell, run again by the check>", "exec"), scratch)
            held = [f for target in _names(node)[0] for f in _futures(scratch.get(target))]
            if held:  # a persist in this statement: its tasks belong to it
                persisted[len(marks) - 1] = [f.key for f in held] if watch else []
                with contextlib.suppress(TimeoutError):
                    wait(held, timeout=WAIT)
    runs = all_runs(client, since=marks[0]) if marks and watch else []
    bounds = [*marks[1:], float("inf")]
    steps = [[r for r in runs if start <= r["time"] < end] for start, end in zip(marks, bounds, strict=True)]
    earlier = {i: _made_before(client, keys, marks[0]) for i, keys in persisted.items() if keys and not _made_again(steps[i], keys)}
    needs = {n: _depends(tree.body, n) for n in names}
    reads = {n: {r: scratch[r] for i in needs[n] for r in _names(tree.body[i])[1] if r in scratch} for n in names}
    return Replay(ast.unparse(tree), runs, {n: scratch.get(n, Ellipsis) for n in names}, steps, needs, reads, earlier)


def _made_before(client: Any, keys: list[Any], start: float) -> list[dict[str, Any]]:
    """The run that made ``keys`` before the replay began, when a statement persisted data the notebook still holds.

    Persisting what a variable of the notebook already holds (the same graph, so the same keys) runs nothing again: the
    scheduler keeps the results. The work is the run that made them, the cell's own first run (learner review 23:
    ``counts = ....size().persist()`` then ``rows_per_name = counts.compute()`` was told it read nothing)."""
    earlier = [r for r in runs_with_keys(client, keys) if r["time"] < start]
    return earlier[-1:]


def _made_again(step: list[dict[str, Any]], keys: list[Any]) -> bool:
    """True when a run of the statement made (or used) ``keys`` itself."""
    wanted = {str(k) for k in keys}
    return any(r["keys"] & wanted for r in step)


@contextlib.contextmanager
def _quiet_client_log() -> Any:
    """distributed's client logs to the stderr its handler captured at import, which redirect_stderr does not reach:
    while the check runs a cell again, its warnings ("Couldn't gather 11 keys, rescheduling") are the check's noise."""
    import logging

    logger = logging.getLogger("distributed.client")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _futures(value: Any) -> list[Any]:
    try:
        return list(futures_of(value))
    except Exception:
        return []
