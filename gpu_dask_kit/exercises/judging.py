"""Shared pieces of the judges: lazy or not, host copies, sizes, and the evidence checks phrased as hints.

Hints teach in steps: first what sort of mistake it is, then where to look; never the answer itself (that is
``exercises.solution(key)``), so no hint quotes an expected value.
"""

from __future__ import annotations

import ast
from typing import Any

import dask
from distributed import TimeoutError as DaskTimeout
from distributed import default_client, futures_of, wait

from ..notebook.cellreads import names_read
from ..notebook.rerun import cause_of, explain_rerun, restart_steps
from .broken import not_made
from .evidence import client_of, computes, persisted, runs_touching, submissions
from .hidden import require_not_hidden
from .model import Hint
from .replay import NotReplayed, Replay, answer_cell, rebound_after_persist, replay, typed_in
from .stale import remake_steps
from .values import as_number, close

__all__ = [
    "MAX_TASKS",
    "is_lazy",
    "describe",
    "host",
    "require_persisted",
    "require_not_none",
    "require_one_submission",
    "require_computed",
    "require_worked_on",
    "streak",
    "same_value",
    "from_cell",
    "fresh",
]

MAX_TASKS = 2_000  # a graph bigger than this is not computed by a check: it is the mistake to explain


def is_lazy(value: Any) -> bool:
    """True for a Dask collection (something with a task graph).

    >>> import dask.array as da
    >>> is_lazy(da.ones(3)), is_lazy(3)
    (True, False)
    """
    return hasattr(value, "__dask_graph__") and callable(value.__dask_graph__)


def describe(value: Any) -> str:
    """ "a list", "an int": the type of a learner's answer, for a hint.

    >>> describe(3), describe("x")
    ('an int', 'a str')
    """
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' or name.startswith('nd') else 'a'} {name}"


def host(value: Any) -> Any:
    """A host (NumPy/pandas) copy of a computed value, whatever the backend."""
    from ..compute import to_host

    return to_host(value)


def require_persisted(value: Any, name: str, how: str, cell: str | None = None) -> None:
    """A :class:`Hint` unless ``value`` is a Dask collection whose own partitions are held in worker memory.
    ``cell``: the answer cell, for a persist it made and a later line that set ``name`` to something else."""
    require_not_none(value, name)
    again = rebound_after_persist(cell, name)
    if again is not None and not (is_lazy(value) and persisted(value) is None):  # (learner review 41: "nothing ran yet")
        raise Hint(
            f"your answer cell persists {name}, then sets {name} again (`{again}`), to something that is not the persisted "
            f"collection: the name no longer holds what persist() made. Keep the persisted collection in {name}."
        )
    if hasattr(value, "key") and hasattr(value, "result"):
        raise Hint(
            f"{name} is a Future (what client.compute or submit gives): ONE result object held by one worker, not a Dask "
            f"collection (an array or a frame) whose own pieces stay in worker memory and that you keep computing with. {how}"
        )
    if isinstance(value, tuple) and value and all(is_lazy(v) for v in value):
        raise Hint(
            f"{name} is a tuple of {len(value)} Dask collection{'s' if len(value) != 1 else ''}: dask.persist returns a tuple, "
            f"one item per collection it was given (each held on the workers). {name} should be the persisted collection itself."
        )
    if callable(value) and hasattr(value, "__self__") and is_lazy(value.__self__):  # x.persist, without its ()
        raise Hint(f"{name} is a method ({getattr(value, '__name__', 'it')}, not called): add the parentheses to call it.")
    if not is_lazy(value):
        raise Hint(
            f"{name} is {describe(value)}: its values came back to this notebook. The question wants them kept on the "
            f"workers, as a Dask collection that holds results instead of a recipe. {how}"
        )
    problem = persisted(value)
    if problem:
        raise Hint(f"{name} is not persisted on the workers: {problem}. {how}")


