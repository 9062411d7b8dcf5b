"""One plain sentence for the errors a notebook gives when cells run again, out of order or after a close.

- the cluster restarted (``client.restart()``) or lost a worker: futures and persisted data made before are
  gone (``FutureCancelledError ... scheduler-restart`` / ``lost dependencies``);
- the cluster was closed (``session.close()``, a new ``start_cluster()`` with other options): its client
  says ``ClosedClientError`` and its futures ``RuntimeError: IOLoop is closed``;
- ``await future`` with a synchronous session: ``AttributeError: 'int' object has no attribute '__await__'``;
- a ``.compute()`` after the close cell: ``SessionClosedError`` (the kit's, see ``clients.closed_scheduler``);
- a cell that reads files a clean-up cell removed since: ``FileNotFoundError``.

:func:`explain_rerun` names the cell to re-run: the one that assigned the stale variable (found in IPython's
``In`` history) or the one that starts the cluster.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["explain_rerun", "stale_names", "cell_of", "kind_of", "futures_in"]

_RESTARTED = ("scheduler-restart", "lost dependencies", "Scheduler has restarted", "lost dependency")


def kind_of(exc: BaseException) -> str | None:
    """What ``exc`` says happened: ``"restarted"``, ``"closed"``, ``"session-closed"``, ``"missing"``, ``"await"``, or None."""
    name, text = type(exc).__name__, _text(exc)
    if "CancelledError" in name and any(word in text for word in _RESTARTED):
        return "restarted"
    if name == "SessionClosedError":
        return "session-closed"
    if name == "ClosedClientError" or (isinstance(exc, RuntimeError) and "IOLoop is closed" in text):
        return "closed"
    if isinstance(exc, FileNotFoundError):
        return "missing"
    if isinstance(exc, AttributeError) and "__await__" in text and _raised_in_distributed(exc):
        return "await"
    return None


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


def _raised_in_distributed(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        if "distributed" in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


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
    graph = getattr(value, "dask", None)
    if isinstance(graph, HighLevelGraph):  # an array or Delayed: held data sits in materialized layers; the others
        mappings = (layer.mapping.values() for layer in graph.layers.values() if isinstance(layer, MaterializedLayer))
        return [v for mapping in mappings for v in mapping if isinstance(v, Future)]  # would be built first (slow when big)
    try:
        return list(futures_of(value))
    except Exception:
        return []


def stale_names(namespace: Mapping[str, Any], kind: str) -> list[str]:
    """Variables holding futures (or persisted collections) that a restart cancelled or a close orphaned."""
    names = []
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in ("In", "Out"):
            continue
        futures = futures_in(value)
        if kind == "restarted" and any(f.status in ("cancelled", "lost", "error") for f in futures):
            names.append(name)
        elif kind == "closed" and any(f.client.status in ("closed", "closing") for f in futures):
            names.append(name)
    return names


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
    """
    target = re.compile(rf"(?:^|;)\s*(?:[\w, ]*,\s*)?{re.escape(name)}\s*(?:,[\w, ]*)?=(?!=)(?P<rhs>.*)$", flags=re.MULTILINE)
    found: list[int] = []
    for number in range(len(history) - 1, 0, -1):
        matches = list(target.finditer(history[number] or ""))
        if not matches or any(history[number] == history[n] for n in found):
            continue  # not this name, or the same cell run again (named once)
        found.insert(0, number)
        if not any(re.search(rf"\b{re.escape(name)}\b", m.group("rhs")) for m in matches):
            break  # made from other names: nothing earlier is needed
    return found


def _assigned(history: list[str], names: list[str]) -> str:
    cells = []
    for name in names[:3]:
        numbers = cells_making(history, name)
        where = " then ".join(f"In [{n}]" for n in numbers)
        cells.append(f"`{name}` ({where})" if numbers else f"`{name}`")
    return ", ".join(cells)


def explain_rerun(exc: BaseException, namespace: Mapping[str, Any] | None = None, session: Any = None) -> str | None:
    """The plain sentence for ``exc`` (None when it is none of the errors above)."""
    kind = kind_of(exc)
    if kind is None:
        return None
    if kind == "await":
        return (
            "gpu-dask-kit: `await` needs an asynchronous client and this session is synchronous: use `future.result()` "
            "(or `session.client.gather(futures)`) here, or start the cluster with "
            "`session = await gpu_dask_kit.start_cluster(asynchronous=True)`."
        )
    namespace = namespace or {}
    history = [str(s) for s in namespace.get("In", [])]
    if kind == "missing":
        return _missing(exc, namespace, history)
    made = _assigned(history, stale_names(namespace, "closed" if kind == "session-closed" else kind))
    what = f"the cell that makes {made}" if made else "the cells above that persist() or submit() the data it uses"
    if kind == "restarted":
        return f"gpu-dask-kit: the cluster restarted (or lost a worker) since this data was made, so it is gone; re-run {what}, then this cell."
    start = cell_of(history, r"^\s*session\s*=.*start_cluster\(") or cell_of(history, r"start_cluster\(")
    start_cell = f"the cell that starts the cluster (In [{start}])" if start else "the cell that starts the cluster"
    first = "" if session is not None and session.is_alive() else f"{start_cell}, then "
    if kind == "session-closed":  # a lazy computation: a running cluster is all it needs, unless it uses held data
        then = f", then {what}" if made else ""
        closed = "gpu-dask-kit: this notebook's cluster was closed (its close cell ran), so this cell has nowhere to compute"
        return f"{closed}; re-run {start_cell}{then}, then this cell."
    return f"gpu-dask-kit: this cell uses a client or data of a cluster that has been closed since; re-run {first}{what}, then this cell."


def _paths_in(exc: BaseException) -> list[str]:
    filename = getattr(exc, "filename", None)
    found = [os.fspath(filename)] if isinstance(filename, (str, os.PathLike)) else []
    return found + re.findall(r"(/[^\s'\"]+)", _text(exc))


def _missing(exc: BaseException, namespace: Mapping[str, Any], history: list[str]) -> str:
    """The sentence for a file or folder that is not there: the path, and the cells that make the notebook's path
    variables that are gone with it (those whose folder, shared with the missing path, was removed)."""
    paths = _paths_in(exc)
    path = paths[0] if paths else None
    gone = []
    for name, value in list(namespace.items()):
        if name.startswith("_") or not isinstance(value, str) or not os.path.isabs(value) or path is None or os.path.exists(value):
            continue
        if not os.path.exists(os.path.commonpath([value, path])):
            gone.append(name)
    cells = sorted({n for name in gone for n in cells_making(history, name)})
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
