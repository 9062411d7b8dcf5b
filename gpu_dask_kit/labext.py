"""The kit's cluster factory for dask-labextension's "+ NEW" button.

dask-labextension 7 starts clusters with ``await Factory(*args, **kwargs, asynchronous=True)`` where
``Factory`` is ``labextension.factory.module`` / ``.class`` from dask.config. The server extension
ships ``server/dask-labextension.yaml`` naming :func:`make_cluster`, so "+ NEW" builds the kit's
cluster (GPU with RMM/CuPy when there is one, CPU otherwise), records it in the session registry
(``kind="labextension"``) and removes the record when the cluster closes, whoever closes it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import registry, tracking
from .backend import detect
from .cluster import build_cluster
from .links import dashboard_link_for
from .options import ClusterOptions
from .plan import make_plan

__all__ = ["make_cluster", "in_server_ids", "close_in_server"]

#: Clusters this process started through the factory, by session id.
_clusters: dict[str, Any] = {}


def make_cluster(*args: Any, asynchronous: bool = False, **kwargs: Any):
    """Build, start and register a kit cluster; keywords are ClusterOptions names.

    With ``asynchronous=True`` (dask-labextension) this returns an awaitable of the cluster.
    """
    if args:
        raise TypeError(f"make_cluster takes keyword options only (gpu-dask-kit option names), got positional {args!r}")
    options = ClusterOptions.from_config(**kwargs)  # raises OptionError before anything starts
    if asynchronous:
        return _start_async(options)
    report = detect(options.device)
    plan = make_plan(options, report)
    cluster = build_cluster(options, report=report, plan=plan)
    try:
        _register(cluster, options, plan)
    except BaseException:
        cluster.close()
        raise
    return cluster


async def _start_async(options: ClusterOptions):
    loop = asyncio.get_running_loop()
    report = await loop.run_in_executor(None, detect, options.device)  # NVML and metadata off the loop
    plan = make_plan(options, report)
    cluster = await build_cluster(options, asynchronous=True, report=report, plan=plan)
    try:
        _register(cluster, options, plan)
    except BaseException:
        await cluster.close()
        raise
    return cluster


def _dashboard(cluster: Any, options: ClusterOptions) -> str | None:
    try:
        port = cluster.scheduler_info.get("services", {}).get("dashboard")
    except Exception:
        port = None
    if port is None:
        return getattr(cluster, "dashboard_link", None)
    return dashboard_link_for(options.host, port)


def _register(cluster: Any, options: ClusterOptions, plan: Any) -> registry.SessionRecord:
    record = registry.register(
        scheduler_address=cluster.scheduler_address, dashboard_link=_dashboard(cluster, options),
        backend=plan.backend, n_workers=len(getattr(cluster, "workers", {}) or {}) or plan.n_workers,
        options=options.to_dict(), kind="labextension", worker_pids=tracking.worker_pids(cluster),
    )
    _unregister_on_close(cluster, record.id)
    tracking.follow_workers(cluster, record)  # scaling from the Dask pane updates the record
    _clusters[record.id] = cluster
    return record


def _unregister_on_close(cluster: Any, session_id: str) -> None:
    """Wrap this cluster's ``_close`` (every close path of a deploy.Cluster ends there)."""
    original = cluster._close

    async def _close(*args: Any, **kwargs: Any):
        try:
            return await original(*args, **kwargs)
        finally:
            _clusters.pop(session_id, None)
            try:
                registry.unregister(session_id)
            except Exception:
                pass

    cluster._close = _close


def in_server_ids() -> set[str]:
    """Ids of the live sessions this process started through the factory."""
    return set(_clusters)


async def close_in_server(session_id: str) -> None:
    """Close a factory cluster of this process on the running loop, through dask-labextension's manager
    when it holds the cluster (so the Dask pane drops it too)."""
    cluster = _clusters.get(session_id)
    if cluster is None:
        raise KeyError(session_id)
    try:
        from dask_labextension.manager import manager
    except ImportError:
        manager = None
    for cluster_id, held in list(getattr(manager, "_clusters", {}).items()):
        if held is cluster:
            await manager.close_cluster(cluster_id)
            break
    else:
        await cluster.close()
    _clusters.pop(session_id, None)
    registry.unregister(session_id)
