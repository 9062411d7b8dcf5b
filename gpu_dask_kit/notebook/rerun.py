"""One plain sentence for the errors a notebook gives when cells run again, out of order or after a close.

- the cluster restarted (``client.restart()``) or lost a worker: futures and persisted data made before are
  gone (``FutureCancelledError ... scheduler-restart`` / ``lost dependencies``);
- the cluster was closed (``session.close()``, a new ``start_cluster()`` with other options): its client
  says ``ClosedClientError`` and its futures ``RuntimeError: IOLoop is closed``;
- ``await future`` with a synchronous session: ``AttributeError: 'int' object has no attribute '__await__'``;
- a ``.compute()`` after the close cell: ``SessionClosedError`` (the kit's, see ``clients.closed_scheduler``);
- a cell that reads files a clean-up cell removed since: ``FileNotFoundError`` (``ValueError: No files satisfy ...``
  from ``read_parquet`` of a folder left empty);
- a closed session's address (``session.scheduler_address``): ``AttributeError: 'NoneType' object ...``.

:func:`explain_rerun` names the cells to re-run, in order: the one that made the current session (recorded by
:mod:`gpu_dask_kit.notebook.hints`, else found in IPython's ``In`` history) with the cells making the files it reads
that are gone, then the cells that make the stale (or gone) names the failing cell reads
(:mod:`gpu_dask_kit.notebook.cellreads`), never every stale name of the notebook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .cellreads import cell_of, cells_making, cells_needed, gone_path, names_read

__all__ = [
    "explain_rerun",
    "restart_cell",
    "restart_steps",
    "stale_names",
    "cell_of",
    "cells_making",
    "cause_of",
    "futures_in",
    "start_cell",
    "steps_to_remake",
]

_NO_FILES = "No files satisfy the `parquet_file_extension` criteria"  # dask.dataframe.read_parquet of an empty folder
_RESTARTED = ("scheduler-restart", "lost dependencies", "Scheduler has restarted", "lost dependency")


def cause_of(exc: BaseException) -> str | None:
    """What ``exc`` says happened: ``"restarted"``, ``"closed"``, ``"session-closed"``, ``"missing"``, ``"await"``, or None."""
    name, text = type(exc).__name__, _text(exc)
    if "CancelledError" in name and any(word in text for word in _RESTARTED):
        return "restarted"
    if name == "SessionClosedError":
        return "session-closed"
    if name == "ClosedClientError" or (isinstance(exc, RuntimeError) and "IOLoop is closed" in text):
        return "closed"
    if isinstance(exc, FileNotFoundError) or (isinstance(exc, ValueError) and _NO_FILES in text):
        return "missing"  # (dask's read_parquet of a folder left empty: a clean-up, or a writing cell that failed)
    if isinstance(exc, AttributeError) and "__await__" in text and _raised_in(exc, "distributed"):
        return "await"
    if isinstance(exc, AttributeError) and "'NoneType' object" in text and _raised_in(exc, "gpu_dask_kit", last=True):
        return "closed"  # a closed session's client has no scheduler any more (e.g. session.scheduler_address)
    return None


def _is_session(value: Any) -> bool:
    """True for a value whose class has an ``is_alive`` method (a session). Asked of the class: a Delayed answers any
    attribute with another (callable) Delayed, whose truth raises TypeError.

    >>> import dask
    >>> _is_session(dask.delayed(abs)), _is_session(None)
    (False, False)
    """
    return callable(getattr(type(value), "is_alive", None))


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


def _raised_in(exc: BaseException, package: str, last: bool = False) -> bool:
    """True when a frame of ``exc``'s traceback (with ``last``: its innermost one) is in ``package``'s files."""
    tb, files = exc.__traceback__, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return any(f"{os.sep}{package}{os.sep}" in f for f in (files[-1:] if last else files))


def futures_in(value: Any) -> list[Any]:
    """The futures ``value`` holds: a Future, a list of them, or a persisted collection's (empty for anything else)."""
    try:
        from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
        from distributed import Future, futures_of
    except ImportError:
        return []
    if isinstance(value, Future):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Future) for v in value):
        return list(value)
    if not hasattr(value, "__dask_graph__"):
        return []
    try:
        graph = getattr(value, "dask", None)
    except Exception:  # a graph that cannot be built (learner review 26: a groupby-transform frame raised TypeError here)
        return []
    if isinstance(graph, HighLevelGraph):  # an array or Delayed: held data sits in materialized layers; the others
        mappings = (layer.mapping.values() for layer in graph.layers.values() if isinstance(layer, MaterializedLayer))
        return [v for mapping in mappings for v in mapping if isinstance(v, Future)]  # would be built first (slow when big)
    try:
        return list(futures_of(value))
    except Exception:
        return []


