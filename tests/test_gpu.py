"""The GPU path on real hardware: LocalCUDACluster + RMM + CuPy. Skipped with the reason elsewhere.

Run on a GPU machine with: python -m pytest tests/test_gpu.py -v
"""

import sys
import time

import pytest

import gpu_dask_kit as kit

pytestmark = pytest.mark.gpu

MiB = 2**20


def _nvml_used(index=0):
    import pynvml

    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index)).used


def _baseline_after_own_context():
    """The test process's own CUDA context (CuPy's, made by random_array's client-side
    graph or the client allocator) stays until the process ends. Create it FIRST, then measure, so the
    "memory released" checks count only what the cluster held."""
    import cupy

    cupy.cuda.Device(0).use()
    cupy.zeros(1).sum()  # creates this process's context on GPU 0 now
    cupy.cuda.Device(0).synchronize()
    return _nvml_used()


def test_rmm_pool_and_cupy_allocator_on_workers_and_client(no_leaks):
    from gpu_dask_kit.allocator import cupy_allocator_name, rmm_resource_name

    with kit.start_cluster(device="gpu", rmm_pool_size="1GiB", verbose=False) as session:
        assert session.mode == "gpu"
        assert type(session.cluster).__name__ == "LocalCUDACluster"
        resources = session.client.run(rmm_resource_name)
        assert set(resources.values()) == {"PoolMemoryResource"}, resources
        worker_alloc = set(session.client.run(cupy_allocator_name).values())
        assert all("rmm_cupy_allocator" in a for a in worker_alloc), worker_alloc
        # the notebook's CuPy keeps its own pool (defect 9) until cuDF is imported here (cuDF's import routes it through RMM)
        assert ("rmm" in cupy_allocator_name()) == ("cudf" in sys.modules), cupy_allocator_name()
        pools = [w.rmm_pool_size for w in session.memory().workers]
        assert all(p is not None and p >= 2**30 for p in pools), pools


def test_async_allocator(no_leaks):
    from gpu_dask_kit.allocator import rmm_resource_name

    with kit.start_cluster(device="gpu", rmm_async=True, verbose=False) as session:
        assert set(session.client.run(rmm_resource_name).values()) == {"CudaAsyncMemoryResource"}


def test_cupy_backed_svd(no_leaks):
    import dask.array as da
    from distributed import futures_of

    from gpu_dask_kit.compute import random_array

    with kit.start_cluster(device="gpu", rmm_pool_size="2GiB", verbose=False) as session:
        x = random_array((20_000, 200), chunks=(2_000, 200), seed=12).persist()
        # the blocks are CuPy arrays on the workers (the meta is a NumPy stand-in: no CUDA call
        # in the client while the graph is built)
        client = session.client
        kinds = client.gather(client.map(lambda block: type(block).__module__.split(".")[0], futures_of(x), pure=False))
        assert set(kinds) == {"cupy"}
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

    baseline = _baseline_after_own_context()
    session = kit.start_cluster(device="gpu", n_workers=1, rmm_pool_size="4GiB", verbose=False)
    x = random_array((10_000, 1000), chunks=(1000, 1000), seed=0).persist()
    x.sum().compute()
    during = _nvml_used()
    assert during - baseline > 3 * 2**30  # the pool lives on the worker's GPU
    del x
    session.close()
    deadline = time.monotonic() + 20
    while _nvml_used() - baseline > 64 * MiB and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _nvml_used() - baseline < 64 * MiB


def test_an_allocation_larger_than_the_gpu_is_a_clear_error_and_the_session_survives(no_leaks):
    """On a GPU, CuPy/RMM's MemoryError comes back with the kit's hint; the session keeps working;
    close() gives the memory back."""
    import cupy

    from gpu_dask_kit.notebook import hints

    baseline = _baseline_after_own_context()
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
    while _nvml_used() - baseline > 64 * MiB and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _nvml_used() - baseline < 64 * MiB


# --- the GPU defects a real GPU can check (the simulated tier has the others) --------------------


def _compute_pids(index=0):
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}


def test_c_rmm_pool_size_is_seen_through_cudf_spilling(no_leaks):
    pytest.importorskip("cudf")
    with kit.start_cluster(device="gpu", n_workers=1, rmm_pool_size="1GiB", enable_cudf_spill=True, verbose=False) as session:
        assert session.memory().workers[0].rmm_pool_size == 2**30


def _cudf_part(i: int, rows: int):
    """Runs on the worker: one cuDF frame of ``rows`` float64 (built there, never in this process)."""
    import cudf
    import cupy

    return cudf.DataFrame({"x": cupy.arange(rows, dtype="float64") + i})


