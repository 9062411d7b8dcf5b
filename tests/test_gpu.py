"""The GPU path on real hardware: LocalCUDACluster + RMM + CuPy. Skipped with the reason elsewhere.

Run on a GPU machine with: python -m pytest tests/test_gpu.py -v
"""

import time

import pytest

import gpu_dask_kit as kit

pytestmark = pytest.mark.gpu

MiB = 2**20


def _nvml_used(index=0):
    import pynvml

    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index)).used


def test_rmm_pool_and_cupy_allocator_on_workers_and_client(no_leaks):
    from gpu_dask_kit.allocator import cupy_allocator_name, rmm_resource_name

    with kit.start_cluster(device="gpu", rmm_pool_size="1GiB", verbose=False) as session:
        assert session.backend == "gpu"
        assert type(session.cluster).__name__ == "LocalCUDACluster"
        resources = session.client.run(rmm_resource_name)
        assert set(resources.values()) == {"PoolMemoryResource"}, resources
        worker_alloc = set(session.client.run(cupy_allocator_name).values())
        assert all("rmm_cupy_allocator" in a for a in worker_alloc), worker_alloc
        assert "rmm_cupy_allocator" in cupy_allocator_name()  # the client too
        pools = [w.rmm_pool_size for w in session.memory().workers]
        assert all(p is not None and p >= 2**30 for p in pools), pools


def test_async_allocator(no_leaks):
    from gpu_dask_kit.allocator import rmm_resource_name

    with kit.start_cluster(device="gpu", rmm_async=True, verbose=False) as session:
        assert set(session.client.run(rmm_resource_name).values()) == {"CudaAsyncMemoryResource"}


def test_cupy_backed_svd(no_leaks):
    import cupy
    import dask.array as da

    from gpu_dask_kit.compute import random_array

    with kit.start_cluster(device="gpu", rmm_pool_size="2GiB", verbose=False):
        x = random_array((20_000, 200), chunks=(2_000, 200), seed=12).persist()
        assert isinstance(x._meta, cupy.ndarray)
        u, s, v = da.linalg.svd(x)
        u, s, v = kit.current_session().client.persist([u, s, v])
        error = float((da.linalg.norm((u * s) @ v - x) / da.linalg.norm(x)).compute())
        assert error < 1e-10


def test_spilling_with_a_small_device_memory_limit(no_leaks):
    from distributed import wait

    from gpu_dask_kit.compute import random_array

    with kit.start_cluster(device="gpu", n_workers=1, device_memory_limit="128MiB", verbose=False) as session:
        x = random_array((64_000, 1000), chunks=(1000, 1000), seed=0).persist()  # 512 MB of CuPy chunks
        wait(x)
        worker = session.memory().workers[0]
        assert worker.device_memory_limit == 128 * MiB
        assert worker.spilled_to_host > 256 * MiB, worker
        assert float(x.sum().compute()) == pytest.approx(64_000 * 1000 / 2, rel=1e-2)


def test_gpu_memory_is_released_after_close(no_leaks):
    from gpu_dask_kit.compute import random_array

    baseline = _nvml_used()
    session = kit.start_cluster(device="gpu", n_workers=1, rmm_pool_size="4GiB", verbose=False)
    x = random_array((10_000, 1000), chunks=(1000, 1000), seed=0).persist()
    x.sum().compute()
    during = _nvml_used()
    assert during - baseline > 3 * 2**30  # the pool lives on the worker's GPU
    del x
    session.close()
    deadline = time.monotonic() + 20
    while _nvml_used() - baseline > 600 * MiB and time.monotonic() < deadline:  # the client's own context may stay
        time.sleep(0.5)
    assert _nvml_used() - baseline < 600 * MiB


def test_an_allocation_larger_than_the_gpu_is_a_clear_error_and_the_session_survives(no_leaks):
    """Issue 6 on a GPU: CuPy/RMM's MemoryError comes back with the kit's hint; the session keeps working;
    close() gives the memory back."""
    import cupy

    from gpu_dask_kit.notebook import hints

    baseline = _nvml_used()
    session = kit.start_cluster(device="gpu", n_workers=1, verbose=False)
    total = session.memory().workers[0].device_memory_total

    def too_big(nbytes):
        return int(cupy.empty(nbytes, dtype="u1").size)

    with pytest.raises(MemoryError) as info:
        session.client.submit(too_big, 2 * total, pure=False).result()
    hint = hints.explain(info.value, session)
    assert "did not fit in memory" in hint and "one GPU of" in hint and "smaller chunks" in hint
    assert "Spilling" in hint and "cluster itself is fine" in hint
    assert session.client.submit(too_big, 64 * MiB, pure=False).result() == 64 * MiB  # still usable
    session.close()
    deadline = time.monotonic() + 20
    while _nvml_used() - baseline > 600 * MiB and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _nvml_used() - baseline < 600 * MiB
