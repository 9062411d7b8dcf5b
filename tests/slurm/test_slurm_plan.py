"""The pure part of deploy/slurm.py: options -> SLURMCluster keywords and the worker job script (no SLURM needed)."""

from __future__ import annotations

import shlex

import pytest

from gpu_dask_kit.deploy.slurm import job_script, make_slurm_plan
from gpu_dask_kit.deploy.slurm_checks import gpus_in_gres, parse_slurm_time
from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.options import ClusterOptions

from .conftest import slurm_options


def worker_line(script: str) -> list[str]:
    line = [x for x in script.splitlines() if " -m " in x]
    assert len(line) == 1, script
    return shlex.split(line[0])


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_gpu_job_script_runs_dask_cuda_worker_with_the_kits_memory_settings():
    opts = slurm_options(
        gpus_per_job=2,
        rmm_pool_size="2GiB",
        rmm_maximum_pool_size="4GiB",
        device_memory_limit=0.7,
        enable_cudf_spill=True,
        job_memory="40GiB",
        partition="gpu",
        account="proj1",
        walltime="02:00:00",
        job_extra_directives=["--constraint=a100"],
    )
    plan = make_slurm_plan(opts, "gpu", job_name="gdk-test", cupy_through_rmm=True)
    script = job_script(plan)
    argv = worker_line(script)
    assert argv[1:3] == ["-m", "gpu_dask_kit.deploy.cuda_worker"]  # resolves sizes on the job's GPUs, then `dask cuda worker`
    assert flag(argv, "--device-memory-limit") == "0.7"
    assert flag(argv, "--rmm-pool-size") == str(2 * 2**30)
    assert flag(argv, "--rmm-maximum-pool-size") == str(4 * 2**30)
    assert "--rmm-async" not in argv  # a pool, never both
    assert "--enable-cudf-spill" in argv
    assert flag(argv, "--set-rmm-allocator-for-libs") == "cupy"
    assert flag(argv, "--memory-limit") == "20.00GiB"  # 40 GiB job / 2 workers
    for line in [
        "#SBATCH --gres=gpu:2",
        "#SBATCH -p gpu",
        "#SBATCH -A proj1",
        "#SBATCH -t 02:00:00",
        "#SBATCH --constraint=a100",
        "#SBATCH -J gdk-test",
        "#SBATCH --mem=40960M",
    ]:
        assert line in script.splitlines(), (line, script)
    assert plan.workers_per_job == 2 and plan.n_workers == 2


def test_gpu_async_allocator_is_the_default_and_spilling_can_be_off():
    plan = make_slurm_plan(slurm_options(device_memory_limit="off"), "gpu")
    argv = worker_line(job_script(plan))
    assert "--rmm-async" in argv and "--rmm-pool-size" not in argv
    assert flag(argv, "--device-memory-limit") == "0"
    assert "--set-rmm-allocator-for-libs" not in argv  # only when CuPy and RMM are there
    assert "#SBATCH --gres=gpu:1" in job_script(plan)
    assert "--rmm-async" not in worker_line(job_script(make_slurm_plan(slurm_options(rmm_async=False), "gpu")))


def test_cpu_job_script_runs_dask_worker_and_counts_workers():
    opts = slurm_options(n_workers=5, threads_per_worker=2, job_cores=4, memory_limit="3GiB")
    plan = make_slurm_plan(opts, "cpu", job_name="gdk-cpu")
    script = job_script(plan)
    argv = worker_line(script)
    assert argv[1:3] == ["-m", "distributed.cli.dask_worker"]
    assert flag(argv, "--nthreads") == "2" and flag(argv, "--memory-limit") == "3.00GiB"
    assert flag(argv, "--host") == "127.0.0.1"  # scheduler on loopback: workers too
    assert "--gres" not in script and "cuda" not in script
    assert "#SBATCH --cpus-per-task=4" in script.splitlines()
    assert plan.n_workers == 5 and plan.workers_per_job == 1


def test_interface_replaces_the_loopback_host():
    plan = make_slurm_plan(slurm_options(interface="ib0"), "cpu")
    argv = worker_line(job_script(plan))
    assert flag(argv, "--interface") == "ib0" and "--host" not in argv
    assert "host" not in plan.kwargs["scheduler_options"]


@pytest.mark.parametrize(
    "changes, mode, parameter",
    [
        (dict(gpus_per_job=1), "cpu", "gpus_per_job"),
        (dict(job_cores=1, threads_per_worker=2), "cpu", "job_cores"),
        (dict(job_cores=2, gpus_per_job=4), "gpu", "job_cores"),
        (dict(memory_limit="8GiB", job_memory="4GiB"), "cpu", "memory_limit"),
    ],
)
def test_inconsistent_job_shapes_name_the_option(changes, mode, parameter):
    with pytest.raises(OptionError) as info:
        make_slurm_plan(slurm_options(**changes), mode)
    assert info.value.parameter == parameter


def test_slurm_times_and_gres():
    assert parse_slurm_time("4:00:00") == 4 * 3600 and parse_slurm_time("1-00:00:00") == 86400
    for bad in ("1h", "", "ten", "00:00:00", "1:2:3:4"):
        with pytest.raises(OptionError):
            parse_slurm_time(bad)
    assert gpus_in_gres("gpu:tesla:8(S:0-1)") == 8 and gpus_in_gres("mps:100") == 0


@pytest.mark.parametrize("name", ["gpu_dask_kit.deploy.slurm_plan", "gpu_dask_kit.deploy.slurm_checks"])
def test_doctests(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_instructor_defaults_come_from_the_dask_config_and_arguments_win():
    import dask.config

    workshop = {"gpu-dask-kit.deploy": "slurm", "gpu-dask-kit.partition": "gpu", "gpu-dask-kit.account": "proj1", "gpu-dask-kit.walltime": "02:00:00"}
    with dask.config.set(workshop):
        opts = ClusterOptions.from_config(device="gpu")
        plan = make_slurm_plan(opts, "gpu", job_name="gdk-test", rmm=False)
        mine = make_slurm_plan(ClusterOptions.from_config(walltime="00:30:00"), "gpu", job_name="gdk-test", rmm=False)
    assert opts.deploy == "slurm"
    assert (plan.kwargs["queue"], plan.kwargs["account"], plan.kwargs["walltime"]) == ("gpu", "proj1", "02:00:00")
    assert mine.kwargs["walltime"] == "00:30:00" and mine.kwargs["queue"] == "gpu"
    assert "--rmm-async" not in plan.kwargs["worker_extra_args"]  # RMM not installed: "auto" means no RMM


def test_deploy_slurm_flags_of_a_script():
    import argparse

    from gpu_dask_kit.scripts import add_cluster_args, options_from_args

    args = add_cluster_args(argparse.ArgumentParser()).parse_args(["--deploy", "slurm", "--partition", "debug", "--job-extra-directives=--qos=high"])
    opts = ClusterOptions.from_config(**options_from_args(args))
    assert (opts.deploy, opts.partition, opts.job_extra_directives) == ("slurm", "debug", ("--qos=high",))