def require_computed(value: Any, name: str) -> None:
    """A :class:`Hint` when ``value`` is still a Dask collection or holds futures (not a computed result)."""
    require_not_none(value, name)
    if is_lazy(value) and futures_of(value) and not persisted(value):
        raise Hint(f"{name} is a Dask collection whose values are held on the workers: bring them to this notebook and store that.")
    if is_lazy(value):
        raise Hint(f"{name} is still lazy: it describes the computation, nothing ran yet. Ask Dask for the result and store that.")
    if hasattr(value, "key") and hasattr(value, "result"):
        raise Hint(f"{name} is a Future: the result is on a worker. Bring it to the notebook and store the value.")


def require_not_none(value: Any, name: str) -> None:
    """A :class:`Hint` for None: the answer cell assigned None (a call that returns nothing), not a value."""
    if value is None:
        raise Hint(
            f"{name} is None: your answer cell assigned None to it (a function or method that returns nothing, such as "
            f"print(...), .append(...) or a call with inplace=True, gives None). Assign the value itself."
        )


def require_one_submission(namespace: dict[str, Any], lazy: Any, name: str) -> None:
    """A :class:`Hint` unless every Delayed in ``lazy`` ran on the cluster in ONE graph submission (latest run)."""
    from dask.delayed import Delayed

    if not isinstance(lazy, (list, tuple)) or not lazy or not all(isinstance(d, Delayed) for d in lazy):
        raise Hint(
            f"{name} should be a list of delayed calls, built before anything runs (calling a delayed function gives "
            f"a Delayed object); it is {describe(lazy)}{' of ' + type(lazy[0]).__name__ if isinstance(lazy, (list, tuple)) and lazy else ''}."
        )
    client = client_of(namespace, *lazy)
    if client is None:
        raise Hint("there is no cluster to ask: run the notebook's set-up cells (the session), then your answer cell again.")
    if answer_cell(namespace, name) is not None:
        return  # the judge runs the answer cell again and reads what THAT does (the old record may have left the log)
    n, unrecorded = submissions(client, list(lazy))
    if unrecorded == sum(1 for _ in lazy) or n == 0:
        raise Hint(
            f"the scheduler has no record of running {name}: either it was computed some other way (in this notebook, or "
            f"from other objects than {name}), or the record left the scheduler's log (it keeps only its latest steps). "
            f"Run your answer cell again and this check right after; {name}'s own objects should be computed on the cluster."
        )
    if unrecorded:
        raise Hint(f"only some of {name} ran on the cluster ({unrecorded} did not): compute all of them.")
    if n > 1:
        raise Hint(
            f"{name} reached the scheduler in {n} separate submissions (separate compute calls): each waits for the "
            f"previous one, so their tasks cannot all run side by side. Hand ALL of them to Dask in a single call (see the lesson above)."
        )


def streak(runs: list[dict[str, Any]]) -> int:
    """How many of the latest runs did the same sort of work one right after another (a loop of computes)."""
    n, last = 1, runs[-1]
    for before, after in zip(reversed(runs[:-1]), reversed(runs[1:]), strict=True):
        if before["prefixes"] != last["prefixes"] or after["time"] - before["time"] > 2.0:
            break
        n += 1
    return n


def require_worked_on(namespace: dict[str, Any], data: Any, data_name: str, name: str) -> dict[str, Any]:
    """The latest graph submission that did work on ``data`` on the cluster; a :class:`Hint` in steps otherwise.

    Rejected: no such run (computed without Dask or from a copy), a run that only brought ``data`` to the
    notebook (the work then ran here), and a loop of many small computations.
    """
    client = client_of(namespace, data)
    if client is None:
        raise Hint("there is no cluster to ask: run the notebook's set-up cells (the session), then your answer cell again.")
    runs = [r for r in runs_touching(client, data) if r["prefixes"] - r["own"]]
    if not runs:
        raise Hint(
            f"the scheduler has no record of any computation on {data_name}: {name} was computed some other way (without "
            f"Dask, or from a copy in this notebook). Let the workers compute it from {data_name}."
        )
    last = runs[-1]
    if not computes(last):
        raise Hint(
            f"{name} was computed in this notebook: the latest use of {data_name} on the cluster only brought its data "
            "here, and the work ran after that, on one core. Ask Dask for the small result, computed by the workers."
        )
    repeats = streak(runs)
    if repeats >= 3:
        raise Hint(
            f"{data_name} was used in {repeats} separate computations, one after another, each answering a piece: "
            "one Dask expression (one graph) can answer the whole question in a single computation."
        )
    return last


