"""GPU jobs under a real SLURM with simulated GPUs (tests/simgpu): the generated `dask cuda worker` job script
runs as a SLURM job on the test SLURM's stand-in GPUs (`--gres=gpu:2`); the stand-in NVML reaches the job
through PYTHONPATH + GPU_DASK_KIT_SIM_GPUS in the environment sbatch passes on (--export=ALL)."""

from __future__ import annotations

import importlib.util
import os

import psutil
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.deploy.slurm import squeue_jobs

from .conftest import SMALL, job_processes

pytestmark = [pytest.mark.slurm, pytest.mark.simgpu]


def _visible_devices(dask_worker):
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def _data_store(dask_worker):
    return type(dask_worker.data).__name__


def cuda_worker_command_lines(job_name: str) -> list[list[str]]:
    """The command lines (/proc/<pid>/cmdline) of the job's `dask cuda worker` processes (run through the
    kit's gpu_dask_kit.deploy.cuda_worker, which resolves sizes on the job's GPUs first)."""
    found = []
    for proc in job_processes(job_name):
        try:
            argv = proc.cmdline()
        except psutil.Error:
            continue
        if argv[1:3] == ["-m", "gpu_dask_kit.deploy.cuda_worker"]:
            found.append(argv)
    return found


def test_gpu_job_runs_dask_cuda_worker_on_simulated_gpus(slurm_clean, sim_gpus, capsys):
    sim_gpus(2)
    session = kit.start_cluster(
        **{**SMALL, "job_memory": "2GiB"}, deploy="slurm", gpus_per_job=2, device_memory_limit=0.7, enable_cudf_spill=True, start_timeout=300
    )
    name = session.record.slurm_job_name
    slurm_clean.append(name)
    try:
        out = capsys.readouterr().out
        # device="auto" picked GPU jobs because the partition's nodes have GPUs (sinfo %G), not this machine
        assert "Started a GPU cluster with 2 worker(s). Its workers are SLURM jobs (dask cuda worker, 2 GPU(s) per job)" in out, out
        assert session.mode == "gpu" and session.record.mode == "gpu"
        assert len(squeue_jobs(name)) == 1  # one job, one worker per GPU of the job
        visible = session.client.run(_visible_devices)
        assert sorted(visible.values()) == ["0,1", "1,0"], visible  # dask-cuda: each worker first on its own GPU
        stores = session.client.run(_data_store)
        assert set(stores.values()) == {"DeviceHostFile"}, stores  # dask-cuda's device -> host spilling store
        workers = session.memory().workers  # the kit's worker metrics: each worker on its own GPU
        assert sorted(w.device_index for w in workers) == [0, 1], workers
        (argv,) = cuda_worker_command_lines(name)
        assert argv[argv.index("--device-memory-limit") + 1] == "0.7"
        assert "--enable-cudf-spill" in argv
        rmm = importlib.util.find_spec("rmm") is not None
        assert ("--rmm-async" in argv) == rmm  # rmm_async=None ("auto"): the async allocator where RMM is installed
        assert argv[argv.index("--memory-limit") + 1] == "1.00GiB"  # 2 GiB job / 2 workers
        assert session.client.submit(sum, [1, 2, 3]).result() == 6
    finally:
        session.close()
    assert squeue_jobs(name) == []
