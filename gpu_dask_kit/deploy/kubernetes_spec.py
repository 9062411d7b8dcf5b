"""The dask-kubernetes operator on paper, made checkable: the kit's worker spec as a ``DaskCluster`` resource,
built by dask-kubernetes' own ``make_cluster_spec`` (no Kubernetes needed, nothing is created).

One worker per pod: GPU workers get ``nvidia.com/gpu: 1`` and run ``dask cuda worker`` with the same
arguments as a SLURM/PBS/SGE/LSF GPU job (:func:`~gpu_dask_kit.deploy.slurm_plan.cuda_worker_args` of the same
:class:`~gpu_dask_kit.plan.WorkerSpec`), CPU workers ``dask worker``; each pod asks for its worker's threads
and host memory. The scheduler pod gets CPU and memory only. There is no ``deploy="kubernetes"``: apply the
resource with ``kubectl apply -f`` (or ``KubeCluster(custom_cluster_spec=...)``) and connect with
``scheduler_address=``. dask-kubernetes is imported here only (``pip install dask-kubernetes``).
"""

from __future__ import annotations

import math
from typing import Any

from ..environment import LibraryInfo
from ..errors import OptionError
from ..plan import WorkerSpec, gpu_spec
from .slurm_plan import DEFAULT_WORKER_MEMORY, choose_mode, cuda_worker_args

__all__ = ["operator_spec", "RAPIDS_LIBRARIES"]

#: What a RAPIDS image has installed (the workers' environment is the image's, not this Python's).
RAPIDS_LIBRARIES = {name: LibraryInfo(True, None) for name in ("rmm", "cupy", "cudf")}


def _make_cluster_spec() -> Any:
    try:
        from dask_kubernetes.operator import make_cluster_spec
    except ImportError as exc:
        raise OptionError("deploy", "kubernetes", "a spec where dask-kubernetes is installed", "pip install dask-kubernetes") from exc
    return make_cluster_spec


def operator_spec(options: Any, *, name: str, image: str, libraries: dict[str, LibraryInfo] | None = None) -> dict[str, Any]:
    """A ``DaskCluster`` resource for ``options`` (a ``ClusterOptions``): ``n_workers`` pods (default 1), one
    worker each. ``libraries``: what the image has installed (default: a RAPIDS image's RMM, CuPy, cuDF)."""
    mode = choose_mode(options.device, options.gpus_per_job, 0)
    if mode == "gpu" and (options.gpus_per_job or 1) != 1:
        raise OptionError("gpus_per_job", options.gpus_per_job, "1 (one GPU per worker pod)", "ask for more workers (n_workers) instead")
    threads = options.threads_per_worker or 1
    memory = options.memory_limit if isinstance(options.memory_limit, int) and not isinstance(options.memory_limit, bool) else DEFAULT_WORKER_MEMORY[mode]
    n_workers = options.n_workers or 1
    size = {"cpu": str(threads), "memory": f"{math.ceil(memory / 2**20)}Mi"}
    flags = ["--nthreads", str(threads), "--memory-limit", str(memory)]
    if mode == "gpu":
        spec = WorkerSpec("gpu", n_workers, threads, memory, **gpu_spec(options, libraries or RAPIDS_LIBRARIES, [], workers_per_unit=1))
        command = ["dask", "cuda", "worker", *flags, *cuda_worker_args(spec)]
        resources = {"requests": size, "limits": {**size, "nvidia.com/gpu": 1}}
    else:
        command = ["dask", "worker", *flags]
        resources = {"requests": size, "limits": dict(size)}
    cluster = _make_cluster_spec()(name=name, image=image, n_workers=n_workers, resources=resources, worker_command=command)
    scheduler = cluster["spec"]["scheduler"]["spec"]["containers"][0]
    scheduler["resources"] = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}  # no GPU for the scheduler
    if scheduler["args"][:1] == ["dask-scheduler"]:  # dask-kubernetes 2026.3.0's template; current distributed has only `dask scheduler`
        scheduler["args"] = ["dask", "scheduler", *scheduler["args"][1:]]
    return dict(cluster)