def test_c_cudf_own_spilling_is_counted(no_leaks, monkeypatch):
    """Defect 8: cuDF spills on its own only above ``spill_device_limit`` (or on an out-of-memory error):
    without a limit 480 MB in a 1 GiB pool never spills. The worker gets a 256 MiB limit through cuDF's
    own variable (read when the worker imports cuDF) and builds the frames itself, so the test process
    makes no frame on GPU 0."""
    pytest.importorskip("cudf")
    monkeypatch.setenv("CUDF_SPILL_DEVICE_LIMIT", str(256 * MiB))
    from distributed import wait

    with kit.start_cluster(
        device="gpu", n_workers=1, enable_cudf_spill=True, device_memory_limit="off", rmm_pool_size="1GiB", rmm_maximum_pool_size="1GiB", verbose=False
    ) as session:
        parts = [session.client.submit(_cudf_part, i, 5_000_000, pure=False) for i in range(12)]  # 12 x 40 MB
        wait(parts)
        worker = session.memory().workers[0]
        assert worker.spilled_to_host > 200 * MiB, worker  # 480 MB held, at most 256 MiB on the device
        assert worker.device_data is not None and worker.device_data <= 300 * MiB, worker
        del parts


def _cudf_spill_manager_exists() -> bool:
    from cudf.core.buffer.spill_manager import get_global_manager

    return get_global_manager() is not None


def _enable_cudf_spill() -> None:
    import cudf

    cudf.set_option("spill", True)


def test_reading_the_figures_leaves_cudf_spilling_settable(no_leaks):
    """Defect 11 on a GPU: after several heartbeats (each reads the figures) with cuDF imported on the
    worker, turning cuDF spilling on still takes effect."""
    pytest.importorskip("cudf")
    with kit.start_cluster(device="gpu", n_workers=1, verbose=False) as session:
        session.client.run(__import__, "cudf")
        time.sleep(3)  # ~6 heartbeats
        session.memory()
        session.client.run(_enable_cudf_spill)
        assert set(session.client.run(_cudf_spill_manager_exists).values()) == {True}


def test_an_idle_pool_cluster_holds_no_data(no_leaks):
    """Defect 4 on a GPU: the pool's reservation shows as the pool, not as data near the spill limit."""
    with kit.start_cluster(device="gpu", n_workers=1, rmm_pool_size="2GiB", verbose=False) as session:
        worker = session.memory().workers[0]
        assert worker.device_data == 0 and worker.rmm_pool_size == 2 * 2**30, worker
        assert worker.gpu_total_in_use >= 2 * 2**30 and worker.device_fraction in (0.0, None), worker


def test_c_memory_has_device_numbers_without_spilling(no_leaks):
    with kit.start_cluster(device="gpu", n_workers=1, device_memory_limit="off", memory_limit=None, verbose=False) as session:
        assert session.memory().workers[0].device_memory_total


def _gpu_count() -> int:
    import pynvml

    pynvml.nvmlInit()
    return int(pynvml.nvmlDeviceGetCount())


def test_b_process_cuda_visible_devices_is_honoured(no_leaks, monkeypatch):
    """Defect 13: with one GPU, CUDA_VISIBLE_DEVICES=0 is what happens anyway; the second GPU shows it."""
    if _gpu_count() < 2:
        pytest.skip("needs 2 GPUs: with one, CUDA_VISIBLE_DEVICES=0 cannot be told from the default")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    with kit.start_cluster(device="gpu", verbose=False) as session:
        assert session.n_workers == 1
        assert any("CUDA_VISIBLE_DEVICES" in note for note in session.notes)
        assert [w.device_index for w in session.memory().workers] == [1]


def test_f_default_allocator_is_rmm_async(no_leaks):
    from gpu_dask_kit.allocator import rmm_resource_name

    with kit.start_cluster(device="gpu", n_workers=1, verbose=False) as session:
        assert set(session.client.run(rmm_resource_name).values()) == {"CudaAsyncMemoryResource"}


_CLIENT_CONTEXT_SCRIPT = """
import os, sys
import gpu_dask_kit as kit
from gpu_dask_kit.compute import random_array
if __name__ == "__main__":
    with kit.start_cluster(device="gpu", n_workers=1, verbose=False) as session:
        x = random_array((4_000, 100), chunks=(1_000, 100), seed=1).persist()
        total = session.client.compute(x.sum())
        print("SUM", session.client.submit(float, total).result())  # to float on the worker: no CuPy array here
        # This process's own primary contexts, asked of the CUDA driver (cuInit makes none): NVML's process
        # ids are the host's, which differ from os.getpid() in a container.
        from cuda.bindings import driver
        (err,) = driver.cuInit(0)
        err, count = driver.cuDeviceGetCount()
        active = []
        for i in range(count):
            err, device = driver.cuDeviceGet(i)
            err, flags, is_active = driver.cuDevicePrimaryCtxGetState(device)
            active.append(bool(is_active))
        print("CLIENT_HAS_CONTEXT", any(active))
"""


def test_g_random_array_makes_no_cuda_context_in_the_notebook_process(tmp_path, no_leaks):
    """In a fresh process (this test process may already have a context of its own)."""
    import subprocess
    import sys

    script = tmp_path / "client.py"
    script.write_text(_CLIENT_CONTEXT_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "CLIENT_HAS_CONTEXT False" in out.stdout, out.stdout + out.stderr
