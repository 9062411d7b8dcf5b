"""The server extension's ``gateway-clusters`` routes (the sidebar's "Dask Gateway clusters") against a real
dask-gateway-server and a real Jupyter server (pytest-jupyter): two users each list and stop only their own
clusters; an unreachable or silent gateway and a wrong password are one sentence within seconds."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import dask.config
import pytest
from dask_gateway import BasicAuth
from pytest_jupyter.jupyter_core import jp_asyncio_loop  # noqa: F401  (the real ones here: conftest switches them off)
from pytest_jupyter.jupyter_server import jp_server_cleanup  # noqa: F401

from gpu_dask_kit.deploy.gateway import KitGatewayCluster
from gpu_dask_kit.deploy.gateway_login import KitGateway

from .conftest import as_user, cluster_pids, wait_gone
from .server import PASSWORD, free_port

pytestmark = pytest.mark.gateway
pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = "gpu-dask-kit/api"
TIMEOUT = 2.0  # GpuDaskKit.gateway_timeout of these servers


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}}, "GpuDaskKit": {"gateway_timeout": TIMEOUT}}


async def call(jp_fetch, *parts, method="GET"):
    response = await jp_fetch(API, *parts, method=method, raise_error=False, request_timeout=60)
    body = response.body.decode() if response.body else ""
    return response.code, (json.loads(body) if body else None)


def kit_gateway(address: str):
    return dask.config.set({"gpu-dask-kit.gateway-address": address})


async def listed(jp_fetch, user: str, address: str, want_workers: int | None = None, timeout: float = 60.0) -> dict:
    """GET gateway-clusters as ``user``; with ``want_workers``, until every cluster reports that many workers."""
    deadline = time.monotonic() + timeout
    while True:
        with as_user(user), kit_gateway(address):
            code, reply = await call(jp_fetch, "gateway-clusters")
        assert code == 200, reply
        ready = all(c["workers"] == want_workers for c in reply["clusters"])
        if want_workers is None or ready or time.monotonic() > deadline:
            return reply
        await asyncio.sleep(0.5)


async def test_each_user_lists_and_stops_only_their_own_gateway_clusters(jp_fetch, gateway):
    users = {name: KitGateway(gateway.address, auth=BasicAuth(name, PASSWORD)) for name in ("alice", "bob")}
    started, clusters = {}, []
    try:
        for name, gw in users.items():
            cluster = KitGatewayCluster(address=gw.address, auth=gw.auth, shutdown_on_close=False)
            clusters.append(cluster)
            cluster.scale(1)
            started[name] = cluster.name
        pids = cluster_pids(gateway)
        for name in users:
            reply = await listed(jp_fetch, name, gateway.address, want_workers=1)
            assert (reply["configured"], reply["address"], reply["error"]) == (True, gateway.address, None)
            [mine] = reply["clusters"]
            assert (mine["name"], mine["status"], mine["workers"]) == (started[name], "running", 1)
            assert mine["dashboard_link"] == f"{gateway.address}/clusters/{started[name]}/status"  # the gateway's proxy
            assert mine["started"][:4].isdigit()

        with as_user("bob"), kit_gateway(gateway.address):
            code, reply = await call(jp_fetch, "gateway-clusters", started["alice"], method="DELETE")
        assert code == 502 and "403" in reply["message"], reply
        assert [c.name for c in users["alice"].list_clusters()] == [started["alice"]]  # still running

        t0 = time.monotonic()
        with as_user("alice"), kit_gateway(gateway.address):
            code, _ = await call(jp_fetch, "gateway-clusters", started["alice"], method="DELETE")
        stop_s = time.monotonic() - t0
        assert code == 204
        assert (await listed(jp_fetch, "alice", gateway.address))["clusters"] == []
        assert [c["name"] for c in (await listed(jp_fetch, "bob", gateway.address))["clusters"]] == [started["bob"]]

        with as_user("bob"), dask.config.set({"gateway.address": gateway.address}):  # dask-gateway's own config names it
            code, _ = await call(jp_fetch, "gateway-clusters", started["bob"], method="DELETE")
        assert code == 204
        print(f"\nsidebar stop of a 1-worker gateway cluster: {stop_s:.1f} s (shared, loaded machine)")
    finally:
        for cluster in clusters:
            cluster.close()  # the local client state only (shutdown_on_close=False)
        for gw in users.values():
            for report in gw.list_clusters():
                gw.stop_cluster(report.name)
            gw.close()  # an open dask-gateway client keeps an IO-loop thread (tests/gateway/test_gateway.py)
    assert not wait_gone(pids, gateway)


async def test_no_gateway_configured_means_no_section(jp_fetch):
    with dask.config.set({"gateway.address": None}):
        code, reply = await call(jp_fetch, "gateway-clusters")
    assert code == 200 and (reply["configured"], reply["clusters"], reply["error"]) == (False, [], None)
    code, reply = await call(jp_fetch, "gateway-clusters", "abc", method="DELETE")
    assert code == 404 and "No Dask Gateway is configured" in reply["message"]


async def test_a_wrong_password_is_one_sentence(jp_fetch, gateway):
    with as_user("alice", password="not-the-password"), kit_gateway(gateway.address):
        code, reply = await call(jp_fetch, "gateway-clusters")
    assert code == 200 and reply["clusters"] == []
    assert "refused the login" in reply["error"] and "Traceback" not in reply["error"]


async def test_a_malformed_cluster_name_is_400(jp_fetch, gateway):
    with as_user("alice"), kit_gateway(gateway.address):
        code, reply = await call(jp_fetch, "gateway-clusters", "a b;c", method="DELETE")
    assert code == 400 and "name=" in reply["message"]


async def test_an_unreachable_gateway_is_a_sentence_within_seconds(jp_fetch):
    address = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    t0 = time.monotonic()
    with as_user("alice"), kit_gateway(address):
        code, reply = await call(jp_fetch, "gateway-clusters")
    assert code == 200 and reply["configured"] and reply["clusters"] == []
    assert address in reply["error"] and "Check the address" in reply["error"]
    assert time.monotonic() - t0 < TIMEOUT + 4


async def test_a_silent_gateway_is_a_sentence_within_the_time_box(jp_fetch):
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"http://127.0.0.1:{silent.getsockname()[1]}"
        t0 = time.monotonic()
        with as_user("alice"), kit_gateway(address):
            code, reply = await call(jp_fetch, "gateway-clusters")
        took = time.monotonic() - t0
    assert code == 200 and address in reply["error"], reply
    assert took < TIMEOUT + 4, f"the sidebar waited {took:.1f} s"
