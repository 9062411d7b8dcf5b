"""The worker spec on real hardware: what only a real GPU shows. Skipped with the detection
reason elsewhere (the simulated tier and tests/test_worker_spec*.py check the plan and dask-cuda's set-up).

Run on a GPU machine with: python -m pytest tests/test_gpu_spec.py -v
"""

import importlib.util
import sys

import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.allocator import cupy_allocator_name, rmm_resource_name

pytestmark = pytest.mark.gpu


def cudf_installed() -> bool:
    return importlib.util.find_spec("cudf") is not None


def test_without_an_rmm_allocator_cupy_keeps_its_own_pool_everywhere(no_leaks):
    """Defect 9: rmm_async=False and no pool: RMM has no resource of its own, so CuPy is not routed through it."""
    with kit.start_cluster(device="gpu", rmm_async=False, verbose=False) as session:
        assert set(session.client.run(rmm_resource_name).values()) <= {"CudaMemoryResource", "rmm not installed"}
        workers = set(session.client.run(cupy_allocator_name).values())
        if cudf_installed():
            # dask-cuda's CUDFSetup imports cuDF on every worker at start; cuDF's import routes CuPy through RMM
            assert all("rmm_cupy_allocator" in a for a in workers), workers
            assert any("dask-cuda imports cuDF on every worker" in n for n in session.notes), session.notes
        else:
            assert not any("rmm" in a for a in workers), workers
            assert any("CuPy keeps its own memory pool" in n for n in session.notes), session.notes
        assert ("rmm" in cupy_allocator_name()) == ("cudf" in sys.modules)  # the notebook's CuPy


def test_with_a_pool_cupy_allocates_from_it_on_workers_only(no_leaks):
    """Defect 9: with a pool, the workers' CuPy allocates from it; the notebook's CuPy keeps its own pool
    (this process has no RMM pool: routing it there would be one cudaMalloc per array)."""
    pytest.importorskip("rmm")
    with kit.start_cluster(device="gpu", rmm_pool_size="1GiB", verbose=False) as session:
        assert set(session.client.run(rmm_resource_name).values()) == {"PoolMemoryResource"}
        assert all("rmm_cupy_allocator" in a for a in session.client.run(cupy_allocator_name).values())
        assert ("rmm" in cupy_allocator_name()) == ("cudf" in sys.modules), cupy_allocator_name()
        assert any(("cuDF, imported here" in n) == ("cudf" in sys.modules) for n in session.notes if "in this notebook" in n)
