"""The JSON models the server extension adds to the core's (one function per model).

``labextension/src/models.ts`` mirrors each of them with one interface named after the function
(``environment_model`` -> ``IEnvironmentModel``, ``session_model`` -> ``ISessionModel``, ...);
``tests/test_wire_models.py`` checks that they agree.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["memory_totals", "dashboard_path", "session_model", "sessions_reply", "memory_thresholds", "environment_model",
           "gateway_cluster_model", "gateway_clusters_reply"]  # fmt: skip

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""}

#: Summed over the workers; each means what the field of ``monitor.WorkerMemory`` of that name means.
_TOTALS = ("host_memory_used", "host_memory_limit", "spilled_to_host", "spilled_to_disk")
#: Device figures: ``null`` when no worker reports them (a CPU cluster, RMM allocations not tracked, async pool).
_DEVICE_TOTALS = ("device_data", "device_memory_limit", "rmm_used", "rmm_pool_size", "gpu_total_in_use", "device_memory_total")


def memory_totals(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Totals over the workers of a ``ClusterMemory.to_dict()``: host figures count ``null`` as 0; a
    device figure is ``null`` when no worker reports it (unknown is not zero).

    >>> t = memory_totals({"workers": [{"host_memory_used": 5, "device_data": None}, {"host_memory_used": 2, "device_data": 3}]})
    >>> t["host_memory_used"], t["device_data"], t["rmm_used"]
    (7, 3, None)
    """
    workers = snapshot.get("workers") or []
    totals: dict[str, Any] = {"workers": len(workers)}
    for key in _TOTALS:
        totals[key] = int(sum((w.get(key) or 0) for w in workers))
    for key in _DEVICE_TOTALS:
        known = [w[key] for w in workers if w.get(key) is not None]
        totals[key] = int(sum(known)) if known else None
    return totals


def dashboard_path(dashboard_link: str | None, proxy: bool) -> str | None:
    """The dashboard path relative to the server's base URL, through jupyter-server-proxy.

    Only for a dashboard on this machine and only when the proxy is enabled; otherwise None
    (the front end then uses ``dashboard_link`` as it is).

    >>> dashboard_path("http://127.0.0.1:8787/status", proxy=True)
    'proxy/8787/status'
    >>> dashboard_path("http://127.0.0.1:8787/status", proxy=False) is None
    True
    >>> dashboard_path("/user/ada/proxy/8787/status", proxy=True) is None
    True
    """
    if not proxy or not dashboard_link:
        return None
    parts = urlsplit(dashboard_link)
    if not parts.scheme or parts.hostname not in _LOCAL_HOSTS or parts.port is None:
        return None
    return f"proxy/{parts.port}{parts.path or '/status'}"


def session_model(record: dict[str, Any], memory: dict[str, Any] | None, *, in_server: bool, proxy: bool) -> dict[str, Any]:
    """One item of ``GET sessions``: ``SessionRecord.to_dict()`` plus ``dashboard_path``, ``in_server``, ``memory``."""
    return dict(record, dashboard_path=dashboard_path(record.get("dashboard_link"), proxy), in_server=in_server, memory=memory)


def sessions_reply(records: Iterable[dict[str, Any]], memory: dict[str, dict[str, Any] | None], in_server: set[str], proxy: bool) -> dict[str, Any]:
    """The model of ``GET gpu-dask-kit/api/sessions``."""
    return {
        "sessions": [session_model(r, memory.get(r["id"]), in_server=r["id"] in in_server, proxy=proxy) for r in records],
        "time": time.time(),
    }


def memory_thresholds() -> dict[str, float]:
    """The one memory-warning threshold of the widget and the sidebar, as fractions of a limit.

    >>> memory_thresholds()
    {'memory_warn': 0.8, 'memory_critical': 0.95}
    """
    from .. import monitor

    # monitor.py owns MEMORY_WARN / MEMORY_CRITICAL (issue 12); the literals are the same values for a
    # monitor.py that does not define them yet.
    return {"memory_warn": float(getattr(monitor, "MEMORY_WARN", 0.8)), "memory_critical": float(getattr(monitor, "MEMORY_CRITICAL", 0.95))}


def environment_model(report: dict[str, Any]) -> dict[str, Any]:
    """The model of ``GET gpu-dask-kit/api/environment``: ``EnvironmentReport.to_dict()`` plus
    ``memory_warn`` and ``memory_critical`` (:func:`memory_thresholds`).

    >>> sorted(environment_model({"mode": "cpu"}))
    ['memory_critical', 'memory_warn', 'mode']
    """
    return dict(report, **memory_thresholds())


def gateway_cluster_model(report: Any, workers: int | None) -> dict[str, Any]:
    """One item of ``GET gateway-clusters`` from dask-gateway's ``ClusterReport`` (its public fields) and the
    worker count its scheduler gave (None: unknown). ``dashboard_link`` goes through the gateway's proxy.

    >>> import datetime, enum, types
    >>> status = enum.Enum("ClusterStatus", "PENDING RUNNING")
    >>> r = types.SimpleNamespace(name="abc", status=status.RUNNING, dashboard_link="http://gw/clusters/abc/status",
    ...                           start_time=datetime.datetime(2026, 11, 24, 6, 30))
    >>> gateway_cluster_model(r, 2)["status"], gateway_cluster_model(r, 2)["started"]
    ('running', '2026-11-24T06:30:00')
    """
    status = getattr(report.status, "name", str(report.status))
    started = report.start_time.isoformat() if report.start_time is not None else None
    return {"name": report.name, "status": status.lower(), "workers": workers, "dashboard_link": report.dashboard_link, "started": started}


def gateway_clusters_reply(address: str | None, clusters: list[dict[str, Any]], error: str | None) -> dict[str, Any]:
    """The model of ``GET gpu-dask-kit/api/gateway-clusters``: ``configured`` false when no gateway is named
    (the sidebar then shows no gateway section); ``error`` is one sentence, or null."""
    return {"configured": address is not None, "address": address, "clusters": clusters, "error": error, "time": time.time()}
