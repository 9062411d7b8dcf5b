"""One worker spec on the simulated-GPU tier: MIG slices, the job's GPU on SLURM, the CUDA
major version of the installed wheels, and connect mode from a machine without a GPU. Each test failed on
the code before its fix (each was marked xfail(strict=True) until its fix)."""

from __future__ import annotations

import dask
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.deploy.local import cluster_kwargs
from gpu_dask_kit.deploy.slurm import job_script, make_slurm_plan
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

from .simgpu import simnvml
from .simgpu.dask_cuda_paths import cli_path, job_command
from .test_simulated_gpu_defects import _with_library

pytestmark = pytest.mark.simgpu

GiB = 2**30


def _mig_gpu(sim_gpus):
    return sim_gpus(1, gpus=[{"total": 80 * GiB, "used": 0, "mig": [{"total": 10 * GiB}, {"total": 20 * GiB}]}])


def test_mig_uuid_in_cuda_visible_devices_plans_against_the_slice(sim_gpus, monkeypatch):
    config = _mig_gpu(sim_gpus)
    second = simnvml._slices(simnvml._gpus(config)[0])[1]["uuid"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", second)  # what SLURM gives a job on a MIG slice
    report = kit.detect()
    assert report.mode == "gpu", report.reason_text
    options = ClusterOptions.from_config(device_memory_limit=0.5)
    plan = make_plan(options, report)
    assert cluster_kwargs(plan, options)["CUDA_VISIBLE_DEVICES"] == second
    assert plan.spec.device_memory_limit == 10 * GiB  # half of the 20 GiB slice, not of the 80 GiB GPU


def test_mig_enabled_gpu_by_index_is_sized_by_its_slice(sim_gpus):
    _mig_gpu(sim_gpus)
    report = _with_library(kit.detect(), "rmm")
    plan = make_plan(ClusterOptions.from_config(device_memory_limit=0.5, rmm_pool_size=0.5), report)
    assert plan.spec.device_memory_limit == 5 * GiB  # CUDA runs on the first slice (10 GiB)
    with pytest.raises(kit.OptionError) as info:
        make_plan(ClusterOptions.from_config(rmm_pool_size="16GiB"), report)
    assert info.value.parameter == "rmm_pool_size" and "MIG" in str(info.value)


def test_slurm_pool_fraction_is_resolved_against_the_jobs_gpu(sim_gpus, monkeypatch):
    sim_gpus(4, gpus=[{"total": 80 * GiB, "used": 0}, {}, {}, {"total": 16 * GiB, "used": 0}])
    options = ClusterOptions.from_config(deploy="slurm", device="gpu", walltime="00:10:00", rmm_pool_size=0.5, device_memory_limit=0.75)
    argv = job_command(job_script(make_slurm_plan(options, "gpu", cupy_through_rmm=True)))
    (worker,) = cli_path(monkeypatch, argv, "3")  # SLURM gave the job GPU 3
    assert worker["initial_pool_size"] == 8 * GiB
    assert worker["store"] == ("DeviceHostFile", 12 * GiB)


def test_cuda_major_of_the_wheels_newer_than_the_driver_is_reported(sim_gpus, capsys):
    sim_gpus(1, cuda=11080)  # a driver that runs CUDA 11.8 at most; CuPy here is cupy-cuda12x
    report = kit.detect()
    assert report.mode == "cpu"
    assert "CUDA 12" in report.reason_text and "11.8" in report.reason_text, report.reason_text
    from gpu_dask_kit.cli import main

    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Mode for device='auto': CPU" in out and "CUDA 12" in out
    sim_gpus(1, cuda=12040)  # a CUDA 12 driver runs the cu12 wheels
    assert kit.detect().mode == "gpu"


def test_connect_from_a_machine_without_a_gpu_keeps_numpy_and_says_why(no_leaks, monkeypatch):
    from dask_cuda.plugins import PreImport
    from distributed import Client, LocalCluster

    assert kit.detect().mode == "cpu"  # this test process: no NVIDIA driver (the login node)
    with LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=":0") as cluster, Client(cluster) as owner:
        owner.register_plugin(PreImport([]))  # what every dask-cuda worker carries
        with kit.start_cluster(scheduler_address=cluster.scheduler_address, verbose=False) as session:
            assert session.mode == "gpu", session.reason
            assert dask.config.get("array.backend") == "numpy"
            assert "NumPy" in session.reason, session.reason
