"""Tasks that ask for a resource no worker has are refused within seconds, naming what the workers have.

``client.submit(f, resources={"GPU": 1})`` on workers that declare no ``GPU`` resource waits in the
scheduler's ``no-worker`` state forever: the notebook cell hangs with nothing said. The kit's clusters carry
:class:`ResourceCheck`, a scheduler plugin that watches for that state and, after ``grace`` seconds with
still no worker able to run the task, cancels it (and what depends on it) with a reason that names the
resources asked for and those the workers declare. The caller's ``.result()`` / ``.compute()`` then raises
``FutureCancelledError`` carrying that sentence. A worker that joins with the resource in the grace time
keeps the task.
"""

from __future__ import annotations

import asyncio
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

__all__ = ["ResourceCheck", "refusal", "workers_resources"]


def workers_resources(workers: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{worker address: its declared resources}`` (empty dicts for workers that declare none)."""
    return {address: dict(ws.resources or {}) for address, ws in workers.items()}


def _fits(have: dict[str, float], need: dict[str, float]) -> bool:
    return all(have.get(name, 0) >= amount for name, amount in need.items())


def refusal(need: dict[str, float], have: dict[str, dict[str, float]]) -> str | None:
    """The sentence that refuses a task asking for ``need`` on workers that have ``have``; None if one fits.

    >>> refusal({"GPU": 1}, {"tcp://a": {}, "tcp://b": {}})[:65]
    "this task asks for resources={'GPU': 1}, but none of the 2 worker"
    >>> refusal({"GPU": 1}, {"tcp://a": {"GPU": 1}}) is None
    True
    """
    if not have or any(_fits(h, need) for h in have.values()):
        return None  # no workers yet (a start or a restart): not a resource problem
    declared = sorted({f"{k}={v:g}" for h in have.values() for k, v in h.items()})
    has = f"they declare {', '.join(declared)}" if declared else "they declare no resources at all"
    example = '"' + " ".join(f"{k}={v:g}" for k, v in need.items()) + '"'  # (learner review 35: it said GPU=1 for GPU_SLOT)
    return (
        f"this task asks for resources={need!r}, but none of the {len(have)} worker(s) has that ({has}). Connect to (or "
        f"start) workers that declare them (e.g. `dask worker ADDRESS --resources {example}`; in a notebook, re-run the "
        "cell that starts such workers, then the one that connects to them), or, if the task does not need them, submit "
        "it without resources=..."
    )


class ResourceCheck(SchedulerPlugin):
    """Cancel tasks that wait in ``no-worker`` because no worker has the resources they ask for."""

    name = "gpu-dask-kit-resource-check"

    def __init__(self, grace: float = 2.0) -> None:
        self.grace = grace
        self.scheduler: Any = None

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def transition(self, key: Any, start: str, finish: str, *args: Any, stimulus_id: str = "", **kwargs: Any) -> None:
        if finish != "no-worker" or self.scheduler is None:
            return
        ts = self.scheduler.tasks.get(key)
        if ts is not None and ts.resource_restrictions:
            asyncio.get_running_loop().call_later(self.grace, self._check, key)

    def _check(self, key: Any) -> None:
        ts = self.scheduler.tasks.get(key)
        if ts is None or ts.state != "no-worker" or not ts.resource_restrictions:
            return
        reason = refusal(dict(ts.resource_restrictions), workers_resources(self.scheduler.workers))
        if reason is None:
            return
        for task in _wanted(ts):  # those furthest down first, one key per call
            if self.scheduler.tasks.get(task.key) is not task or not task.who_wants:
                continue  # forgotten with a dependent cancelled before it, or no longer held
            client = next(iter(task.who_wants)).client_key  # force=True: released for every client holding it
            self.scheduler.stimulus_cancel(
                [task.key], client, force=True, reason="no worker has the resources it asks for", msg="gpu-dask-kit: " + reason + "."
            )


def _wanted(ts: Any) -> list[Any]:
    """``ts`` and the tasks depending on it that a client holds, every task after all the tasks that depend on it.

    ``Scheduler.stimulus_cancel(..., force=True)`` also cancels a key's dependents, and asserts that each has a client
    holding it (distributed 2026.7.1): a held task below an unheld one (``c`` in ``a -> b -> c`` with ``b`` dropped by
    the notebook) failed that assertion and left the whole chain waiting. Cancelled in this order, a task's dependents
    are gone (the unheld ones forgotten with them) before it is cancelled.
    """
    seen, order = {ts.key}, []
    stack = [(ts, iter(list(ts.dependents or ())))]
    while stack:
        task, rest = stack[-1]
        below = next((d for d in rest if d.key not in seen), None)
        if below is None:
            stack.pop()
            order.append(task)
        else:
            seen.add(below.key)
            stack.append((below, iter(list(below.dependents or ()))))
    return [task for task in order if task.who_wants]
