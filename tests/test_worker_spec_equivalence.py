"""One worker spec, two translations, one meaning: for generated option combinations, what
``LocalCUDACluster`` builds from the local keywords equals what ``dask cuda worker`` builds from the SLURM
job script's command line, parsed by dask-cuda's own CLI, on the same (simulated) GPUs.

Both paths run in this process up to the functions they share in dask-cuda 26.10, ``worker_plugins``
(``RMMSetup`` / ``CUDFSetup``) and ``worker_data_function`` (the device spill store); see
``tests/simgpu/dask_cuda_paths.py``. Nothing starts. An invalid combination must be refused by the kit
(``OptionError``, before anything starts; on SLURM at the latest by the job's own check before
``dask cuda worker``) with the same parameter on both paths, never by dask-cuda itself.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import gpu_dask_kit as kit
from gpu_dask_kit.deploy.local import cluster_kwargs
from gpu_dask_kit.deploy.slurm import job_script, make_slurm_plan
from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

from .simgpu.dask_cuda_paths import cli_path, job_command, local_path
from .test_simulated_gpu_defects import _with_library

pytestmark = pytest.mark.simgpu

GiB = 2**30
#: The small profile runs in `make test`; GPU_DASK_KIT_FULL_PROPERTIES=1 runs the full one.
N_EXAMPLES = 300 if os.environ.get("GPU_DASK_KIT_FULL_PROPERTIES") else 30

SIZES = st.sampled_from([0.25, 0.5, 0.9, 0.96, 1.0, "1GiB", "4GiB", "15GiB", "40GiB", GiB + 100])
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "rmm_pool_size": st.none() | SIZES,
        "rmm_maximum_pool_size": st.none() | SIZES,
        "rmm_async": st.sampled_from([None, True, False]),
        "rmm_managed_memory": st.booleans(),
        "device_memory_limit": st.sampled_from([None, 0.5, 0.8, "4GiB", "30GiB"]),
        "enable_cudf_spill": st.booleans(),
    },
)


def _verdict(run) -> tuple[str, object]:
    try:
        return "ok", run()
    except OptionError as exc:
        return "refused", exc.parameter


def _job_refusal(capsys) -> str:
    err = capsys.readouterr().err
    found = re.search(r"this job's worker cannot start: (\w+)=", err)
    assert found, err
    return found.group(1)


@settings(max_examples=N_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(changes=OPTIONS)
@example(changes={"rmm_managed_memory": True})  # defect 1: never --rmm-async with --rmm-managed-memory
@example(changes={"rmm_pool_size": 0.5})  # defect 10: the job's GPUs, not NVML's GPU 0
@example(changes={"rmm_pool_size": 1.0})
@example(changes={"rmm_pool_size": "1GiB", "rmm_managed_memory": True, "device_memory_limit": None})
def test_local_and_job_paths_set_up_the_same_workers(sim_gpus, monkeypatch, capsys, changes):
    sim_gpus(2, gpus=[{"total": 24 * GiB}, {"total": 16 * GiB}])  # GPU 1, the smaller, sizes both workers
    report = _with_library(kit.detect(), "rmm")
    try:
        local_options = ClusterOptions.from_config(**changes)
        slurm_options = ClusterOptions.from_config(deploy="slurm", device="gpu", walltime="00:10:00", gpus_per_job=2, **changes)
    except OptionError:
        return  # refused by the options themselves (e.g. rmm_async=True with a pool): nothing to compare
    libraries = {name: report.libraries[name] for name in ("rmm", "cupy", "cudf")}

    local = _verdict(lambda: cluster_kwargs(make_plan(local_options, report), local_options))
    job = _verdict(lambda: job_command(job_script(make_slurm_plan(slurm_options, "gpu", libraries=libraries))))
    if local[0] == "ok":
        local = ("ok", local_path(monkeypatch, {k: v for k, v in local[1].items() if k != "scheduler_kwargs"}))
    if job[0] == "ok":
        try:
            job = ("ok", cli_path(monkeypatch, job[1], "0,1"))  # SLURM gave the job both GPUs
        except SystemExit as exc:
            assert exc.code == 2, exc
            job = ("refused", _job_refusal(capsys))  # the job's own check, before dask cuda worker
    assert local == job, (changes, local, job)
