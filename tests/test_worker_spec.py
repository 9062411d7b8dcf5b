"""One worker spec for every target: the defects the planner alone shows, on fake reports.

Nothing starts here. Each test failed on the code before its fix (each was marked xfail(strict=True) until its fix).
"""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from gpu_dask_kit import ClusterOptions, OptionError
from gpu_dask_kit.deploy.local import cluster_kwargs
from gpu_dask_kit.deploy.slurm import job_script, make_slurm_plan
from gpu_dask_kit.environment import GPUInfo, LibraryInfo
from gpu_dask_kit.plan import make_plan

from .simgpu.dask_cuda_paths import job_command
from .test_plan import GiB, report


def slurm_gpu(**changes) -> ClusterOptions:
    return ClusterOptions.from_config(**{"deploy": "slurm", "device": "gpu", "walltime": "00:10:00", **changes})


def local(rep, **changes) -> dict:
    """LocalCUDACluster's keywords for ``changes`` on ``rep`` (plan, then the local translation)."""
    options = ClusterOptions.from_config(**changes)
    return cluster_kwargs(make_plan(options, rep), options)


def job_args(options: ClusterOptions) -> list[str]:
    return job_command(job_script(make_slurm_plan(options, "gpu", cupy_through_rmm=True)))


def test_slurm_managed_memory_never_gets_the_async_allocator_too():
    argv = job_args(slurm_gpu(rmm_managed_memory=True))
    assert "--rmm-managed-memory" in argv and "--rmm-async" not in argv


@pytest.mark.parametrize(
    "changes, parameter",
    [
        ({"rmm_pool_size": 1.0}, "rmm_pool_size"),  # the whole GPU: no room for the CUDA context
        ({"rmm_pool_size": "2GiB", "rmm_maximum_pool_size": "1GiB"}, "rmm_maximum_pool_size"),
    ],
)
def test_slurm_sizes_are_refused_like_local_ones_before_any_job(changes, parameter):
    with pytest.raises(OptionError) as local:
        make_plan(ClusterOptions.from_config(**changes), report())
    with pytest.raises(OptionError) as slurm:
        make_slurm_plan(slurm_gpu(**changes), "gpu")
    assert slurm.value.parameter == local.value.parameter == parameter


def test_unified_memory_plan_carries_bytes_or_none_as_the_device_limit():
    rep = dataclasses.replace(report(), gpus=(GPUInfo(0, "GB10", "GPU-0", None, None),))
    options = ClusterOptions.from_config()
    limit = cluster_kwargs(make_plan(options, rep), options)["device_memory_limit"]
    assert limit is None or isinstance(limit, int)


def test_a_uuid_prefix_becomes_the_exact_uuid_or_is_refused():
    uuid = "GPU-8a4c0d2e-1111-2222-3333-444455556666"
    rep = dataclasses.replace(report(n_gpus=2), gpus=(GPUInfo(0, "A", uuid, 16 * GiB, 16 * GiB), GPUInfo(1, "B", "GPU-8b00", 16 * GiB, 16 * GiB)))
    assert local(rep, CUDA_VISIBLE_DEVICES="GPU-8a")["CUDA_VISIBLE_DEVICES"] == uuid
    from_process = dataclasses.replace(rep, visible_devices=("GPU-8a",))
    assert local(from_process)["CUDA_VISIBLE_DEVICES"] == uuid
    with pytest.raises(OptionError, match="more than one GPU"):
        make_plan(ClusterOptions.from_config(CUDA_VISIBLE_DEVICES="GPU-8"), rep)


def test_cupy_is_not_routed_through_an_rmm_without_a_pool():
    plain = make_plan(ClusterOptions.from_config(rmm_async=False), report())
    assert "rmm_allocator_external_lib_list" not in local(report(), rmm_async=False)
    assert any("CuPy keeps its own memory pool" in n for n in plain.notes), plain.notes
    assert not any("CuPy allocates through RMM" in n for n in plain.notes)
    pooled = make_plan(ClusterOptions.from_config(rmm_pool_size="2GiB"), report())
    assert local(report(), rmm_pool_size="2GiB")["rmm_allocator_external_lib_list"] == ["cupy"]
    assert any("CuPy allocates from the RMM pool" in n for n in pooled.notes), pooled.notes
    # the notebook's own CuPy is not routed through an RMM that has no pool in that process (cuDF does it at import)
    assert any("in this notebook it keeps its own memory pool until cuDF is imported" in n for n in pooled.notes), pooled.notes


def test_with_cudf_installed_the_workers_cupy_goes_through_rmm_even_without_an_allocator():
    """Found on the H100 (2026-11-24): dask-cuda's CUDFSetup imports cuDF on every worker at start, and
    cuDF's import sets CuPy's allocator to RMM's; the note said CuPy kept its own pool."""
    rep = report()
    rep = dataclasses.replace(rep, libraries={**rep.libraries, "cudf": LibraryInfo(True, "26.10")})
    notes = make_plan(ClusterOptions.from_config(rmm_async=False), rep).notes
    assert not any("CuPy keeps its own memory pool" in n for n in notes), notes
    assert any("one cudaMalloc per array" in n and "dask-cuda imports cuDF on every worker" in n for n in notes), notes


def test_the_notebook_note_says_cudf_routes_cupy_through_rmm_once_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "cudf", types.ModuleType("cudf"))
    notes = make_plan(ClusterOptions.from_config(rmm_pool_size="2GiB"), report()).notes
    assert any("in this notebook cuDF, imported here, routes it through RMM" in n for n in notes), notes


@pytest.mark.parametrize("value", [2.0, 1.5, 100.0])
def test_a_float_above_one_is_refused_not_taken_as_bytes(value):
    """Found on the H100: rmm_pool_size=2.0 was 2 bytes, aligned to 0: '--rmm-pool-size 0', no pool, no error."""
    with pytest.raises(OptionError) as local_err:
        make_plan(ClusterOptions.from_config(rmm_pool_size=value), report())
    assert local_err.value.parameter == "rmm_pool_size" and "neither a fraction" in str(local_err.value)
    with pytest.raises(OptionError):
        make_slurm_plan(slurm_gpu(rmm_pool_size=value), "gpu")
    assert ClusterOptions.from_config(rmm_pool_size=4e9).rmm_pool_size == 4_000_000_000  # bytes in float notation


def test_a_pool_below_one_mib_is_refused():
    with pytest.raises(OptionError, match=r"a pool of at least 1\.00 MiB") as err:
        make_plan(ClusterOptions.from_config(rmm_pool_size=100), report())
    assert err.value.parameter == "rmm_pool_size"
    with pytest.raises(OptionError, match=r"a pool of at least 1\.00 MiB"):
        make_slurm_plan(slurm_gpu(rmm_pool_size=100), "gpu")  # was '--rmm-pool-size 0' in the job script
