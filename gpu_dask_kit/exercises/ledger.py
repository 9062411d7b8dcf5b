"""The graph submissions the checks read, kept longer than the scheduler's own transition log.

The scheduler keeps its last ``distributed.admin.low-level-log-length`` transitions (1000 by default): a few hundred
tasks run after a right answer push that answer's record out, and a check would then read "no record" as "not done
that way". This scheduler plugin keeps only the transitions of graph submissions (the stimulus ``update-graph-...``:
which submission made which task), up to ``LIMIT`` of them, so the record of an answer outlives thousands of later
tasks. The checks register it on the cluster the first time they look (``ensure``); where it is not there (a
cluster it could not be added to), they read the scheduler's log, and say "could not be checked" when the record is gone.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.metrics import time as metrics_time

__all__ = ["SubmissionLedger", "ensure", "records", "SUBMISSION", "LIMIT"]

SUBMISSION = "update-graph"  # the scheduler's stimulus id of one graph submission (Client.compute, persist, submit, ...)
LIMIT = 100_000  # transitions kept: about 33,000 submitted tasks (each task is released -> waiting -> processing)


class SubmissionLedger(SchedulerPlugin):
    """Keeps (key, start, finish, stimulus id, time) of every transition a graph submission caused, the latest ``LIMIT``."""

    name = "gpu-dask-kit-submissions"
    idempotent = True

    def __init__(self, limit: int = LIMIT) -> None:
        self.log: deque[tuple[Any, str, str, str, float]] = deque(maxlen=limit)

    async def start(self, scheduler: Any) -> None:
        """Begin with what the scheduler's own log still holds (the submissions made before the ledger was added)."""
        for key, start, finish, _recs, stimulus, stamp in list(scheduler.transition_log):
            if str(stimulus).startswith(SUBMISSION):
                self.log.append((key, start, finish, stimulus, stamp))

    def transition(self, key: Any, start: str, finish: str, *args: Any, stimulus_id: str = "", **kwargs: Any) -> None:
        if str(stimulus_id).startswith(SUBMISSION):
            self.log.append((key, start, finish, stimulus_id, metrics_time()))


def records(dask_scheduler: Any, keys: Iterable[Any] | None = None) -> list[tuple[Any, str, str, str, float]]:
    """(key, start, finish, stimulus, time) of the submissions' transitions, oldest first (of ``keys`` only, if given):
    from the ledger where it runs on this scheduler, else from the scheduler's own transition log."""
    ledger = dask_scheduler.plugins.get(SubmissionLedger.name)
    found = (
        list(ledger.log)
        if ledger is not None
        else [(key, start, finish, stimulus, stamp) for key, start, finish, _recs, stimulus, stamp in dask_scheduler.transition_log]
    )
    wanted = None if keys is None else set(keys)
    return [r for r in found if str(r[3]).startswith(SUBMISSION) and (wanted is None or r[0] in wanted)]


_added: set[str] = set()  # schedulers (by address) that have the ledger


def ensure(client: Any) -> None:
    """Add the ledger to ``client``'s scheduler once (idempotent there too); a cluster that refuses it keeps its log only."""
    address = str(getattr(getattr(client, "scheduler", None), "address", ""))
    if not address or address in _added:
        return
    with contextlib.suppress(Exception):
        client.register_plugin(SubmissionLedger())
        _added.add(address)
