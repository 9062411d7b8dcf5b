"""The dask-kubernetes operator's ``DaskCluster`` resource built from the kit's worker spec by dask-kubernetes'
own ``make_cluster_spec`` (no Kubernetes cluster: the resource is checked as data)."""

from __future__ import annotations

import shlex

import pytest

from gpu_dask_kit.deploy.kubernetes_spec import operator_spec  # imports dask-kubernetes only when called
from gpu_dask_kit.deploy.slurm import job_script, make_batch_plan
from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.options import ClusterOptions

pytest.importorskip("dask_kubernetes.operator", reason="dask-kubernetes is not installed (pip install dask-kubernetes)")

IMAGE = "rapidsai/base:26.10-cuda12-py3.12"


def containers(resource: dict, role: str) -> dict:
    (container,) = resource["spec"][role]["spec"]["containers"]
    return container


def test_gpu_workers_are_pods_with_one_gpu_running_dask_cuda_worker_with_the_slurm_jobs_flags():
    options = ClusterOptions(device="gpu", n_workers=3, rmm_pool_size="2GiB", device_memory_limit=0.7, enable_cudf_spill=True, memory_limit="8GiB")
    resource = operator_spec(options, name="workshop", image=IMAGE)
    assert resource["apiVersion"] == "kubernetes.dask.org/v1" and resource["kind"] == "DaskCluster"
    assert resource["metadata"]["name"] == "workshop" and resource["spec"]["worker"]["replicas"] == 3
    worker = containers(resource, "worker")
    assert worker["image"] == IMAGE and worker["args"][:3] == ["dask", "cuda", "worker"]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == 1 and worker["resources"]["requests"]["memory"] == "8192Mi"
    # the same dask-cuda flags as a SLURM GPU job for the same options (one worker spec for every target)
    slurm = make_batch_plan(options.replace(deploy="slurm"), "gpu", cupy_through_rmm=True)
    line = next(x for x in job_script(slurm).splitlines() if " -m " in x)
    cuda_flags = shlex.split(line)[shlex.split(line).index("--device-memory-limit") :]
    cuda_flags = cuda_flags[: cuda_flags.index("--name")] if "--name" in cuda_flags else cuda_flags
    args = worker["args"]
    start = args.index("--device-memory-limit")
    assert args[start : start + len(cuda_flags)] == cuda_flags, (args, cuda_flags)
    scheduler = containers(resource, "scheduler")
    assert "nvidia.com/gpu" not in scheduler["resources"]["limits"] and scheduler["args"][:2] == ["dask", "scheduler"]


def test_cpu_workers_run_dask_worker_without_a_gpu():
    resource = operator_spec(ClusterOptions(device="cpu", n_workers=2, threads_per_worker=2, memory_limit="1GiB"), name="cpu", image="ghcr.io/dask/dask")
    worker = containers(resource, "worker")
    assert worker["args"][:2] == ["dask", "worker"] and "nvidia.com/gpu" not in worker["resources"]["limits"]
    assert worker["resources"]["requests"] == {"cpu": "2", "memory": "1024Mi"}
    assert worker["args"][worker["args"].index("--nthreads") + 1] == "2"


def test_more_than_one_gpu_per_pod_is_refused():
    with pytest.raises(OptionError) as info:
        operator_spec(ClusterOptions(deploy="slurm", device="gpu", gpus_per_job=2), name="x", image=IMAGE)
    assert info.value.parameter == "gpus_per_job" and "n_workers" in str(info.value)
