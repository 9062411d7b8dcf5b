"""Mode-neutral helpers for the notebooks: the same code runs on GPU (CuPy/cuDF/cuML) and CPU
(NumPy/pandas/scikit-learn). The mode ("gpu" | "cpu") follows the live session, else dask's ``array.backend``.

    from gpu_dask_kit.compute import xp, xdf, random_array, LinearRegression
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import dask.config

__all__ = ["mode", "xp", "xdf", "random_array", "LinearRegression", "to_host", "array_module", "dataframe_module"]


def mode() -> str:
    """ "gpu" when the live session (or dask's array.backend) is GPU, else "cpu"."""
    from .session import current_session

    session = current_session()
    if session is not None:
        return session.mode
    return "gpu" if dask.config.get("array.backend", "numpy") == "cupy" else "cpu"


def array_module():
    """cupy on GPU, numpy on CPU."""
    return importlib.import_module("cupy" if mode() == "gpu" else "numpy")


def dataframe_module():
    """cudf on GPU (when installed), pandas otherwise."""
    if mode() == "gpu" and dask.config.get("dataframe.backend", "pandas") == "cudf":
        return importlib.import_module("cudf")
    return importlib.import_module("pandas")


class _Lazy:
    """A module proxy resolved at attribute access, so ``xp`` follows the session's mode."""

    def __init__(self, resolve) -> None:
        self._resolve = resolve

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)

    def __repr__(self) -> str:
        return f"<module {self._resolve().__name__} for the session's mode>"


#: ``xp.asarray(...)``, ``xp.linalg.norm(...)``: cupy on GPU, numpy on CPU.
xp = _Lazy(array_module)
#: ``xdf.DataFrame(...)``: cudf on GPU, pandas on CPU.
xdf = _Lazy(dataframe_module)


def _cupy_random_block(seeds: Any, dtype: str, block_id: tuple[int, ...] = (), block_info: Any = None) -> Any:
    """Runs on a worker: one block of uniform random numbers from CuPy's generator for that block."""
    import cupy

    shape = block_info[None]["chunk-shape"]
    return cupy.random.default_rng(int(seeds[block_id])).random(shape, dtype=dtype)


def random_array(shape: tuple[int, ...], chunks: Any = "auto", seed: int = 12, dtype: str = "float64"):
    """A uniform random Dask array in [0, 1) in the session's mode (CuPy chunks on GPU, NumPy on CPU).

    The same seed gives the same numbers in the same mode. On GPU the CuPy generators are built on
    the workers, one per block, so this notebook process makes no CUDA call (no context on GPU 0 next
    to the workers'); the array's ``meta`` is a NumPy stand-in, while its blocks are CuPy arrays.
    """
    import dask.array as da
    import numpy as np

    if mode() != "gpu":
        with dask.config.set({"array.backend": "numpy"}):
            return da.random.default_rng(seed).random(shape, chunks=chunks, dtype=dtype)
    chunks = da.core.normalize_chunks(chunks, shape, dtype=np.dtype(dtype))
    numblocks = tuple(len(c) for c in chunks)
    seeds = np.random.default_rng(seed).integers(0, 2**63 - 1, size=numblocks, dtype=np.int64)
    meta = np.empty((0,) * len(shape), dtype=dtype)
    return da.map_blocks(_cupy_random_block, seeds, dtype, chunks=chunks, dtype=dtype, meta=meta, token="random_cupy")


_told_no_cuml = False


@functools.cache
def _host_fitting_model(base: type) -> type:
    """A scikit-learn estimator class whose fit/predict/score take host copies of cuDF/CuPy inputs."""

    class HostLinearRegression(base):
        def fit(self, X: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
            return super().fit(to_host(X), to_host(y), *args, **kwargs)

        def predict(self, X: Any) -> Any:
            return super().predict(to_host(X))

        def score(self, X: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
            return super().score(to_host(X), to_host(y), *args, **kwargs)

    HostLinearRegression.__module__ = "sklearn.linear_model"
    return HostLinearRegression


def LinearRegression(**kwargs: Any):
    """cuml.linear_model.LinearRegression on GPU (when cuML is installed), scikit-learn's on CPU.

    On a GPU without cuML, scikit-learn's model fits on host copies of cuDF/CuPy inputs (said once)."""
    global _told_no_cuml
    from sklearn.linear_model import LinearRegression as CPULinearRegression

    if mode() == "gpu":
        try:
            from cuml.linear_model import LinearRegression as GPULinearRegression
        except ImportError:
            if not _told_no_cuml:
                _told_no_cuml = True
                print("cuML is not installed: scikit-learn fits on host copies of the data; install gpu-dask-kit[gpu-cu12] (or [gpu-cu13]) for cuML.")
            return _host_fitting_model(CPULinearRegression)(**kwargs)
        else:
            return GPULinearRegression(**kwargs)
    return CPULinearRegression(**kwargs)


def to_host(value: Any) -> Any:
    """Bring a CuPy array / cuDF object to host memory (NumPy / pandas); host objects pass through."""
    if hasattr(value, "to_pandas"):
        return value.to_pandas()
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        return value.get()
    return value
