"""Planning against fake machines: the checks that need hardware we lack, made before anything starts.

Each plan is read through the local translation (``deploy.local.cluster_kwargs``), as LocalCUDACluster gets it."""

import pytest

from gpu_dask_kit import ClusterOptions, OptionError
from gpu_dask_kit.deploy.local import cluster_kwargs
from gpu_dask_kit.environment import EnvironmentReport, GPUInfo, LibraryInfo, Reason
from gpu_dask_kit.plan import make_plan

GiB = 2**30


def report(n_gpus=1, total=16 * GiB, rmm=True, cupy=True, cudf=True, ucxx=False):
    gpus = tuple(GPUInfo(i, "Fake GPU", f"GPU-{i}", total, total) for i in range(n_gpus))
    libs = {
        "dask_cuda": LibraryInfo(True, "26.10", True),
        "rmm": LibraryInfo(rmm, "26.10" if rmm else None),
        "cupy": LibraryInfo(cupy, "13.6" if cupy else None),
        "dask_cudf": LibraryInfo(cudf, None),
        "distributed_ucxx": LibraryInfo(ucxx, None),
    }
    mode, reason, text = ("gpu", Reason.OK, "GPU mode: fake.") if n_gpus else ("cpu", Reason.NO_DRIVER, "CPU mode: no NVIDIA driver was found on this machine.")
    return EnvironmentReport(mode, reason, text, gpus, "580", "13.0", libs, cpu_count=8)


class Planned:
    """A plan with ``kwargs``: the LocalCUDACluster / LocalCluster keywords it translates to."""

    def __init__(self, options, rep):
        self.plan = make_plan(options, rep)
        self.kwargs = cluster_kwargs(self.plan, options)

    def __getattr__(self, name):
        return getattr(self.plan, name)


def plan(rep, **kw):
    return Planned(ClusterOptions.from_config(**kw), rep)