#: Seconds two small lazy answers may take to compute for a comparison (a graph can be small and still carry a large
#: literal, e.g. a list of a million numbers inside one delayed call).
COMPARE_S = 60.0


def _computed_within(a: Any, b: Any, seconds: float) -> tuple[Any, Any] | None:
    """``dask.compute(a, b)`` on the cluster, or None when it takes longer than ``seconds`` (then cancelled)."""
    try:
        client = default_client()
    except ValueError:  # no cluster: the local scheduler
        x, y = dask.compute(a, b)
        return x, y
    futures = client.compute([a, b])
    try:
        wait(futures, timeout=seconds)
    except (TimeoutError, DaskTimeout):
        client.cancel(futures)
        return None
    x, y = client.gather(futures)
    return x, y


def same_value(a: Any, b: Any) -> bool:
    """True when two answers hold the same value (numbers to 1e-9, arrays and Series element by element, any order of index)."""
    import numpy as np

    if is_lazy(a) or is_lazy(b):  # a recipe: the same tasks (deterministic names), nothing computed here ...
        if not (is_lazy(a) and is_lazy(b)):
            return False
        if a.__dask_keys__() == b.__dask_keys__():
            return True
        # ... or, where the names differ by design (a function or lambda defined in the cell, an impure delayed call),
        # the same small result: both are computed and compared
        if len(a.__dask_graph__()) > MAX_TASKS or len(b.__dask_graph__()) > MAX_TASKS or type(a) is not type(b):
            return False
        both = _computed_within(a, b, COMPARE_S)
        return both is not None and not is_lazy(both[0]) and same_value(*both)
    if type(a) is not type(b) and not (as_number(a) is not None and as_number(b) is not None):
        return False
    if hasattr(a, "sort_index") and hasattr(a, "index"):
        a, b = host(a).sort_index(), host(b).sort_index()
        return list(a.index) == list(b.index) and bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True))
    if hasattr(a, "shape") and hasattr(a, "dtype") and getattr(a, "shape", ()) != ():
        return getattr(a, "shape", None) == getattr(b, "shape", None) and bool(np.allclose(host(a), host(b), equal_nan=True))
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return close(x, y, rel=1e-9, abs_=1e-12)
    try:
        return bool(a == b)
    except Exception:
        return False


def fresh(namespace: dict[str, Any], names: tuple[str, ...]) -> None:
    """A :class:`Hint` when the latest answer cell (in ``In``), run again in a scratch namespace, raises or no longer
    gives the values ``names`` hold (they are left from an earlier run). Typed-in values are fine here; no cluster is
    watched. Nothing is said outside IPython, or for a cell the check does not run twice."""
    try:
        found = replay(namespace, names, watch=False)
    except NotReplayed:
        return
    except Exception as err:
        raise _raised(err, namespace, names) from None
    if found is None:
        return
    for name in names:
        _require_same_as_rerun(namespace, found, name)


def _require_same_as_rerun(namespace: dict[str, Any], found: Replay, name: str) -> None:
    """A :class:`Hint` when ``name`` holds another value than the answer cell, run again, gives."""
    if not same_value(namespace[name], found.values.get(name)):
        history = namespace.get("In")
        just_ran = isinstance(history, list) and len(history) >= 2 and _same_code(str(history[-2]), found.cell)
        if just_ran:  # (learner review 19: the same sentence again after each run of the answer cell)
            raise Hint(
                f"{name} changes from one run of your answer cell to the next: you ran it just before this check, the "
                "check ran it again and got another value. It reads something that moves as the cluster works (memory "
                "in use at this moment, a timing, a random sample), not a fixed property the question asks for."
            )
        raise Hint(
            f"{name} is not what your answer cell gives now: the check ran that cell again and got another value "
            f"(the value {name} holds is left from an earlier run, or was changed by a later cell). Run your answer cell, then this check."
        )


def _same_code(a: str, b: str) -> bool:
    """True when two cells hold the same code, however it is laid out.

    >>> _same_code("x = 1  # one", "x = 1"), _same_code("x = 1", "x = 2"), _same_code("%time x", "x")
    (True, False, False)
    """
    try:
        return ast.unparse(ast.parse(a)) == ast.unparse(ast.parse(b))
    except SyntaxError:
        return a == b


