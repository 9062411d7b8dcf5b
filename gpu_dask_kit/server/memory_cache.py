"""Memory totals of live sessions, read from their schedulers with a short timeout and cached.

A scheduler that does not answer costs the request at most ``wait`` seconds; its read goes on in
the background and its answer is used by a later request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .. import credentials
from .models import memory_totals

__all__ = ["MemoryCache"]


def _default_snapshot(address: str, timeout: float, mode: str) -> dict[str, Any]:
    """A short-lived client of this user's session at ``address`` (with its TLS credentials, if any)."""
    from distributed import Client

    from ..monitor import snapshot

    with Client(address, timeout=timeout, set_as_default=False, security=credentials.for_address(address)) as client:
        return snapshot(client, mode=mode).to_dict()


class MemoryCache:
    def __init__(
        self, max_age: float = 5.0, timeout: float = 2.0, wait: float = 1.0, snapshot: Callable[[str, float, str], dict[str, Any]] | None = None
    ) -> None:
        self.max_age, self.timeout, self.wait = max_age, timeout, wait
        self._snapshot = snapshot or _default_snapshot
        self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gpu-dask-kit-memory")
        self._cache: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._pending: dict[str, asyncio.Future] = {}

    def _read(self, address: str, mode: str) -> dict[str, Any] | None:
        try:
            return memory_totals(self._snapshot(address, self.timeout, mode))
        except Exception:
            return None  # scheduler gone or slow: the sidebar shows no memory line

    async def _refresh(self, session_id: str, address: str, mode: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            value = await loop.run_in_executor(self._executor, self._read, address, mode)
            self._cache[session_id] = (time.monotonic(), value)
        finally:
            self._pending.pop(session_id, None)

    async def get(self, records: list[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
        """Totals per session id for the live sessions among ``records`` (None when unknown)."""
        now = time.monotonic()
        live = {r["id"]: r for r in records if r.get("alive") and r.get("scheduler_address")}
        for sid in list(self._cache):
            if sid not in live:
                del self._cache[sid]
        waiting = []
        for sid, r in live.items():
            cached = self._cache.get(sid)
            if cached is not None and now - cached[0] < self.max_age:
                continue
            if sid not in self._pending:
                self._pending[sid] = asyncio.ensure_future(self._refresh(sid, r["scheduler_address"], r.get("mode", "cpu")))
            waiting.append(self._pending[sid])
        if waiting:
            await asyncio.wait(waiting, timeout=self.wait)
        return {sid: (self._cache.get(sid) or (0, None))[1] for sid in live}

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
