"""One shared GPU sampler per Jupyter server: bounded rate, NVML off the event loop.

However many browser tabs poll ``GET gpus``, NVML is read at most once per ``interval`` seconds,
in one dedicated thread (NVML calls may block; they never run on the server's event loop).
Concurrent requests during a read share that read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["GpuSampler"]


def _default_sample() -> dict[str, Any]:
    from .. import environment

    return environment.sample_gpus().to_dict()


class GpuSampler:
    """Cache of :func:`gpu_dask_kit.environment.sample_gpus` refreshed at most every ``interval`` seconds."""

    def __init__(self, interval: float = 1.0, sample: Callable[[], dict[str, Any]] | None = None) -> None:
        self.interval = max(float(interval), 0.1)
        self._sample = sample or _default_sample
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpu-dask-kit-nvml")
        self._last: dict[str, Any] | None = None
        self._last_at = float("-inf")
        self._task: asyncio.Future | None = None
        #: How many times NVML was actually read (tests check the rate bound with it).
        self.reads = 0

    def _read(self) -> dict[str, Any]:
        self.reads += 1
        try:
            return self._sample()
        except Exception as exc:  # sample_gpus never raises; a broken fake or driver must not 500
            return {"gpus": [], "reason": f"reading the GPUs failed ({type(exc).__name__}: {exc}).", "time": time.time()}

    async def _refresh(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._executor, self._read)
        self._last, self._last_at = result, time.monotonic()
        return result

    async def get(self) -> dict[str, Any]:
        """The latest sample, at most ``interval`` seconds old (the model of ``GET gpus``)."""
        if self._task is not None and not self._task.done():
            return await asyncio.shield(self._task)
        if self._last is not None and time.monotonic() - self._last_at < self.interval:
            return self._last
        self._task = asyncio.ensure_future(self._refresh())
        return await asyncio.shield(self._task)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
