"""The local target: ``LocalCUDACluster`` (GPU) or ``LocalCluster`` (CPU) from the plan's :class:`WorkerSpec`.

:func:`cluster_kwargs` is the thin translation of the spec into those constructors' keywords (the other
translation, ``dask cuda worker`` arguments, is :func:`gpu_dask_kit.deploy.slurm_plan.cuda_worker_args`).
Every cluster started here carries the kit's scheduler plugin (:class:`~gpu_dask_kit.plugins.SessionRecordPlugin`),
which writes the session's registry record, keeps it in step with the workers, installs the kit's worker
plugins and removes the record when the scheduler closes. Nothing is left running after a failed start.
"""

from __future__ import annotations

import os
from typing import Any

from .. import credentials, registry, scheduler_view
from ..environment import EnvironmentReport, detect
from ..errors import OptionError
from ..options import ClusterOptions
from ..plan import ClusterPlan, WorkerSpec, make_plan
from ..processes import end_processes, processes
from .deployment import Deployment
from .deployment import wait_for_workers as wait_for_workers

__all__ = ["cluster_kwargs", "new_record", "session_security", "build_cluster", "start", "worker_pids", "abort", "prepare_local_directory", "wait_for_workers"]

# No ``death_timeout`` for local clusters: distributed applies it to the nanny's own start as well, and a
# nanny whose worker takes longer than that to spawn (a loaded 2-core machine: >10 s) closes its listener
# while LocalCluster waits for it forever (reproduced with a raw LocalCluster(death_timeout=0.5)). A local
# worker exits when its parent dies through the nanny's pipe watch (distributed's AsyncProcess), so the
# timeout added nothing but that hang.


def prepare_local_directory(options: ClusterOptions) -> None:
    """Create ``local_directory`` (checked before any process starts)."""
    if not options.local_directory:
        return
    try:
        os.makedirs(options.local_directory, exist_ok=True)
    except OSError as exc:
        raise OptionError(
            "local_directory",
            options.local_directory,
            "a folder this user can create and write to",
            f"it could not be created ({exc.strerror or exc}); pick a folder under your home or /tmp",
        ) from exc


def gpu_kwargs(spec: WorkerSpec) -> dict[str, Any]:
    """``LocalCUDACluster``'s GPU keywords for ``spec`` (sizes already bytes: resolved on the selected GPUs)."""
    kwargs: dict[str, Any] = {
        "CUDA_VISIBLE_DEVICES": ",".join(spec.devices),
        "device_memory_limit": spec.device_memory_limit,  # None: no device spilling (dask-cuda: as 0)
        "enable_cudf_spill": spec.enable_cudf_spill,
        "rmm_async": spec.allocator == "async",
        "rmm_managed_memory": spec.allocator in ("managed", "managed_pool"),
    }
    if spec.enable_cudf_spill:
        kwargs["cudf_spill_stats"] = spec.cudf_spill_stats
    if spec.rmm_pool_size is not None:
        kwargs["rmm_pool_size"] = spec.rmm_pool_size
    if spec.rmm_maximum_pool_size is not None:
        kwargs["rmm_maximum_pool_size"] = spec.rmm_maximum_pool_size
    if spec.rmm_release_threshold is not None:
        kwargs["rmm_release_threshold"] = spec.rmm_release_threshold
    if spec.rmm_track_allocations:
        kwargs["rmm_track_allocations"] = True
    if spec.rmm_libraries:
        kwargs["rmm_allocator_external_lib_list"] = list(spec.rmm_libraries)
    return kwargs


def cluster_kwargs(plan: ClusterPlan, options: ClusterOptions) -> dict[str, Any]:
    """``LocalCUDACluster`` / ``LocalCluster`` keywords: the plan's worker spec plus the options' network settings."""
    spec = plan.spec
    kwargs: dict[str, Any] = {"n_workers": spec.n_workers, "threads_per_worker": spec.threads_per_worker, "memory_limit": spec.memory_limit}
    kwargs.update(gpu_kwargs(spec) if spec.mode == "gpu" else {"processes": True})
    kwargs.update(host=options.host, protocol=options.protocol, dashboard_address=options.dashboard_address)
    if options.dashboard_address is None:
        # The scheduler's HTTP server (health, metrics) still listens: keep it on a free loopback port.
        kwargs.update(dashboard_address=f"{options.host}:0", scheduler_kwargs={"dashboard": False})
    if options.local_directory:
        kwargs["local_directory"] = options.local_directory  # created by prepare_local_directory before the start
    return kwargs


