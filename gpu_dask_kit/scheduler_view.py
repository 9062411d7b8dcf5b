"""The scheduler's view of its workers, asked at the moment of the call.

``client.scheduler_info(n_workers=-1)["workers"]`` is what distributed documents for this, but it returns the
client's *cached* identity after refreshing it, and the client's own periodic refresh (every
``distributed.client.scheduler-info-interval``, 2 s by default) asks for no workers at all. When that refresh
lands between the fetch and the return, the call answers with an empty ``workers``: "0 worker(s)" on a busy
machine, a memory sum of 0, a wait for workers that never ends (distributed 2026.7.1: ``Client.scheduler_info``
and the client's periodic refresh). :func:`workers` asks the scheduler directly instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["workers"]


def workers(client: Any) -> dict[str, dict[str, Any]]:
    """Every worker the scheduler knows now, by address (its identity's ``workers``); a synchronous client."""
    return dict(client.sync(client.scheduler.identity, n_workers=-1)["workers"])