def test_gpu_plan_is_seed_setup_done_right():
    p = plan(report(n_gpus=2), rmm_pool_size="4GiB", device_memory_limit="8GiB")
    assert p.mode == "gpu" and p.n_workers == 2
    kw = p.kwargs
    assert kw["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert kw["rmm_pool_size"] == 4 * GiB and kw["device_memory_limit"] == 8 * GiB
    assert kw["rmm_allocator_external_lib_list"] == ["cupy"]
    assert kw["rmm_async"] is False and "rmm_maximum_pool_size" not in kw  # a pool: never async too
    assert kw["host"] == "127.0.0.1" and kw["dashboard_address"] == "127.0.0.1:0"
    assert p.array_backend == "cupy" and p.dataframe_backend == "cudf"
    assert any("RMM pool of 4.00 GiB" in n for n in p.notes)
    # rmm_async=None (auto, the default): RMM's async allocator when no pool is asked
    auto = plan(report(n_gpus=2)).kwargs
    assert auto["rmm_async"] is True and "rmm_pool_size" not in auto


def test_fractions_resolve_against_the_smallest_selected_gpu_and_align():
    p = plan(report(total=10 * GiB + 1000), rmm_pool_size=0.5, device_memory_limit="80%")
    assert p.kwargs["rmm_pool_size"] % 256 == 0
    assert p.kwargs["rmm_pool_size"] == ((10 * GiB + 1000) // 2) // 256 * 256
    assert p.kwargs["device_memory_limit"] == int(0.8 * (10 * GiB + 1000))


def test_async_instead_of_pool_never_both():
    kw = plan(report(), rmm_async=True).kwargs
    assert kw["rmm_async"] is True and "rmm_pool_size" not in kw


@pytest.mark.parametrize(
    "kw, parameter, fragment",
    [
        ({"device_memory_limit": "64GiB"}, "device_memory_limit", "at most the GPU's memory (16.00 GiB on GPU 0"),
        ({"rmm_pool_size": "17GiB"}, "rmm_pool_size", "at most the GPU's memory"),
        ({"rmm_pool_size": "1GiB", "rmm_maximum_pool_size": "20GiB"}, "rmm_maximum_pool_size", "at most the GPU's memory"),
        ({"CUDA_VISIBLE_DEVICES": "7"}, "CUDA_VISIBLE_DEVICES", "(indices: 0)"),
        ({"CUDA_VISIBLE_DEVICES": "GPU-unknown"}, "CUDA_VISIBLE_DEVICES", "gpu-dask-kit doctor"),
        ({"n_workers": 3}, "n_workers", "one worker per GPU (1 visible)"),
        ({"protocol": "ucx"}, "protocol", "distributed-ucxx"),
    ],
)
def test_machine_checks_on_one_16gib_gpu(kw, parameter, fragment):
    with pytest.raises(OptionError) as info:
        plan(report(), **kw)
    assert info.value.parameter == parameter
    assert fragment in str(info.value)


def test_rmm_options_without_rmm_say_which_extra():
    with pytest.raises(OptionError, match=r"gpu-dask-kit\[gpu-cu12\]"):
        plan(report(rmm=False), rmm_pool_size="1GiB")
    p = plan(report(rmm=False))
    assert "rmm_allocator_external_lib_list" not in p.kwargs


def test_device_gpu_without_gpu_is_an_error_with_the_reason():
    with pytest.raises(OptionError) as info:
        plan(report(n_gpus=0), device="gpu")
    assert info.value.parameter == "device"
    assert "no NVIDIA driver" in str(info.value) and "device='auto'" in str(info.value)


def test_cpu_fallback_keeps_notebook_code_working_and_says_what_it_ignored():
    p = plan(report(n_gpus=0), rmm_pool_size="1GiB", n_workers=2, memory_limit="1GiB")
    assert p.mode == "cpu" and p.array_backend == "numpy" and p.dataframe_backend == "pandas"
    assert p.kwargs["n_workers"] == 2 and p.kwargs["threads_per_worker"] == 4 and p.kwargs["memory_limit"] == GiB
    assert "rmm_pool_size" not in p.kwargs
    assert any("Ignored in CPU mode: rmm_pool_size" in n for n in p.notes)


def test_gpu_options_passed_back_at_their_defaults_are_not_called_ignored():
    """``start_cluster(**options.to_dict())`` passes every option explicitly: only the GPU options that differ from
    their defaults are ignored in CPU mode (a learner was told gpu_assignment was ignored, never having set it)."""
    p = plan(report(n_gpus=0), **ClusterOptions.from_config(n_workers=2).to_dict())
    assert not any("Ignored in CPU mode" in n for n in p.notes), p.notes


def test_cpu_requested_on_a_gpu_machine():
    p = plan(report(n_gpus=2), device="cpu", n_workers=3)
    assert p.mode == "cpu" and p.n_workers == 3


def test_gpu_without_dask_cudf_keeps_pandas_dataframes():
    p = plan(report(cudf=False))
    assert p.dataframe_backend == "pandas" and p.array_backend == "cupy"
    assert any("dask-cudf is not installed" in n for n in p.notes)


def test_host_memory_larger_than_machine():
    with pytest.raises(OptionError, match="at most the machine's memory"):
        plan(report(n_gpus=0), memory_limit="100000TiB")


def test_device_memory_limit_off():
    p = plan(report(), device_memory_limit="off")
    assert p.spec.device_memory_limit is None and p.kwargs["device_memory_limit"] is None  # dask-cuda: no device spilling


@pytest.mark.parametrize("value", [1, 1024, "10MiB"])
def test_a_memory_limit_too_small_for_a_worker_is_refused_with_a_hint(value):
    with pytest.raises(OptionError, match="memory_limit") as info:
        make_plan(ClusterOptions(memory_limit=value), report(0))
    assert "a bare number is bytes" in str(info.value)


def test_more_cpu_workers_than_the_machine_can_run_are_refused():
    assert make_plan(ClusterOptions(n_workers=32, memory_limit="100MiB"), report(0)).n_workers == 32  # 4 x 8 cores
    with pytest.raises(OptionError, match="n_workers=33 is not accepted: expected at most 32 worker processes on this 8-core machine"):
        make_plan(ClusterOptions(n_workers=33, memory_limit="100MiB"), report(0))


def test_planning_touches_no_file_and_reads_no_live_machine(monkeypatch, tmp_path):
    """Pure: the machine comes in the report; local_directory is created by deploy/local.py, not here."""
    import builtins
    import os
    import pathlib

    import psutil

    def refuse(*args, **kwargs):
        raise AssertionError(f"the planner touched the machine: {args!r}")

    rep = report(n_gpus=0)
    object.__setattr__(rep, "host_memory_total", 8 * GiB)  # an 8 GiB machine, whatever this one has
    folder = tmp_path / "not-yet"
    options = ClusterOptions.from_config(local_directory=str(folder), memory_limit="2GiB", n_workers=2)
    for owner, name in [(os, "makedirs"), (os, "mkdir"), (pathlib.Path, "mkdir"), (builtins, "open"), (psutil, "virtual_memory"), (os, "cpu_count")]:
        monkeypatch.setattr(owner, name, refuse)
    try:
        p = make_plan(options, rep)
    finally:
        monkeypatch.undo()
    assert cluster_kwargs(p, options)["local_directory"] == str(folder) and not folder.exists()
    assert p.spec.memory_limit == 2 * GiB
    with pytest.raises(OptionError, match=r"at most the machine's memory \(8.00 GiB\)"):
        plan(rep, memory_limit="9GiB")


def test_unified_memory_gpu_leaves_spilling_to_dask_cuda():
    """A GPU whose NVML memory is "not supported" (GB10 / DGX Spark): no device spilling (the
    spec carries None, never the string "default"); sizes in fractions refused."""
    import dataclasses

    base = report()
    rep = dataclasses.replace(base, gpus=(GPUInfo(0, "GB10", "GPU-0", None, None),))
    p = plan(rep)
    assert p.spec.device_memory_limit is None and any("unified" in n.lower() for n in p.notes)
    assert plan(rep, device_memory_limit=None).spec.device_memory_limit is None
    with pytest.raises(OptionError) as info:
        plan(rep, device_memory_limit="8GiB")
    assert info.value.parameter == "device_memory_limit"
    with pytest.raises(OptionError) as info:
        plan(rep, rmm_pool_size=0.5)
    assert info.value.parameter == "rmm_pool_size"
    assert plan(rep, rmm_pool_size="8GiB").kwargs["rmm_pool_size"] == 8 * GiB


def test_process_cuda_visible_devices_by_uuid_is_passed_on_unchanged():
    import dataclasses

    rep = dataclasses.replace(report(n_gpus=4), visible_devices=("GPU-2", "1"))
    p = plan(rep)
    assert p.kwargs["CUDA_VISIBLE_DEVICES"] == "GPU-2,1" and p.n_workers == 2
    assert any("CUDA_VISIBLE_DEVICES=GPU-2,1 in this process: 2 of 4 GPUs" in n for n in p.notes)
    with pytest.raises(OptionError) as info:
        plan(rep, CUDA_VISIBLE_DEVICES="3")  # not among the GPUs this process may use
    assert "allows only GPU-2, 1" in str(info.value)
