"""Run notebooks in GPU mode on CPU with host/device mixing refused: a fresh kernel whose PYTHONPATH puts
the CuPy stand-in (site/cupy) first and the simulated-GPU tier's NVML stand-in (tests/simgpu) next, so
the kit detects GPUs, starts the REAL dask-cuda LocalCUDACluster, sets ``array.backend="cupy"``, and
every "device" array refuses NumPy operands and implicit conversion as CuPy does."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat

from gpu_dask_kit.venue import NotebookResult, execute_notebook

SITE = str(Path(__file__).resolve().parent / "site")
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: CuPy's words for mixing (the stand-in raises them where CuPy does).
MIXING_ERRORS = ("Unsupported type <class 'numpy.ndarray'>", "Implicit conversion to a NumPy array is not allowed")


def strict_environment(monkeypatch) -> None:
    """Put the stand-in first on PYTHONPATH (after sim_gpus(...) put tests/simgpu there)."""
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", SITE + (os.pathsep + path if path else ""))


def run(path: Path, tmp_path: Path, timeout: int = 300) -> NotebookResult:
    """Execute ``path`` (copied into ``tmp_path``, so stray files stay there) at small scale."""
    copy = tmp_path / path.name
    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return execute_notebook(copy, scale="small", timeout=timeout)


def probe_notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(nb, path)
    return path
