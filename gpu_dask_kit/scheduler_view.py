"""The scheduler's view of its workers, asked at the moment of the call.

``client.scheduler_info(n_workers=-1)["workers"]`` is what distributed documents for this, but it returns the
client's *cached* identity after refreshing it, and the client's own periodic refresh (every
``distributed.client.scheduler-info-interval``, 2 s by default) asks for no workers at all. When that refresh
lands between the fetch and the return, the call answers with an empty ``workers``: "0 worker(s)" on a busy
machine, a memory sum of 0, a wait for workers that never ends (distributed 2026.7.1: ``Client.scheduler_info``
and the client's periodic refresh). :func:`workers` asks the scheduler directly instead, and the clients the kit
makes (:func:`new_client`) answer ``scheduler_info()`` with what they fetched, so a learner's
``session.client.scheduler_info(n_workers=-1)["workers"]`` is never empty while the workers are there. (Lengthening
``scheduler-info-interval`` does not help: the scheduler resets it at each client heartbeat.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["workers", "new_client", "client_class"]

_CLIENT_CLASS: type | None = None


def workers(client: Any) -> dict[str, dict[str, Any]]:
    """Every worker the scheduler knows now, by address (its identity's ``workers``); a synchronous client."""
    return dict(client.sync(client.scheduler.identity, n_workers=-1)["workers"])


def client_class() -> type:
    """distributed's ``Client``, except that a synchronous ``scheduler_info(n_workers=...)`` returns the identity it
    fetched rather than the cache the periodic refresh shares (made once, when distributed is first needed)."""
    global _CLIENT_CLASS
    if _CLIENT_CLASS is None:
        from distributed import Client as DistributedClient
        from distributed.objects import SchedulerInfo

        class Client(DistributedClient):  # the name distributed's repr shows: <Client: 'tcp://...' processes=2 ...>
            __doc__ = DistributedClient.__doc__

            def scheduler_info(self, n_workers: int = -1, **kwargs: Any) -> Any:
                scheduler = self.scheduler
                if self.asynchronous or scheduler is None or self.status not in ("running", "connecting"):
                    return super().scheduler_info(n_workers, **kwargs)  # distributed's answer (its cache) for these
                return SchedulerInfo(self.sync(scheduler.identity, n_workers=n_workers))

        _CLIENT_CLASS = Client
    return _CLIENT_CLASS


def new_client(*args: Any, **kwargs: Any) -> Any:
    """A client of the kit's sessions: ``distributed.Client(*args, **kwargs)`` whose ``scheduler_info()`` cannot read empty."""
    return client_class()(*args, **kwargs)
