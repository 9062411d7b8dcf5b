"""Start a ``LocalCUDACluster`` (GPU) or ``LocalCluster`` (CPU) from a :class:`~gpu_dask_kit.plan.ClusterPlan`.

Every cluster started here carries the kit's scheduler plugin (:class:`~gpu_dask_kit.plugins.SessionRecordPlugin`),
which writes the session's registry record, keeps it in step with the workers, installs the kit's worker
plugins and removes the record when the scheduler closes. Nothing is left running after a failed start.
"""

from __future__ import annotations

import os
from typing import Any

from .. import registry
from ..errors import OptionError
from ..options import ClusterOptions
from ..plan import ClusterPlan
from ..processes import end_processes, processes

__all__ = ["DEATH_TIMEOUT", "new_record", "build_cluster", "start", "worker_pids", "abort", "prepare_local_directory"]

#: Seconds a worker waits for a vanished scheduler (e.g. a killed kernel) before it exits by itself.
DEATH_TIMEOUT = 60


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


def new_record(options: ClusterOptions, plan: ClusterPlan, kind: str) -> registry.SessionRecord:
    """The (unwritten) record the scheduler plugin writes when the scheduler starts."""
    return registry.new_record(scheduler_address=None, dashboard_link=None, backend=plan.mode, n_workers=0, options=options.to_dict(), kind=kind)


def build_cluster(
    options: ClusterOptions, plan: ClusterPlan, *, record: registry.SessionRecord | None = None, asynchronous: bool = False, security: Any = None
) -> Any:
    """Construct (start) the kit's LocalCUDACluster or LocalCluster for ``plan``.

    With ``record`` the scheduler carries the kit's :class:`SessionRecordPlugin` for it. With
    ``asynchronous=True`` the result must be awaited (dask-labextension's factory does that).
    ``security`` (a ``distributed.security.Security``, or True for temporary self-signed certificates)
    makes the scheduler, workers and client talk TLS (``tls://``) instead of plain TCP.
    """
    prepare_local_directory(options)
    kwargs = dict(plan.kwargs, asynchronous=asynchronous, death_timeout=DEATH_TIMEOUT)
    if record is not None:
        from ..plugins import SessionRecordPlugin  # distributed: imported only when a cluster starts

        kwargs["scheduler_kwargs"] = dict(kwargs.get("scheduler_kwargs") or {}, plugins=[SessionRecordPlugin(record)])
    if security is not None and security is not False:
        kwargs.update(security=security, protocol="tls://")
    if plan.mode == "gpu":
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(**kwargs)
    from distributed import LocalCluster

    return LocalCluster(**kwargs)


def start(options: ClusterOptions, plan: ClusterPlan, *, kind: str, security: Any = None) -> tuple[Any, Any, registry.SessionRecord]:
    """Start the cluster and its client, wait for the plan's workers; return ``(cluster, client, record)``."""
    from distributed import Client

    record = new_record(options, plan, kind)
    cluster = client = None
    try:
        cluster = build_cluster(options, plan, record=record, security=security)
        client = Client(cluster, set_as_default=True)
        client.wait_for_workers(plan.n_workers, timeout=options_timeout(options))
        return cluster, client, record
    except BaseException:
        abort(client, cluster)
        raise


def options_timeout(options: ClusterOptions) -> float:
    """Seconds to wait for the workers (``start_timeout`` where the options have it)."""
    return float(getattr(options, "start_timeout", None) or 120)


def worker_pids(client: Any) -> list[int]:
    """PIDs the workers reported to the scheduler when they registered (sorted)."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
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


def wait_for_workers(client: Any, n_workers: int, timeout: float) -> bool:
    """Wait until exactly ``n_workers`` workers are connected (after a scale); False on timeout."""
    import time

    deadline = time.monotonic() + timeout
    while len(client.scheduler_info(n_workers=-1)["workers"]) != n_workers:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
