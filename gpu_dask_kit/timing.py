"""Timing helpers for the notebooks: a timed computation that does not read the previous run's results.

Right after ``compute()`` returns, the client's release of the result reaches the scheduler a moment later; the same
graph sent again in that moment finds its result still in memory and "runs" in a hundredth of the time (learner review
35: 09's shuffle timing showed p2p 0.011 s in 4 of 7 runs). :func:`settled` waits until the scheduler has let go.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["settled"]


def _task_count(client: Any) -> int:
    return int(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))


@contextmanager
def settled(client: Any, timeout: float = 5.0) -> Iterator[None]:
    """Run the body (a timed computation), then wait until the scheduler holds no more tasks than before it, at most
    ``timeout`` seconds: the next run of the same graph then computes again instead of reading these results."""
    before = _task_count(client)
    yield
    deadline = time.monotonic() + timeout
    while _task_count(client) > before and time.monotonic() < deadline:
        time.sleep(0.02)
