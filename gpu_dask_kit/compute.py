"""Backend-neutral helpers for the notebooks: the same code runs on GPU (CuPy/cuDF/cuML) and CPU
(NumPy/pandas/scikit-learn). The backend follows the live session, else dask's ``array.backend``.

    from gpu_dask_kit.compute import xp, xdf, random_array, LinearRegression
"""

from __future__ import annotations

import importlib
from typing import Any

import dask.config

__all__ = ["backend", "xp", "xdf", "random_array", "LinearRegression", "to_host", "array_module", "dataframe_module"]


def backend() -> str:
    """ "gpu" when the live session (or dask's array.backend) is GPU, else "cpu"."""
    from .session import current_session

    session = current_session()
    if session is not None:
        return session.backend
    return "gpu" if dask.config.get("array.backend", "numpy") == "cupy" else "cpu"


def array_module():
    """cupy on GPU, numpy on CPU."""
    return importlib.import_module("cupy" if backend() == "gpu" else "numpy")


def dataframe_module():
    """cudf on GPU (when installed), pandas otherwise."""
    if backend() == "gpu" and dask.config.get("dataframe.backend", "pandas") == "cudf":
        return importlib.import_module("cudf")
    return importlib.import_module("pandas")


class _Lazy:
    """A module proxy resolved at attribute access, so ``xp`` follows the session's backend."""

    def __init__(self, resolve) -> None:
        self._resolve = resolve

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)

    def __repr__(self) -> str:
        return f"<backend module {self._resolve().__name__}>"


#: ``xp.asarray(...)``, ``xp.linalg.norm(...)``: cupy on GPU, numpy on CPU.
xp = _Lazy(array_module)
#: ``xdf.DataFrame(...)``: cudf on GPU, pandas on CPU.
xdf = _Lazy(dataframe_module)


def random_array(shape: tuple[int, ...], chunks: Any = "auto", seed: int = 12, dtype: str = "float64"):
    """A uniform random Dask array in [0, 1) on the session's backend (CuPy or NumPy chunks).

    The same seed gives the same numbers on the same backend.
    """
    import dask.array as da

    with dask.config.set({"array.backend": "cupy" if backend() == "gpu" else "numpy"}):
        rng = da.random.default_rng(seed)
        return rng.random(shape, chunks=chunks, dtype=dtype)


def LinearRegression(**kwargs: Any):
    """cuml.linear_model.LinearRegression on GPU (when cuML is installed), scikit-learn's on CPU."""
    if backend() == "gpu":
        try:
            from cuml.linear_model import LinearRegression as GPULinearRegression
        except ImportError:
            pass
        else:
            return GPULinearRegression(**kwargs)
    from sklearn.linear_model import LinearRegression as CPULinearRegression

    return CPULinearRegression(**kwargs)


def to_host(value: Any) -> Any:
    """Bring a CuPy array / cuDF object to host memory (NumPy / pandas); host objects pass through."""
    if hasattr(value, "to_pandas"):
        return value.to_pandas()
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        return value.get()
    return value
