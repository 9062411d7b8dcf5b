"""One worker spec for every target (issue 23): the defects the planner alone shows, on fake reports.

Nothing starts here. Each test failed on the code before its fix (marked xfail(strict=True) until then).
"""

from __future__ import annotations

import dataclasses

import pytest

from gpu_dask_kit import ClusterOptions, OptionError
from gpu_dask_kit.deploy.slurm import job_script, make_slurm_plan
from gpu_dask_kit.environment import GPUInfo
from gpu_dask_kit.plan import make_plan

from .simgpu.dask_cuda_paths import job_command
from .test_plan import GiB, report


def slurm_gpu(**changes) -> ClusterOptions:
    return ClusterOptions.from_config(**{"deploy": "slurm", "device": "gpu", "walltime": "00:10:00", **changes})


def job_args(options: ClusterOptions) -> list[str]:
    return job_command(job_script(make_slurm_plan(options, "gpu", cupy_through_rmm=True)))


@pytest.mark.xfail(strict=True, reason="defect 1: the SLURM path decides async vs managed a second time")
def test_slurm_managed_memory_never_gets_the_async_allocator_too():
    argv = job_args(slurm_gpu(rmm_managed_memory=True))
    assert "--rmm-managed-memory" in argv and "--rmm-async" not in argv


@pytest.mark.parametrize(
    "changes, parameter",
    [
        pytest.param(  # the whole GPU: no room for the CUDA context
            {"rmm_pool_size": 1.0}, "rmm_pool_size", marks=pytest.mark.xfail(strict=True, reason="defect 10: SLURM sizes are not checked")
        ),
        ({"rmm_pool_size": "2GiB", "rmm_maximum_pool_size": "1GiB"}, "rmm_maximum_pool_size"),
    ],
)
def test_slurm_sizes_are_refused_like_local_ones_before_any_job(changes, parameter):
    with pytest.raises(OptionError) as local:
        make_plan(ClusterOptions.from_config(**changes), report())
    with pytest.raises(OptionError) as slurm:
        make_slurm_plan(slurm_gpu(**changes), "gpu")
    assert slurm.value.parameter == local.value.parameter == parameter


@pytest.mark.xfail(strict=True, reason="defect 3 (plan part): the string 'default' goes downstream")
def test_unified_memory_plan_carries_bytes_or_none_as_the_device_limit():
    rep = dataclasses.replace(report(), gpus=(GPUInfo(0, "GB10", "GPU-0", None, None),))
    limit = make_plan(ClusterOptions.from_config(), rep).kwargs["device_memory_limit"]
    assert limit is None or isinstance(limit, int)


@pytest.mark.xfail(strict=True, reason="defect 6: a UUID prefix is passed on to dask-cuda as it is")
def test_a_uuid_prefix_becomes_the_exact_uuid_or_is_refused():
    uuid = "GPU-8a4c0d2e-1111-2222-3333-444455556666"
    rep = dataclasses.replace(report(n_gpus=2), gpus=(GPUInfo(0, "A", uuid, 16 * GiB, 16 * GiB), GPUInfo(1, "B", "GPU-8b00", 16 * GiB, 16 * GiB)))
    assert make_plan(ClusterOptions.from_config(CUDA_VISIBLE_DEVICES="GPU-8a"), rep).kwargs["CUDA_VISIBLE_DEVICES"] == uuid
    from_process = dataclasses.replace(rep, visible_devices=("GPU-8a",))
    assert make_plan(ClusterOptions.from_config(), from_process).kwargs["CUDA_VISIBLE_DEVICES"] == uuid
    with pytest.raises(OptionError, match="more than one GPU"):
        make_plan(ClusterOptions.from_config(CUDA_VISIBLE_DEVICES="GPU-8"), rep)


@pytest.mark.xfail(strict=True, reason="defect 9: CuPy is routed through RMM without a pool")
def test_cupy_is_not_routed_through_an_rmm_without_a_pool():
    plain = make_plan(ClusterOptions.from_config(rmm_async=False), report())
    assert "rmm_allocator_external_lib_list" not in plain.kwargs and not plain.client_cupy_rmm
    assert any("CuPy keeps its own memory pool" in n for n in plain.notes), plain.notes
    assert not any("CuPy allocates through RMM" in n for n in plain.notes)
    pooled = make_plan(ClusterOptions.from_config(rmm_pool_size="2GiB"), report())
    assert pooled.kwargs["rmm_allocator_external_lib_list"] == ["cupy"] and pooled.client_cupy_rmm
    assert any("CuPy allocates from the RMM pool" in n for n in pooled.notes), pooled.notes
