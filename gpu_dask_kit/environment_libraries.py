"""The GPU libraries half of :func:`gpu_dask_kit.environment.detect`: what is installed, at which version,
built for which CUDA major version. Looked up by installed metadata, not imported (importing CuPy or RMM
would touch the GPU); only dask_cuda is imported, where GPUs exist, because it may be installed but broken.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re

from .environment_report import LibraryInfo

__all__ = ["LIBRARIES", "DISTRIBUTIONS", "library", "dask_cuda_library", "cuda_major", "too_new"]


LIBRARIES = ("dask", "distributed", "dask_cuda", "rmm", "cupy", "cudf", "dask_cudf", "cuml", "distributed_ucxx")


#: Top-level module -> the distributions that ship it, CUDA-13 wheels first. A table rather than
#: importlib.metadata.packages_distributions(), which reads every installed file (0.19 s of detect()).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "dask": ("dask",),
    "distributed": ("distributed",),
    "dask_cuda": ("dask-cuda",),
    "rmm": ("rmm-cu13", "rmm-cu12", "rmm"),
    "cupy": ("cupy-cuda13x", "cupy-cuda12x", "cupy"),
    "cudf": ("cudf-cu13", "cudf-cu12", "cudf"),
    "dask_cudf": ("dask-cudf-cu13", "dask-cudf-cu12", "dask-cudf"),
    "cuml": ("cuml-cu13", "cuml-cu12", "cuml"),
    "distributed_ucxx": ("distributed-ucxx-cu13", "distributed-ucxx-cu12", "distributed-ucxx"),
}


_CUDA_WHEEL = re.compile(r"-cu(?:da)?(\d+)x?$")


def cuda_major(distribution: str | None) -> int | None:
    """The CUDA major version a GPU wheel is built for, from its name (None when the name does not say).

    >>> cuda_major("cupy-cuda12x"), cuda_major("rmm-cu13"), cuda_major("cupy"), cuda_major(None)
    (12, 13, None, None)
    """
    match = _CUDA_WHEEL.search(distribution or "")
    return int(match.group(1)) if match else None


def library(module: str) -> LibraryInfo:
    if importlib.util.find_spec(module) is None:
        return LibraryInfo(False, None)
    dists = DISTRIBUTIONS.get(module, (module.replace("_", "-"),))
    version = name = None
    for dist in dists:
        try:
            version, name = importlib.metadata.version(dist), dist
            break
        except importlib.metadata.PackageNotFoundError:
            continue
    return LibraryInfo(True, version, cuda_major=cuda_major(name), distribution=name)


_dask_cuda_import: LibraryInfo | None = None


def dask_cuda_library() -> LibraryInfo:
    """dask_cuda is imported for real (it may be installed but broken, e.g. without cuda-bindings).

    Importing it creates no CUDA context."""
    global _dask_cuda_import
    if _dask_cuda_import is None:
        info = library("dask_cuda")
        if info.installed:
            try:
                import dask_cuda  # noqa: F401
            except Exception as exc:
                info = LibraryInfo(True, info.version, False, f"{type(exc).__name__}: {exc}")
            else:
                info = LibraryInfo(True, info.version, True)
        _dask_cuda_import = info
    return _dask_cuda_import


def too_new(libraries: dict[str, LibraryInfo], driver_cuda: str | None) -> str | None:
    """Why the GPU wheels cannot run on this driver (built for a newer CUDA major version), or None."""
    if driver_cuda is None:
        return None
    driver_major = int(driver_cuda.split(".")[0])
    for name in ("cupy", "rmm", "cudf"):
        lib = libraries.get(name)
        if lib is not None and lib.installed and lib.cuda_major is not None and lib.cuda_major > driver_major:
            return (
                f"{lib.distribution} is built for CUDA {lib.cuda_major} and this NVIDIA driver supports CUDA {driver_cuda} at most; "
                f"update the driver, or install the wheels for CUDA {driver_major} (gpu-dask-kit[gpu-cu{driver_major}])"
            )
    return None
