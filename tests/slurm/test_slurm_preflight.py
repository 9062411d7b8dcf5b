"""Bad SLURM options fail before any sbatch, through ``kit.start_cluster(deploy="slurm")``: a clear
OptionError naming the option, nothing in squeue, no scheduler or registry record left."""

from __future__ import annotations

import importlib.util
import os

import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.deploy.slurm import start_slurm
from gpu_dask_kit.errors import ClusterStartError, OptionError

from .conftest import my_jobs, slurm_options

pytestmark = pytest.mark.slurm

BAD = [
    # (changes, mode, parameter, words the message must contain)
    (dict(partition="nope"), "cpu", "partition", ["debug", "sinfo"]),
    (dict(walltime="1h"), "cpu", "walltime", ["HH:MM:SS"]),
    (dict(walltime="05:00:00"), "cpu", "walltime", ["04:00:00", "Lower walltime"]),
    (dict(walltime="1-00:00:00"), "cpu", "walltime", ["time limit"]),
    (dict(gpus_per_job=3), "gpu", "gpus_per_job", ["at most 2"]),
    (dict(gpus_per_job=1), "cpu", "gpus_per_job", ["CPU mode"]),
    (dict(job_cores=4096), "cpu", "job_cores", ["cores of one node"]),
    (dict(job_memory="64TiB"), "cpu", "job_memory", ["memory of one node"]),
    (dict(memory_limit="48GiB"), "cpu", "memory_limit", ["memory of one node"]),
    (dict(job_memory="100MiB", gpus_per_job=2), "gpu", "job_memory", ["MiB per worker"]),
    (dict(job_memory="1KiB"), "cpu", "job_memory", ["at least 1MiB"]),
    (dict(job_memory=0.5), "cpu", "job_memory", ["with a unit"]),
    (dict(rmm_pool_size="1GiB"), "gpu", "rmm_pool_size", ["RMM is installed", "gpu-dask-kit[gpu-cu12]"]),
]


@pytest.mark.parametrize("changes, mode, parameter, words", BAD, ids=[f"{p}={c[p] if p in c else next(iter(c.values()))!r}" for c, _, p, _ in BAD])
def test_bad_option_fails_before_sbatch(slurm_clean, changes, mode, parameter, words, tmp_path):
    if parameter == "rmm_pool_size" and importlib.util.find_spec("rmm") is not None:
        pytest.skip("RMM is installed here: rmm_pool_size is accepted")
    before = my_jobs()
    with pytest.raises(OptionError) as info:
        kit.start_cluster(**{"deploy": "slurm", "device": mode, "n_workers": 1, "walltime": "00:10:00", **changes})
    assert info.value.parameter == parameter
    for word in words:
        assert word in str(info.value), str(info.value)
    assert my_jobs() == before
    assert registry.list_sessions() == [] and kit.current_session() is None


def test_directives_slurm_refuses_fail_before_sbatch(slurm_clean, tmp_path):
    before = my_jobs()
    with pytest.raises(ClusterStartError, match=r"SLURM refuses the worker job .*Nothing was submitted"):
        start_slurm(slurm_options(job_memory="300MiB", job_extra_directives=["--constraint=no-such-feature"]), "cpu", log_directory=str(tmp_path / "logs"))
    assert my_jobs() == before
    assert not (tmp_path / "logs").exists()  # nothing created either


def test_no_slurm_commands_says_what_to_install(slurm_clean, monkeypatch, tmp_path):
    before = my_jobs()
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without sbatch/sinfo
    with pytest.raises(OptionError) as info:
        start_slurm(slurm_options(job_memory="300MiB"), "cpu", log_directory=str(tmp_path / "logs"))
    monkeypatch.setenv("PATH", os.defpath + ":/usr/bin")
    assert info.value.parameter == "deploy"
    assert "login node" in str(info.value) and "apt-get install slurmctld slurmd munge slurm-client" in str(info.value)
    assert my_jobs() == before
    assert not (tmp_path / "logs").exists()  # nothing created either
