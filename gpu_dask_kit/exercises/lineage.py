"""Where held results came from: the scheduler's task dependencies, followed back from a persisted collection.

The scheduler keeps a task's ``dependencies`` while the task is held, even after the intermediate tasks ran and were
released. So a persisted result can be asked "were you computed on the cluster from these keys?": sums of a persisted
``x`` reach ``x``'s chunks; sums of a lazy ``x`` reach tasks named after ``x``'s (Dask fuses the chunk-making into the
first step: ``random-sum-...``); the same sums made from a NumPy copy in the notebook (``da.from_array(x.compute())``)
reach only the copy's data, sent from the notebook (``array-...``). When Dask fuses the chunk-making layer into the
next one (a ``map_blocks`` layer, such as ``compute.random_array``'s on GPU), the fused task bears only the last layer's
name (``sum-...``); the source's layer names are then found among the keys of the subgraph the task runs.
"""

from __future__ import annotations

from typing import Any

from dask.core import flatten
from dask.utils import key_split
from distributed import futures_of

__all__ = ["made_from"]


def _from_source(key: Any, sources: set[str], names: list[str]) -> bool:
    """True for one of ``sources``, or a task named after one of the source's task names (fused with them)."""
    name = key_split(key)
    return str(key) in sources or any(name == n or name.startswith(f"{n}-") for n in names)


def _fused_from(spec: Any, layers: list[str]) -> bool:
    """True when ``spec`` (a scheduler task's run_spec) runs a fused subgraph with a key of one of ``layers`` in it
    (the source's layer names, token included): Dask's blockwise fusion keeps the fused layers' keys only there.

    >>> from types import SimpleNamespace as Spec   # a Task(key, _execute_subgraph, DataNode(None, inner), ...)
    >>> _fused_from(Spec(args=(Spec(value={"random_cupy-ab12_.0_.1": 1, "sum-1": 2}),)), ["random_cupy-ab12"])
    True
    >>> _fused_from(Spec(args=(Spec(value={"array-cd34_.0_.1": 1}),)), ["random_cupy-ab12"]), _fused_from(None, ["x"])
    (False, False)
    """
    args = getattr(spec, "args", None) or ()
    inner = getattr(args[0], "value", args[0]) if args else None
    return isinstance(inner, dict) and any(str(k).startswith(layer) for k in inner for layer in layers)


def _reaches(dask_scheduler: Any, keys: list[Any], sources: list[str], names: list[str], layers: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
    """How many held ``keys`` the scheduler knows, and how many of those have dependencies, followed back, that reach
    ``sources`` (keys as str), tasks named after ``names`` (the source's task names) or tasks fused from the source's
    ``layers`` (:func:`_fused_from`)."""
    wanted, known, reached = set(sources), 0, 0
    for key in keys:
        start = dask_scheduler.tasks.get(key)
        if start is None:
            continue
        known += 1
        seen, stack = set(), [start]
        while stack:
            ts = stack.pop()
            if ts.key in seen:
                continue
            seen.add(ts.key)
            if _from_source(ts.key, wanted, names) or _fused_from(ts.run_spec, list(layers)):
                reached += 1
                break
            stack.extend(ts.dependencies)
    return {"known": known, "reached": reached}


def made_from(collection: Any, source: Any) -> bool | None:
    """True when every held result of ``collection`` was computed on the cluster from ``source``'s keys; False when
    none or only some were; None when the scheduler knows none of them (nothing to say)."""
    held = [f.key for f in futures_of(collection)]
    if not held:
        return None
    keys = {str(k) for k in flatten(source.__dask_keys__())} | {str(f.key) for f in futures_of(source)}
    graph = source.__dask_graph__()
    names = sorted({key_split(k) for k in graph})
    layers = sorted({str(k[0] if isinstance(k, tuple) else k) for k in graph})
    found = futures_of(collection)[0].client.run_on_scheduler(_reaches, keys=held, sources=sorted(keys), names=names, layers=layers)
    if not found["known"]:
        return None
    return found["reached"] == found["known"]
