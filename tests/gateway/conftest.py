"""The gateway tier: a real ``dask-gateway-server`` (local backend, two users) per module, stopped by PID."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import dask.config
import psutil
import pytest

pytest.importorskip("dask_gateway_server", reason="the gateway tier needs dask-gateway-server (pip install 'dask-gateway-server[local]' dask-gateway)")

from .server import PASSWORD, GatewayServer, start_gateway


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gateway: a real dask-gateway-server on 127.0.0.1 (tests/gateway; make test-gateway)")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Iterator[GatewayServer]:
    server = start_gateway(tmp_path_factory.mktemp("gateway"))
    server.baseline = {p.pid for p in server.descendants()}  # its proxy
    yield server
    left = server.stop()
    assert not left, f"processes the gateway server left running (ended by PID now): {left}"


@contextlib.contextmanager
def as_user(name: str, password: str = PASSWORD) -> Iterator[None]:
    """dask-gateway's own config for basic auth (what an admin or a user sets), for one user."""
    with dask.config.set({"gateway.auth.type": "basic", "gateway.auth.kwargs": {"username": name, "password": password}}):
        yield


@pytest.fixture(autouse=True)
def jp_asyncio_loop() -> Iterator[None]:
    """pytest-jupyter's autouse fixtures (its plugin is loaded by test_gateway_server_ext.py, for the whole
    run) replace and close the main thread's event loop around every test, which breaks the sync dask-gateway
    tests here: switched off in this directory; that module brings the real ones back for itself."""
    yield None


@pytest.fixture(autouse=True)
def jp_server_cleanup() -> Iterator[None]:
    yield None


def cluster_pids(server: GatewayServer) -> set[int]:
    """PIDs of the processes the gateway runs for clusters now (its proxy excluded)."""
    return {p.pid for p in server.descendants()} - server.baseline


def wait_gone(pids: set[int], server: GatewayServer, timeout: float = 20.0) -> set[int]:
    """Wait until none of ``pids`` runs; the ones left."""
    deadline = time.monotonic() + timeout
    while True:
        left = {p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)