def _raised(err: Exception, namespace: dict[str, Any], answer_names: tuple[str, ...]) -> Hint:
    first = (str(err).strip().splitlines() or [""])[0][:200]
    cell = answer_cell(namespace, answer_names[0])
    missing = not_made(f"{type(err).__name__}: {first}", namespace)
    if missing:
        return Hint(f"could not be checked: the check ran your answer cell again and it raised {type(err).__name__}: {missing}")
    gone = _files_gone(err, namespace, cell)
    if gone:
        return Hint(f"could not be checked: the check runs your answer cell again, and {gone}")
    if cause_of(err) in ("closed", "session-closed"):  # (learner review 49: 02-2's answer read the cluster after the close cell)
        start = restart_steps(namespace)
        return Hint(
            "could not be checked: the check runs your answer cell again, and it uses the cluster, which is closed (the "
            f"notebook's close cell ran, or the cluster stopped): re-run {start or 'the cell that starts the cluster'}, then "
            "your answer cell, then this check."
        )
    reads = names_read(cell, namespace) if cell is not None else None  # only the gone data the answer cell reads
    steps = remake_steps(namespace, reads) if "Cancelled" in type(err).__name__ or "lost dependenc" in first else None
    if steps:
        return Hint(
            "could not be checked: data your answer cell uses is gone from the cluster (cancelled, lost in a restart, or "
            f"made on a cluster closed since). Re-run {steps}, then your answer cell, then this check."
        )
    return Hint(
        f"could not be checked: the check runs your answer cell again to see what it does, and the cell raised "
        f"{type(err).__name__}: {first.rstrip('.')}. So the values your answer names hold may be left from an earlier run. "
        "Make the answer cell run cleanly on its own, run it, then this check."
    )


def _files_gone(err: Exception, namespace: dict[str, Any], cell: str | None) -> str | None:
    """For a file or folder the answer cell reads that is gone (a clean-up cell ran): the notebook's re-run sentence,
    naming the cells that write it (None for other errors)."""
    if cause_of(err) != "missing" or cell is None:
        return None
    history = [str(s) for s in namespace.get("In", [])] if isinstance(namespace.get("In"), list) else []
    sentence = explain_rerun(err, {**namespace, "In": [*history[:-1], cell]})  # as if the answer cell failed just now
    if not sentence:
        return None
    sentence = sentence.removeprefix("gpu-dask-kit: ").replace("this cell reads", "it reads")
    return sentence.replace(", then this cell.", ", then your answer cell, then this check.")


def from_cell(namespace: dict[str, Any], names: tuple[str, ...], values: tuple[str, ...] = ()) -> Replay | None:
    """What the answer cell of ``names`` does on the cluster, run again by the check (see ``replay``); None outside IPython.

    Each name in ``values`` must not be typed in, and must be what the cell gives now: a :class:`Hint` otherwise.
    """
    try:
        found = replay(namespace, names)
    except NotReplayed as reason:
        raise Hint(
            f"could not be checked: the check runs your answer cell again to see what it makes the cluster do, but {reason}. "
            f"Keep only the lines that make the answer in that cell, run it, then this check."
        ) from None
    except Exception as err:
        raise _raised(err, namespace, names) from None
    if found is None:
        return None
    for name in values:
        if found.values.get(name) is Ellipsis and namespace.get(name) is not Ellipsis:
            raise Hint(
                f"could not be checked: the latest cell in this notebook's history that assigns {name} leaves it `...` (the "
                f"unanswered cell), so the value {name} holds was made some other way (inside a function, by exec, or in a "
                f"cell since replaced). Write the code that makes {name} in the answer cell, run it, then this check."
            )
        if typed_in(found.cell, name, namespace[name]):
            raise Hint(
                f"{name} is typed into the answer cell (a value written out, not computed): the exercise is about how "
                f"the value is made. Compute {name} with Dask in that cell."
            )
        require_not_hidden(found.cell, name, namespace[name])
        _require_same_as_rerun(namespace, found, name)
    return found
