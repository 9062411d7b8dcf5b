"""``start_cluster(asynchronous=True)``: the session for ``async`` code (dask's asynchronous mode).

::

    session = await gpu_dask_kit.start_cluster(asynchronous=True, n_workers=2)
    total = await session.client.submit(sum, [1, 2, 3])      # session.client is an asynchronous Client
    await session.close()

    async with gpu_dask_kit.start_cluster(asynchronous=True) as session:   # closes at the end
        ...

The cluster is started (or reused) exactly as in the synchronous mode, in a thread so the event loop keeps
running; ``session.client`` is then an asynchronous ``distributed.Client`` on the running loop (the
default client), while the kit's own queries (``session.memory()``, ``n_workers``) keep a synchronous one.

Nothing here can leave a cluster running silently: ``session.close()`` starts closing at once and returns
an awaitable (awaited, it waits until the processes are gone; not awaited, the close still runs), and
``start_cluster(asynchronous=True)`` used without ``await`` says at the first use which line to write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any

from .errors import ClusterStartError

__all__ = ["AsyncStart", "Done", "attach_async_client", "close", "close_soon", "make_default"]

#: Closes started without ``await``: kept referenced until they finish (asyncio keeps only weak references).
_closing: set[asyncio.Task] = set()


def make_default(client: Any) -> Any:
    """Make ``client`` (the kit's synchronous one) dask's default client again; return it."""
    from distributed.client import ensure_default_client  # distributed: imported when a cluster runs

    ensure_default_client(client)
    return client


async def attach_async_client(session: Any) -> Any:
    """Give ``session`` an asynchronous client on the running loop (a live one is kept)."""
    from distributed import Client  # distributed: imported when a cluster runs

    current = session.async_client
    loop = asyncio.get_running_loop()
    if current is not None and current.status == "running" and getattr(current.loop, "asyncio_loop", None) is loop:
        session.client = make_default(current)  # e.g. after synchronous code reused the session meanwhile
        return session
    # The credentials the kit's own client connected with (connect mode: those found for the scheduler).
    security = session.kit_client.security if session.kit_client is not None else session.security
    client = await Client(session.scheduler_address, asynchronous=True, security=security or None, set_as_default=True)
    session.async_client = session.client = client
    return session


async def close(session: Any, timeout: float) -> None:
    """Close the asynchronous client on this loop, then the cluster (in a thread: it waits for processes).
    The cluster is closed even when this coroutine is cancelled halfway (``asyncio.run`` ending first)."""
    client = session.async_client
    try:
        if client is not None and client.status not in ("closed", "closing"):
            try:
                await client.close(timeout=timeout)
            except Exception:
                pass
    finally:
        await asyncio.to_thread(session.close_now, timeout)


class Done:
    """An awaitable that is already finished (what ``close()`` returns when it could close at once)."""

    def __await__(self) -> Generator[Any, None, None]:
        return None
        yield  # a generator: ``await Done()`` returns None at once


def close_soon(session: Any, timeout: float) -> Any:
    """``session.close()`` in asynchronous mode: start the close now; return what ``await`` waits on."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop runs here (e.g. a thread): close now
        session.close_now(timeout)
        return Done()
    task = loop.create_task(close(session, timeout))
    _closing.add(task)
    task.add_done_callback(_closing.discard)
    return task


class AsyncStart:
    """What ``start_cluster(asynchronous=True)`` returns: ``await`` it, or use it with ``async with``."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start = start
        self._session: Any = None

    async def _run(self) -> Any:
        session = await asyncio.to_thread(self._start)
        try:
            self._session = await attach_async_client(session)
        except BaseException:
            await asyncio.to_thread(session.close_now, 15.0)
            raise
        return self._session

    def __await__(self) -> Generator[Any, None, Any]:
        return self._run().__await__()

    async def __aenter__(self) -> Any:
        return await self._run()

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ClusterStartError(
            f"No cluster was started: start_cluster(asynchronous=True) returns an awaitable, so `.{name}` is not there yet. "
            "Write `session = await gpu_dask_kit.start_cluster(asynchronous=True, ...)` (or leave asynchronous=True out)."
        )
