"""The kit's cluster factory for dask-labextension's "+ NEW" button.

dask-labextension 7 starts clusters with ``await Factory(*args, **kwargs, asynchronous=True)`` where
``Factory`` is ``labextension.factory.module`` / ``.class`` from dask.config. The server extension
ships ``server/dask-labextension.yaml`` naming :func:`make_cluster`, so "+ NEW" builds the kit's
cluster (GPU with RMM/CuPy when there is one, CPU otherwise). Its scheduler carries the kit's
:class:`~gpu_dask_kit.plugins.SessionRecordPlugin`, which records it (``started_by="labextension"``), follows
scaling from the Dask pane and removes the record when the cluster closes, whoever closes it.

A synchronous call starts through the session's one path (:func:`gpu_dask_kit.session.start_session`: the
script guard, dask's config, the instructor's ``deploy`` setting, CuPy through RMM, the kit's scheduler
plugins), so it gives the same cluster as ``start_cluster()``, a script or a widget for the same config.
dask-labextension's asynchronous call needs a cluster on the server's own event loop, which that path
cannot build yet: it takes the same checks, plan and plugins on that loop for ``deploy: local``, and refuses
``deploy: slurm`` with the reason (see the note at :func:`make_cluster`).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import dask.config

from .. import credentials, guard
from ..deploy import local
from ..environment import detect
from ..errors import ClusterStartError
from ..links import link_config
from ..options import ClusterOptions
from ..plan import make_plan
from ..plugins import SessionRecordPlugin
from ..resource_check import ResourceCheck
from ..session import ClusterSession, start_session

__all__ = ["make_cluster", "in_server_ids", "close_in_server"]

#: Clusters this process started through the factory, by session id (dropped when collected).
_clusters: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
#: The sessions of the synchronous factory, by id (their close restores the config and ends the processes).
_sessions: dict[str, ClusterSession] = {}
#: Asynchronous starts under way, by session id: set when the start has ended (a shutdown that comes meanwhile waits).
_starting: dict[str, asyncio.Event] = {}
#: How long a shutdown that came during the start waits for dask-labextension's manager to list the new cluster.
MANAGER_WAIT_S = 10.0


def make_cluster(*args: Any, asynchronous: bool = False, **kwargs: Any) -> Any:
    """Build, start and register a kit cluster; keywords are ClusterOptions names.

    With ``asynchronous=True`` (dask-labextension) this returns an awaitable of a cluster on the running
    loop; ``deploy: slurm`` is then refused (its jobs are started by a synchronous dask-jobqueue cluster).
    """
    if args:
        raise TypeError(f"make_cluster takes keyword options only (gpu-dask-kit option names), got positional {args!r}")
    options = ClusterOptions.from_config(**kwargs)  # raises OptionError before anything starts
    if asynchronous:
        return _start_async(options)
    session = start_session(options, started_by="labextension")
    _clusters[session.id or ""] = session.cluster
    _sessions[session.id or ""] = session
    return session.cluster


async def _start_async(options: ClusterOptions) -> Any:
    guard.check_start(options)
    if options.deploy != "local" or options.connect_mode:
        raise ClusterStartError(
            f"The Dask pane's + NEW starts local clusters only, and this config says deploy={options.deploy!r}"
            f"{' with a scheduler to connect to' if options.connect_mode else ''}. Start it from a notebook with "
            "`session = gpu_dask_kit.start_cluster()` (it follows the config), or set gpu-dask-kit.deploy to 'local'."
        )
    dask.config.set(link_config())  # this process's dashboard links go through JupyterHub's proxy there
    report = await asyncio.to_thread(detect, options.device)  # NVML and metadata off the loop
    plan = make_plan(options, report)
    record = local.new_record(options, plan, "labextension")
    started = _starting[record.id] = asyncio.Event()  # the sidebar lists the session from the scheduler's start on
    try:
        security = await asyncio.to_thread(local.session_security, options, record)  # the session's own TLS credentials
        try:
            cluster = await local.build_cluster(options, plan, record=record, asynchronous=True, security=security)
        except BaseException:
            credentials.remove(record.id)
            raise
        check = ResourceCheck()
        cluster.scheduler.add_plugin(check)  # in this process: the scheduler of an asynchronous LocalCluster
        await check.start(cluster.scheduler)
        _clusters[record.id] = cluster
        return cluster
    finally:
        _starting.pop(record.id, None)
        started.set()


def _record_plugin(cluster: Any) -> SessionRecordPlugin | None:
    plugins = getattr(getattr(cluster, "scheduler", None), "plugins", {}) or {}
    plugin = plugins.get(SessionRecordPlugin.name)
    return plugin if isinstance(plugin, SessionRecordPlugin) else None


def in_server_ids() -> set[str]:
    """Ids of the live sessions this process started through the factory, and of those it is starting."""
    live = set(_starting)
    for sid, cluster in list(_clusters.items()):
        plugin = _record_plugin(cluster)
        if plugin is None or plugin.closed:
            _clusters.pop(sid, None)
        else:
            live.add(sid)
    return live


async def close_in_server(session_id: str) -> None:
    """Close a factory cluster of this process on the running loop, through dask-labextension's manager
    when it holds the cluster (so the Dask pane drops it too); the scheduler plugin removes the record.

    A shutdown that comes while the cluster is still starting (the sidebar lists it from the scheduler's start on,
    before the "+ NEW" request has returned) waits for the start to end and for dask-labextension's manager to list
    the cluster, then closes it through the manager: closed behind the manager's back, it would stay in the Dask pane.
    """
    started = _starting.get(session_id)
    if started is not None:
        await started.wait()
    cluster = _clusters.get(session_id)
    if cluster is None:
        raise KeyError(session_id)
    session = _sessions.pop(session_id, None)
    if session is not None:  # the synchronous factory's: its own loop, closed in a thread
        await asyncio.to_thread(session.close_now)
        _clusters.pop(session_id, None)
        return
    try:
        from dask_labextension.manager import manager
    except ImportError:
        manager = None
    held = _held_by(manager, cluster)
    if not held and started is not None and manager is not None:  # the manager registers it once our factory returned
        deadline = asyncio.get_running_loop().time() + MANAGER_WAIT_S
        while not held and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
            held = _held_by(manager, cluster)
    if held:
        await manager.close_cluster(held[0])
    else:
        await cluster.close()
    _clusters.pop(session_id, None)


def _held_by(manager: Any, cluster: Any) -> list[str]:
    """dask-labextension's ids of ``cluster`` (empty without the manager or before it registered the cluster)."""
    models = manager.list_clusters() if manager is not None else []
    return [m["id"] for m in models if m.get("scheduler_address") == cluster.scheduler_address]
