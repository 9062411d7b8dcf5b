"""The test SLURM of .ci/slurm/start: its stand-in GPUs are handed out like real ones (phase 2 runs
`dask cuda worker` jobs with simulated GPUs on them)."""

from __future__ import annotations

import subprocess

import pytest

from gpu_dask_kit.deploy.slurm import squeue_jobs
from gpu_dask_kit.deploy.slurm_checks import partitions

from .conftest import wait_until

pytestmark = pytest.mark.slurm


def test_partition_limits_as_the_checks_read_them(slurm):
    part = partitions()["debug"]
    assert part.default and part.up and part.max_seconds == 4 * 3600
    assert part.gpus == 2 and part.cpus >= 16


@pytest.mark.parametrize("gpus, visible", [(2, "0,1"), (1, "0")])
def test_gres_jobs_get_cuda_visible_devices(slurm_clean, gpus, visible):
    out = subprocess.run(
        ["srun", "-J", "gdk-test-gres", f"--gres=gpu:{gpus}", "--mem=50M", "-t", "1", "bash", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"CVD={visible}"
    assert wait_until(lambda: not squeue_jobs("gdk-test-gres"), 30)  # srun returns while the job is still completing