def stale_names(namespace: Mapping[str, Any], cause: str) -> list[str]:
    """Variables holding futures (or persisted collections) that a restart cancelled or a close orphaned."""
    names = []
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in ("In", "Out"):
            continue
        futures = futures_in(value)
        if cause == "restarted" and any(f.status in ("cancelled", "lost", "error") for f in futures):
            names.append(name)
        elif cause == "closed" and any(f.client.status in ("closed", "closing") for f in futures):
            names.append(name)
    return names


def start_cell(history: list[str], started_in: int | Mapping[str, int] | None = None, reads: Iterable[str] = ()) -> int | None:
    """The cell that made the session the failing cell uses: ``started_in`` (recorded after each cell by
    :mod:`gpu_dask_kit.notebook.hints`: for each variable holding a session, the cell that put it there, and under
    ``""`` the cell that made the kit's current session), the latest of those the failing cell ``reads``; else the
    last cell whose own line (not one in a loop or branch) does ``session = ...start_cluster(``, else any that
    calls ``start_cluster(``. A failing cell that ran before gets the cell that started the cluster it ran on then.

    >>> start_cell(["", "session = kit.start_cluster()", "x = 1", "session = kit.start_cluster()", "y.compute()"], {"": 1})
    3
    """
    made = started_in if isinstance(started_in, Mapping) else {"": started_in} if started_in is not None else {}
    reads = list(reads)
    known = [made[name] for name in reads if name in made] or ([made[""]] if "" in made else [])
    past = history[:-1]  # the last one is the failing cell
    ran = [number for number in range(1, len(past)) if history and past[number].strip() == history[-1].strip()]
    if ran:  # the failing cell ran before: the cluster it ran on then (02: the spilling cluster, not a later one)
        names = "|".join(re.escape(name) for name in reads if name in made) or "session"
        then = cell_of(past[: ran[-1]], rf"^(?:{names})\s*=.*start_cluster\(")
        if then:
            return _shown_number(past, then)
    set_up = cell_of(past, r"^session\s*=.*start_cluster\(")  # a cell whose own line starts the session
    if known and 0 < max(known) < len(history):
        recorded = max(known)
        if set_up and not re.search(r"^[A-Za-z_]\w*\s*=.*start_cluster\(", history[recorded], flags=re.MULTILINE):
            return set_up  # the recorded cell starts clusters only in a loop or a branch (07's scaling loop): not needed
        return _shown_number(past, recorded)
    for pattern in (r"^session\s*=.*start_cluster\(", r"^\s*session\s*=.*start_cluster\(", r"start_cluster\("):
        found = cell_of(past, pattern)
        if found:
            return found
    return None


def _shown_number(past: list[str], number: int) -> int:
    """The number Jupyter now shows on the cell that ran as ``In [number]``: the same cell run again since gets the later
    one (review 14: In [2] was named while the cell showed [127]; review 32, 08: In [9] while it showed [89]).

    >>> _shown_number(["", "session = kit.start_cluster()", "x = 1", "session = kit.start_cluster()"], 1)
    3
    """
    return max((n for n in range(number, len(past)) if past[n].strip() == past[number].strip()), default=number)


