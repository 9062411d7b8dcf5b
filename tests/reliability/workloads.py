"""Functions that run inside Dask workers (kept in a small module that imports only NumPy, so the
workers unpickle them by reference without importing pytest or the test modules)."""

from __future__ import annotations

import time

import numpy as np

SIDE = 2000  # the array is SIDE x SIDE float64 (32 MB)
CHUNK = 125  # -> 16 x 16 = 256 blocks
DELAY = 0.02  # seconds of sleep per block in the "slow" step: ~2.5 s of task time per worker


def make_block(seed: int, block_id=None) -> np.ndarray:
    """A deterministic block: the same numbers wherever (and however often) it is computed."""
    rng = np.random.default_rng([seed, *block_id])
    return rng.random((CHUNK, CHUNK))


def slow_square(block: np.ndarray) -> np.ndarray:
    time.sleep(DELAY)
    return block * block


def dask_workload(seed: int):
    """(y + y.T).mean(axis=0) with y = x**2 block by block: generation, a slow elementwise step, a
    transpose (blocks move between workers) and a tree reduction; 1000+ tasks."""
    import dask.array as da

    n = SIDE // CHUNK
    x = da.map_blocks(make_block, seed, chunks=((CHUNK,) * n, (CHUNK,) * n), dtype=float)
    y = x.map_blocks(slow_square, dtype=float)
    return (y + y.T).mean(axis=0)


def numpy_reference(seed: int) -> np.ndarray:
    n = SIDE // CHUNK
    x = np.block([[make_block(seed, (i, j)) for j in range(n)] for i in range(n)])
    y = x * x
    return (y + y.T).mean(axis=0)


def busy(seconds: float) -> int:
    """Pure-Python CPU work for ``seconds`` (holds the GIL between bytecode switches)."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n
