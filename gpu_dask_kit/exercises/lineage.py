"""Where held results came from: the scheduler's task dependencies, followed back from a persisted collection.

The scheduler keeps a task's ``dependencies`` while the task is held, even after the intermediate tasks ran and were
released. So a persisted result can be asked "were you computed on the cluster from these keys?": sums of a persisted
``x`` reach ``x``'s chunks; sums of a lazy ``x`` reach tasks named after ``x``'s (Dask fuses the chunk-making into the
first step: ``random-sum-...``); the same sums made from a NumPy copy in the notebook (``da.from_array(x.compute())``)
reach only the copy's data, sent from the notebook (``array-...``).
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


def _reaches(dask_scheduler: Any, keys: list[Any], sources: list[str], names: list[str]) -> dict[str, Any]:
    """How many held ``keys`` the scheduler knows, and how many of those have dependencies, followed back, that reach
    ``sources`` (keys as str) or tasks named after ``names`` (the source's task names)."""
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
            if _from_source(ts.key, wanted, names):
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
    names = sorted({key_split(k) for k in source.__dask_graph__()})
    found = futures_of(collection)[0].client.run_on_scheduler(_reaches, keys=held, sources=sorted(keys), names=names)
    if not found["known"]:
        return None
    return found["reached"] == found["known"]