def _what_start_does(history: list[str], number: int) -> str:
    """ "connects to" for a start cell that joins a running scheduler (08's ``scheduler_address=`` / ``scheduler_file=``
    cells: learner reviews 47-48), "starts" otherwise.

    >>> _what_start_does(["", "session = kit.start_cluster(scheduler_address=address)"], 1)
    'connects to'
    """
    text = history[number] if 0 <= number < len(history) else ""
    return "connects to" if re.search(r"start_cluster\([^)]*\bscheduler_(address|file)\s*=", text) else "starts"


def _steps(history: list[str], namespace: Mapping[str, Any], stale: set[str], start: int | None, skip: set[int] | None = None) -> str:
    """The cells to run, in order: the start cell (and the cells making the files it reads that are gone), then the
    cells making the stale names (or gone files) the failing cell reads, each with what it makes (not those in ``skip``)."""
    past = history[:-1]

    def needed(name: str) -> bool:
        return name in stale or gone_path(namespace.get(name))

    def making(name: str) -> list[int]:
        return cells_making(past, name)

    before, made_first = cells_needed(history, [start], namespace, needed, making) if start else ([], [])
    cells, made = cells_needed(history, [0, *before, *([start] if start else [])], namespace, needed, making)
    steps = []
    for number in [*before, *([start] if start else [])]:
        first = ", ".join([f"`{n}`" for n in made_first if number in making(n)][:3])
        steps.append(f"In [{number}]" + (f" (makes {first})" if first else f" ({_what_start_does(history, number)} the cluster)"))
    if start and len(steps) == 1:
        steps = [f"the cell that {_what_start_does(history, start)} the cluster (In [{start}])"]
    groups: list[tuple[str, list[int]]] = []  # consecutive cells that make the same names: one step
    for number in (c for c in cells if c not in (skip or set())):
        what = ", ".join([f"`{n}`" for n in made if number in making(n)][:3])
        if groups and groups[-1][0] == what:
            groups[-1][1].append(number)
        else:
            groups.append((what, [number]))
    for what, numbers in groups:
        where = " then ".join(f"In [{n}]" for n in numbers)
        steps.append(f"the cell{'s' if len(numbers) > 1 else ''} that make{'' if len(numbers) > 1 else 's'} {what} ({where})")
    return ", then ".join(steps)


def restart_steps(namespace: Mapping[str, Any]) -> str | None:
    """The cells to run to have the notebook's cluster again, as the re-run sentence says them: the cell that starts
    it (the last whose own line does ``session = ...start_cluster(``) with the cells making the files it reads that are
    gone; None when ``In`` has no such cell. For messages that know the cluster is closed (the exercise checks).

    >>> restart_steps({"In": ["", "import gpu_dask_kit as kit", "session = kit.start_cluster()", "session.close()"]})
    'the cell that starts the cluster (In [2])'
    """
    history = [str(s) for s in namespace.get("In", [])] + ["session"]  # as if one cell read just the session
    start = restart_cell(namespace)
    return _steps(history, namespace, set(), start) if start else None


def restart_cell(namespace: Mapping[str, Any]) -> int | None:
    """The execution number of the cell :func:`restart_steps` names as the one that starts the cluster (None: none)."""
    return start_cell([str(s) for s in namespace.get("In", [])] + ["session"], None, {"session"})


def steps_to_remake(namespace: Mapping[str, Any], names: Iterable[str], gone: Iterable[str] = (), named: Iterable[int] = ()) -> str | None:
    """The cells to run again, in order, to make ``names`` afresh (and what they need that is gone), as the re-run
    sentence says them: "the cell that makes `x` (In [5]), then ..." (None when no cell in ``In`` makes them).
    For messages that know the stale names themselves (the exercise checks): the failing cell's reads do not count.
    ``gone``: other names whose data is gone too; the cells making those that the cells above read come first.
    ``named``: cells the sentence names already (the start cell, run first): not named again.

    >>> steps_to_remake({"In": ["", "x = da.ones(9)", "y = x.persist()", "check()"]}, ["y"])
    'the cell that makes `y` (In [2])'
    """
    wanted = [name for name in names if name.isidentifier()]
    history = [str(s) for s in namespace.get("In", [])] + [" ".join(wanted)]  # as if one cell read just these
    return _steps(history, namespace, set(wanted) | set(gone), None, skip=set(named)) or None