def new_record(options: ClusterOptions, plan: ClusterPlan, started_by: str) -> registry.SessionRecord:
    """The (unwritten) record the scheduler plugin writes when the scheduler starts."""
    return registry.new_record(scheduler_address=None, dashboard_link=None, mode=plan.mode, n_workers=0, options=options.to_dict(), started_by=started_by)


def session_security(options: ClusterOptions, record: registry.SessionRecord, security: Any = None) -> Any:
    """What the cluster of ``record`` runs with: the caller's ``Security`` object, else new per-session
    credentials (:mod:`gpu_dask_kit.credentials`) unless ``options.security`` is False (plain TCP)."""
    if security is not None:
        return security
    return credentials.create(record.id) if options.security else None


def build_cluster(
    options: ClusterOptions, plan: ClusterPlan, *, record: registry.SessionRecord | None = None, asynchronous: bool = False, security: Any = None
) -> Any:
    """Construct (start) the kit's LocalCUDACluster or LocalCluster for ``plan``.

    With ``record`` the scheduler carries the kit's :class:`SessionRecordPlugin` for it. With
    ``asynchronous=True`` the result must be awaited (dask-labextension's factory does that).
    ``security`` (a ``distributed.security.Security``, see :func:`session_security`) makes the scheduler,
    workers and client talk TLS (``tls://``) instead of plain TCP.
    """
    prepare_local_directory(options)
    kwargs = dict(cluster_kwargs(plan, options), asynchronous=asynchronous)
    if record is not None:
        from ..plugins import SessionRecordPlugin  # distributed: imported only when a cluster starts

        kwargs["scheduler_kwargs"] = dict(kwargs.get("scheduler_kwargs") or {}, plugins=[SessionRecordPlugin(record)])
    if security is not None:
        kwargs.update(security=security, protocol="tls://")
    if plan.mode == "gpu":
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(**kwargs)
    from distributed import LocalCluster

    return LocalCluster(**kwargs)


def start(options: ClusterOptions, *, started_by: str = "notebook", security: Any = None, report: EnvironmentReport | None = None) -> Deployment:
    """Plan, start the cluster and its client, wait for the spec's workers (the deploy interface)."""
    plan = make_plan(options, report or detect(options.device))  # raises OptionError before anything starts
    record = new_record(options, plan, started_by)
    cluster = client = None
    try:
        cluster = build_cluster(options, plan, record=record, security=session_security(options, record, security))
        client = scheduler_view.new_client(cluster, set_as_default=True)
        client.wait_for_workers(plan.n_workers, timeout=options_timeout(options))
    except BaseException:
        abort(client, cluster)
        credentials.remove(record.id)
        raise
    return Deployment("local", plan.mode, plan.reason, client, record, cluster, plan, list(plan.notes), plan.array_backend, plan.dataframe_backend)


def options_timeout(options: ClusterOptions) -> float:
    """Seconds to wait for the workers (``start_timeout`` where the options have it)."""
    return float(options.start_timeout or 120)


def worker_pids(client: Any) -> list[int]:
    """PIDs the workers reported to the scheduler when they registered (sorted)."""
    workers = scheduler_view.workers(client).values()
    return sorted(int(w["pid"]) for w in workers if w.get("pid"))


def abort(client: Any, cluster: Any) -> None:
    """Close what a failed start left and end its worker processes."""
    procs = []
    if client is not None:
        try:
            procs = processes(worker_pids(client))
        except Exception:
            pass
    for closable in (client, cluster):
        if closable is not None:
            try:
                closable.close()
            except Exception:
                pass
    end_processes(procs, 10)
