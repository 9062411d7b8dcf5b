"""The sidebar's "Dask Gateway clusters" section in a real JupyterLab against a real dask-gateway-server:
the user's cluster is listed (light and dark theme screenshots), Stop stops it, nothing is left.

This module's own ``jupyter lab``, started with dask-gateway's config (basic auth as "alice") and the kit's
``gateway_address`` in its environment, as a hub's admin would set them.
"""

from __future__ import annotations

import os
import time

import pytest
from conftest import ARTIFACTS, run_command, save_screenshot

pytest.importorskip("dask_gateway_server", reason="needs dask-gateway-server (pip install 'dask-gateway-server[local]' dask-gateway)")

from dask_gateway import BasicAuth

from gpu_dask_kit.deploy.gateway import KitGatewayCluster
from gpu_dask_kit.deploy.gateway_login import KitGateway
from tests.gateway.server import PASSWORD, start_gateway

SIDEBAR = "#gpu-dask-kit-sidebar"
DARK = "JupyterLab Dark"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    server = start_gateway(tmp_path_factory.mktemp("gateway"))
    baseline = {p.pid for p in server.descendants()}
    names = {
        "DASK_GATEWAY__AUTH__TYPE": "basic",
        "DASK_GATEWAY__AUTH__KWARGS__USERNAME": "alice",
        "DASK_GATEWAY__AUTH__KWARGS__PASSWORD": PASSWORD,
        "DASK_GPU_DASK_KIT__GATEWAY_ADDRESS": server.address,
    }
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(names)
    try:
        yield server, baseline
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        left = server.stop()
        assert not left, f"processes the gateway server left running (ended by PID now): {left}"


@pytest.fixture(scope="module")
def lab_server(gateway, own_lab_server):
    """This module's own server, started after the gateway's config is in the environment."""
    assert own_lab_server.env["DASK_GPU_DASK_KIT__GATEWAY_ADDRESS"] == gateway[0].address
    return own_lab_server


def test_the_sidebar_lists_and_stops_the_users_gateway_cluster(lab_page, lab_server, gateway):
    server, baseline = gateway
    alice = KitGateway(server.address, auth=BasicAuth("alice", PASSWORD))
    bob = KitGateway(server.address, auth=BasicAuth("bob", PASSWORD))
    mine = KitGatewayCluster(address=alice.address, auth=alice.auth, shutdown_on_close=False)
    theirs = KitGatewayCluster(address=bob.address, auth=bob.auth, shutdown_on_close=False)
    try:
        mine.scale(1)
        run_command(lab_page, "gpu-dask-kit:show-sidebar")
        row = lab_page.locator(f"{SIDEBAR} li.gdk-gateway-cluster[data-gateway-cluster='{mine.name}']")
        row.wait_for(state="visible", timeout=30_000)
        lab_page.locator(f"{SIDEBAR} .gdk-gateway-title").wait_for(state="visible")
        assert lab_page.locator(f"{SIDEBAR} li.gdk-gateway-cluster").count() == 1  # not bob's
        lab_page.wait_for_function(
            "(sel) => document.querySelector(sel)?.textContent.includes('1 worker')",
            arg=f"{SIDEBAR} li.gdk-gateway-cluster .gdk-session-title",
            timeout=60_000,
        )
        link = row.locator("a.gdk-dashboard-link")
        assert link.get_attribute("href") == f"{server.address}/clusters/{mine.name}/status"
        lab_page.locator(SIDEBAR).screenshot(path=str(ARTIFACTS / "sidebar-gateway-light.png"))

        run_command(lab_page, "apputils:change-theme", {"theme": DARK})
        lab_page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        time.sleep(1)  # the theme's CSS applied
        lab_page.locator(SIDEBAR).screenshot(path=str(ARTIFACTS / "sidebar-gateway-dark.png"))

        row.locator("button.gdk-gateway-stop").click()
        row.wait_for(state="detached", timeout=40_000)
        assert lab_page.locator(f"{SIDEBAR} .gdk-no-gateway-clusters").is_visible()
        assert [c.name for c in alice.list_clusters()] == []
        assert [c.name for c in bob.list_clusters()] == [theirs.name]
    except Exception:
        save_screenshot(lab_page, "gateway-sidebar-failed")
        raise
    finally:
        for cluster in (mine, theirs):
            cluster.close()  # the local client state only (shutdown_on_close=False)
        for gw in (alice, bob):
            for report in gw.list_clusters():
                gw.stop_cluster(report.name)
            gw.close()  # an open dask-gateway client keeps an IO-loop thread
    deadline = time.monotonic() + 20
    while {p.pid for p in server.descendants()} - baseline and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not {p.pid for p in server.descendants()} - baseline