def explain_rerun(
    exc: BaseException, namespace: Mapping[str, Any] | None = None, session: Any = None, started_in: int | Mapping[str, int] | None = None
) -> str | None:
    """The plain sentence for ``exc`` (None when it is none of the errors above). ``started_in``: the cells that made
    the notebook's sessions, when known (see :func:`start_cell`)."""
    cause = cause_of(exc)
    if cause is None:
        return None
    if cause == "await":
        return (
            "gpu-dask-kit: `await` needs an asynchronous client and this session is synchronous: use `future.result()` "
            "(or `session.client.gather(futures)`) here, or start the cluster with "
            "`session = await gpu_dask_kit.start_cluster(asynchronous=True)`."
        )
    namespace = namespace or {}
    history = [str(s) for s in namespace.get("In", [])]
    if cause == "missing":
        return _missing(exc, namespace, history)
    stale = set(stale_names(namespace, "closed" if cause == "session-closed" else cause))
    if cause == "restarted":
        steps = _steps(history, namespace, stale, None) or "the cells above that persist() or submit() the data it uses"
        return f"gpu-dask-kit: the cluster restarted (or lost a worker) since this data was made, so it is gone; re-run {steps}, then this cell."
    reads = names_read(history[-1], namespace) if history else set()
    used = [namespace[name] for name in reads if _is_session(namespace.get(name))] or [session]
    alive = all(s is not None and s.is_alive() is True for s in used)  # the sessions the failing cell reads, else the current one
    start = None if alive else start_cell(history, started_in, reads)
    steps = _steps(history, namespace, stale, start) or "the cell that starts the cluster"
    if cause == "session-closed":  # a lazy computation: a running cluster is all it needs, unless it uses held data
        closed = "gpu-dask-kit: this notebook's cluster was closed (its close cell ran), so this cell has nowhere to compute"
        return f"{closed}; re-run {steps}, then this cell."
    return f"gpu-dask-kit: this cell uses a client or data of a cluster that has been closed since; re-run {steps}, then this cell."


def _paths_in(exc: BaseException) -> list[str]:
    filename = getattr(exc, "filename", None)
    found = [os.fspath(filename)] if isinstance(filename, (str, os.PathLike)) else []
    return found + re.findall(r"(/[^\s'\"]+)", _text(exc))


def _missing(exc: BaseException, namespace: Mapping[str, Any], history: list[str]) -> str:
    """The sentence for a file or folder that is not there: the path, and the cells that make the gone paths the
    failing cell reads (and, in turn, the gone paths those cells read); else the notebook's path variables that are
    gone with it (those whose folder, shared with the missing path, was removed)."""
    paths = _paths_in(exc)
    path = paths[0] if paths else None
    past = history[:-1]  # the last one is the failing cell

    def making(name: str) -> list[int]:
        return cells_making(past, name)

    def emptied(name: str) -> bool:
        value = namespace.get(name)
        return gone_path(value) or (isinstance(value, str) and os.path.isabs(value) and os.path.isdir(value) and not os.listdir(value))

    cells, gone = cells_needed(history, [0], namespace, emptied, making)
    if not cells:
        gone = [
            name
            for name, value in list(namespace.items())
            if not name.startswith("_") and path is not None and gone_path(value) and not os.path.exists(os.path.commonpath([value, path]))
        ]
        cells = sorted({n for name in gone for n in making(name)})
    where = f" ({path})" if path else ""
    if not cells:
        return (
            f"gpu-dask-kit: a file or folder this cell reads is not there{where}: if a clean-up cell removed it, re-run the "
            "cell that writes it, then this cell."
        )
    names = ", ".join(f"`{n}`" for n in sorted(gone)[:4])
    return (
        f"gpu-dask-kit: the files this cell reads are gone{where}, removed by a clean-up cell (or never written); re-run "
        f"the cell(s) that make {names} ({' then '.join(f'In [{n}]' for n in cells)}), then this cell."
    )
