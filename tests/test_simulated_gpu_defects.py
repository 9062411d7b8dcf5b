"""GPU defects, one test per defect (a..g; h is in tests/test_gpu.py), each failing on the code
before its fix (each was marked xfail(strict=True) until its fix landed). Where the
simulated tier cannot reach a defect, the test says why in its docstring (and test_gpu.py checks it on
a real GPU). The exact fixes, with the upstream lines they rely on: tests/simgpu/FIXES.md.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import time

import numpy as np
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.errors import KitError, OptionError
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

from . import test_simulated_gpu as _tier
from .conftest import kit_children
from .simgpu.fixtures import child_env
from .test_simulated_gpu import BIN, _on_worker_env

cli_cluster = _tier.cli_cluster  # a fixture shared with the tier

pytestmark = pytest.mark.simgpu

GiB = 2**30
NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks")


def _with_library(report, name, version="26.10.0"):
    """The detection report as it would be with ``name`` installed (rmm cannot be installed here: the
    "without RMM" tier tests need it absent). Only for the pure planning step; nothing starts."""
    info = type(report.libraries["dask"])(True, version)
    return dataclasses.replace(report, libraries={**report.libraries, name: info})


# --- a. connect mode recognises dask-cuda workers -------------------------------------------------


def test_a_connect_mode_recognises_dask_cuda_workers(no_leaks, cli_cluster):
    scheduler_file = cli_cluster("cuda")
    with kit.start_cluster(scheduler_file=scheduler_file, connect_timeout=90, verbose=False) as session:
        assert session.mode == "gpu", session.reason
        assert "dask-cuda" in session.reason  # says which mode was chosen and why
        assert kit.current_session().mode == "gpu"
        import dask

        assert dask.config.get("array.backend") == "cupy"


def test_a_plain_dask_worker_on_a_gpu_host_is_not_a_gpu_cluster(no_leaks, cli_cluster):
    """GPU utilisation metrics alone are not proof: a plain `dask worker` on a GPU host reports them too
    (regression guard for the fix of defect a; passes today because nothing is recognised)."""
    from distributed import Client

    scheduler_file = cli_cluster("plain")
    with Client(scheduler_file=scheduler_file, timeout=90) as client:
        client.wait_for_workers(2, timeout=90)
        deadline = time.monotonic() + 30  # until the workers' GPU metrics reached the scheduler
        while time.monotonic() < deadline:
            workers = client.scheduler_info(n_workers=-1)["workers"].values()
            if all("gpu_memory_used" in (w.get("metrics") or {}) for w in workers):
                break
            time.sleep(0.2)
        assert all("gpu_memory_used" in (w.get("metrics") or {}) for w in workers)
    with kit.start_cluster(scheduler_file=scheduler_file, connect_timeout=90, verbose=False) as session:
        assert session.mode == "cpu", session.reason


# --- b. the process's own CUDA_VISIBLE_DEVICES ----------------------------------------------------


def test_b_start_cluster_honours_the_process_cuda_visible_devices(sim_gpus, monkeypatch, no_leaks):
    sim_gpus(2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # e.g. what SLURM or JupyterHub gave this user
    with kit.start_cluster(memory_limit="1GiB", verbose=False) as session:
        assert session.n_workers == 1
        assert list(session.client.run(_on_worker_env).values()) == ["1"]
        assert any("CUDA_VISIBLE_DEVICES" in note for note in session.notes), session.notes


def test_b_plan_honours_cuda_visible_devices_by_uuid(sim_gpus, monkeypatch):
    config = sim_gpus(4)
    from .simgpu import simnvml

    uuid = simnvml._gpus(config)[3]["uuid"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", uuid)
    plan = make_plan(ClusterOptions.from_config(), kit.detect())
    assert plan.n_workers == 1
    assert plan.spec.devices == (uuid,)
    assert any(uuid in note or "CUDA_VISIBLE_DEVICES" in note for note in plan.notes), plan.notes


def test_b_doctor_shows_the_process_cuda_visible_devices(sim_gpus):
    sim_gpus(4)
    out = subprocess.run([os.path.join(BIN, "gpu-dask-kit"), "doctor"], env=child_env(CUDA_VISIBLE_DEVICES="2"), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if "CUDA_VISIBLE_DEVICES" in line]
    assert lines and "2" in lines[0], out.stdout


# --- c. the memory snapshot on a GPU --------------------------------------------------------------


def test_c_memory_has_device_numbers_without_any_spilling(sim_gpus, no_leaks):
    sim_gpus(2, total=16 * GiB, used=3 * GiB)
    with kit.start_cluster(device_memory_limit="off", memory_limit=None, verbose=False) as session:
        workers = session.memory().workers
        assert len(workers) == 2
        for worker in workers:
            assert (worker.device_memory_total, worker.gpu_total_in_use) == (16 * GiB, 3 * GiB), worker
        assert sorted(w.device_index for w in workers) == [0, 1]


def _host_result(nbytes):
    return np.ones(nbytes // 8)  # a NumPy result: it lives on the host and never was on the GPU


def test_c_spilled_to_host_counts_only_what_left_the_gpu(sim_gpus, no_leaks):
    """Nothing can be on a simulated GPU, so every result here is a host object: the truth is 0 spilled."""
    sim_gpus(1, total=16 * GiB)
    with kit.start_cluster(device_memory_limit="4GiB", memory_limit="1GiB", verbose=False) as session:
        futures = session.client.map(_host_result, [8 * 2**20] * 4, pure=False)
        session.client.gather(futures)
        worker = session.memory().workers[0]
        assert worker.managed_bytes >= 32 * 2**20
        assert worker.spilled_to_host == 0, worker
        del futures


# c (RMM pool behind cuDF's spilling adaptor, cuDF's own spilled bytes): needs RMM and cuDF on a real
# GPU; see test_gpu.py::test_c_rmm_pool_size_is_seen_through_cudf_spilling and
# test_c_cudf_own_spilling_is_counted.


# --- d. GPU with cuDF but without cuML ------------------------------------------------------------


class _CudfFrameStandIn:
    """Duck type of a cuDF DataFrame/Series (cuDF needs a GPU to import): the kit's ``to_host`` contract
    is ``.to_pandas()``. Only used to see what the model chosen by the kit does with such an object."""

    __module__ = "cudf.core.dataframe"

    def __init__(self, frame):
        self._frame = frame

    def to_pandas(self):
        return self._frame


def test_d_gpu_without_cuml_converts_or_names_the_extra_before_the_fit():
    """Unit test: cuDF cannot be imported without a GPU, so no tier reaches a real cuDF frame here."""
    import dask
    import pandas as pd

    from gpu_dask_kit.compute import LinearRegression

    if importlib.util.find_spec("cuml") is not None:
        pytest.skip("cuML is installed here; this checks a GPU machine without it")
    frame = pd.DataFrame({"x0": np.arange(20.0), "x1": np.arange(20.0) ** 0.5})
    target = pd.Series(2 * frame["x0"] - frame["x1"])
    with dask.config.set({"array.backend": "cupy", "dataframe.backend": "cudf"}):
        try:
            model = LinearRegression()
        except KitError as exc:  # either: fail before the fit, naming what to install
            assert "cuml" in str(exc).lower() and "gpu-cu12" in str(exc)
            return
        model.fit(_CudfFrameStandIn(frame), _CudfFrameStandIn(target))  # or: convert
        assert np.allclose(np.asarray(model.coef_).ravel(), [2.0, -1.0])


# --- e. checks that belong before the start -------------------------------------------------------


def test_e_cudf_spill_without_cudf_is_refused_before_anything_starts(sim_gpus, no_leaks):
    if importlib.util.find_spec("cudf") is not None:
        pytest.skip("cuDF is installed here")
    sim_gpus(2)
    before = kit_children()
    with pytest.raises(OptionError) as info:
        kit.start_cluster(enable_cudf_spill=True, verbose=False)
    assert info.value.parameter == "enable_cudf_spill"
    assert "gpu-cu12" in str(info.value)
    assert kit_children() == before


@pytest.mark.parametrize("pool", ["12GiB", 1.0, "100%"])
def test_e_rmm_pool_larger_than_free_memory_is_refused(sim_gpus, pool):
    """Planning only (rmm must stay uninstalled for the tier's "install the GPU extra" test): the report
    is the simulated machine's, with RMM marked installed. 16 GiB GPU, 6 GiB used: 10 GiB free."""
    sim_gpus(2, total=16 * GiB, used=6 * GiB)
    report = _with_library(kit.detect(), "rmm")
    with pytest.raises(OptionError) as info:
        make_plan(ClusterOptions.from_config(rmm_pool_size=pool), report)
    assert info.value.parameter == "rmm_pool_size"
    assert "free" in str(info.value)
    make_plan(ClusterOptions.from_config(rmm_pool_size="8GiB"), report)  # what fits is still accepted


def test_e_unified_memory_gpus_are_usable(sim_gpus):
    sim_gpus(1, name="Simulated NVIDIA GB10", memory_supported=False)
    report = kit.detect()
    assert report.mode == "gpu", report.reason_text
    assert "did not answer" not in report.reason_text
    assert [g.name for g in report.gpus] == ["Simulated NVIDIA GB10"]
    out = subprocess.run([os.path.join(BIN, "gpu-dask-kit"), "doctor"], env=child_env(), capture_output=True, text=True, timeout=120)
    assert "Mode for device='auto': GPU" in out.stdout and "unified" in out.stdout.lower(), out.stdout


# --- f. an allocator by default -------------------------------------------------------------------


def test_f_async_allocator_is_the_default_on_gpu_unless_a_pool_is_asked(sim_gpus):
    sim_gpus(2)
    report = _with_library(kit.detect(), "rmm")
    assert ClusterOptions.from_config().rmm_async is None  # "auto" (BRIEF: default None)
    plan = make_plan(ClusterOptions.from_config(), report)
    assert plan.spec.allocator == "async" and plan.spec.rmm_pool_size is None
    pooled = make_plan(ClusterOptions.from_config(rmm_pool_size="2GiB"), report)
    assert pooled.spec.allocator == "pool" and pooled.spec.rmm_pool_size == 2 * GiB
    assert make_plan(ClusterOptions.from_config(rmm_async=False), report).spec.allocator == "none"
    cpu = make_plan(ClusterOptions.from_config(device="cpu"), report)  # on CPU "auto" means nothing
    assert cpu.spec.allocator == "none" and not any("rmm_async" in n for n in cpu.notes)


# --- g. no CUDA in the notebook process; notebook 02's spilling cell ------------------------------


def test_g_random_array_builds_without_cuda_in_the_notebook_process(sim_gpus, no_leaks):
    """On this machine any CUDA runtime call fails (no driver), which makes a client-side CUDA call
    visible: building the array must make none. (On a GPU: test_gpu.py checks NVML for a context.)"""
    pytest.importorskip("cupy")
    sim_gpus(2)
    from gpu_dask_kit.compute import random_array

    with kit.start_cluster(memory_limit="1GiB", verbose=False) as session:
        assert session.mode == "gpu"
        x = random_array((4_000, 10), chunks=(1_000, 10), seed=3)
        assert x.shape == (4_000, 10) and x.numblocks == (4, 1)


def _notebook_constants(name, scale):
    with open(os.path.join(NOTEBOOKS, name)) as f:
        cells = json.load(f)["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "code" and "SPILL_GPU" in "".join(c["source"]))
    namespace: dict = {}
    env = dict(os.environ, GPU_DASK_KIT_SCALE=scale)
    old = os.environ.copy()
    try:
        os.environ.clear()
        os.environ.update(env)
        exec(compile(source, name, "exec"), namespace)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return namespace


@pytest.mark.parametrize("scale", ["small", "full"])
def test_g_notebook_02_spilling_cell_spills_on_a_machine_with_many_gpus(scale):
    """Unit test on the notebook's constants: on 8 GPUs the GPU limits together must stay below the array."""
    ns = _notebook_constants("02_arrays_and_svd.ipynb", scale)
    from gpu_dask_kit.memory import parse_size

    spill = ns["SPILL_GPU"]
    workers = spill.get("n_workers") or 8  # no n_workers: one worker per GPU, 8 on a DGX
    limit = parse_size(spill["device_memory_limit"], "device_memory_limit")
    big = ns["BIG_ROWS"] * ns["N_COLS"] * 8
    assert workers * limit < big, (workers, limit, big)
