"""deploy="gateway" against a real dask-gateway-server: two users, scale, adapt, reconnect, close, bad input."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import time

import dask.array as da
import dask.config
import pytest
from dask_gateway import BasicAuth, Gateway

import gpu_dask_kit as gdk
from gpu_dask_kit import registry
from gpu_dask_kit.deploy.gateway import stop_user_cluster, user_clusters
from gpu_dask_kit.deploy.gateway_login import KitGateway
from gpu_dask_kit.errors import ConnectError, OptionError
from gpu_dask_kit.options import ClusterOptions

from .conftest import as_user, cluster_pids, wait_gone
from .server import PASSWORD, free_port

pytestmark = pytest.mark.gateway


def clusters_of(gateway, user: str) -> list:
    with KitGateway(gateway.address, auth=BasicAuth(user, PASSWORD)) as client:  # closed: see open_gateway_clients
        return client.list_clusters()


def open_gateway_clients() -> int:
    """dask-gateway clients of this process that are still open (their IO loop runs), collected or not. One left
    open in a reference cycle is closed later by the garbage collector, whichever thread it runs in; once that was
    an IO-loop thread, which then blocked the next client's start for 10 s (CI: ``assert loop is not None``)."""
    count = 0
    for obj in gc.get_objects():
        if isinstance(obj, Gateway):
            try:
                count += obj.loop.asyncio_loop.is_running()
            except RuntimeError:  # closed: its loop is stopped
                pass
    return count


def test_a_user_gets_computes_scales_adapts_and_closes_and_another_user_cannot_see_or_stop_it(gateway):
    with as_user("alice"):
        started = time.monotonic()
        session = gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, n_workers=2, verbose=False)
        to_workers = time.monotonic() - started
        try:
            assert (session.mode, session.n_workers) == ("cpu", 2)
            assert session.dashboard_link.startswith(gateway.address + "/clusters/")  # through the gateway's proxy
            assert int(da.arange(1000, chunks=100).sum().compute()) == 499500
            [mine] = clusters_of(gateway, "alice")
            assert session.client.scheduler.address.endswith(mine.name)
            pids = cluster_pids(gateway)
            assert len(pids) >= 3  # a scheduler and two workers, processes of this machine

            with KitGateway(gateway.address, auth=BasicAuth("bob", PASSWORD)) as bob:
                assert bob.list_clusters() == []
                with pytest.raises(Exception, match="403"):
                    bob.stop_cluster(mine.name)
            assert [c.name for c in clusters_of(gateway, "alice")] == [mine.name]

            session.scale(3)
            assert session.n_workers == 3
            session.adapt(minimum=1, maximum=2)  # the gateway retires idle workers down to the maximum
            deadline = time.monotonic() + 30
            while session.n_workers > 2 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert session.n_workers <= 2
            pids |= cluster_pids(gateway)
        finally:
            started = time.monotonic()
            session.close()
            closed = time.monotonic() - started
    assert clusters_of(gateway, "alice") == []
    assert not wait_gone(pids, gateway)
    print(f"\ngateway figures: start to 2 workers {to_workers:.1f} s, close {closed:.1f} s")


_SCRIPT = """
import os, signal, sys
import dask.config
import gpu_dask_kit as gdk

if __name__ == "__main__":
    with dask.config.set({{"gateway.auth.type": "basic", "gateway.auth.kwargs": {{"username": sys.argv[1], "password": {password!r}}}}}):
        session = gdk.start_cluster(deploy="gateway", gateway_address={address!r}, n_workers=1, verbose=False)
        print("NOTES", session.notes, flush=True)
        print("SCHEDULER", session.client.scheduler.address, flush=True)
        print("SUM", session.client.submit(sum, [1, 2, 3]).result(), flush=True)
        if sys.argv[2] == "die":
            os.kill(os.getpid(), signal.SIGKILL)  # a kernel that dies without closing anything
"""


def run_kernel(gateway, tmp_path, user: str, end: str) -> str:
    script = tmp_path / f"kernel_{user}_{end}.py"
    script.write_text(textwrap.dedent(_SCRIPT.format(password=PASSWORD, address=gateway.address)))
    proc = subprocess.run([sys.executable, str(script), user, end], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert "SUM 6" in proc.stdout, proc.stdout + proc.stderr
    return proc.stdout


def test_after_a_kernel_died_the_next_start_reconnects_and_a_clean_exit_leaves_no_cluster(gateway, tmp_path):
    first = run_kernel(gateway, tmp_path, "carol", "die")
    scheduler = first.split("SCHEDULER ")[1].split()[0]
    assert len(clusters_of(gateway, "carol")) == 1  # the dead kernel's cluster runs on
    second = run_kernel(gateway, tmp_path, "carol", "exit")  # ends without session.close(): the kit closes at exit
    assert f"SCHEDULER {scheduler}" in second and "Reconnected to your running gateway cluster" in second
    deadline = time.monotonic() + 20
    while clusters_of(gateway, "carol") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert clusters_of(gateway, "carol") == []


def test_a_second_user_in_another_process_gets_their_own_cluster(gateway, tmp_path):
    with as_user("alice"):
        session = gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, n_workers=1, verbose=False)
        try:
            out = run_kernel(gateway, tmp_path, "dave", "exit")
            assert "Reconnected" not in out and session.client.scheduler.address not in out
            assert len(clusters_of(gateway, "alice")) == 1
        finally:
            session.close()
    assert clusters_of(gateway, "alice") == [] and clusters_of(gateway, "dave") == []


def refused_quickly(gateway, error, match, **options):
    before = cluster_pids(gateway)
    started = time.monotonic()
    with pytest.raises(error, match=match):
        gdk.start_cluster(deploy="gateway", verbose=False, **options)
    elapsed = time.monotonic() - started
    assert gdk.current_session() is None
    assert clusters_of(gateway, "erin") == []
    assert not wait_gone(cluster_pids(gateway) - before, gateway)
    return elapsed


def test_an_unreachable_gateway_is_a_clear_error_within_seconds(gateway):
    with as_user("erin"):
        address = f"http://127.0.0.1:{free_port()}"
        elapsed = refused_quickly(gateway, ConnectError, r"gateway_address='http://127\.0\.0\.1:\d+': no Dask Gateway answered", gateway_address=address)
    assert elapsed < 5


def test_a_wrong_password_is_a_clear_error_naming_the_auth(gateway):
    with as_user("erin", password="not-the-password"):
        elapsed = refused_quickly(gateway, ConnectError, r"gateway_auth='auto'.*refused the login \(HTTP 401", gateway_address=gateway.address)
    assert elapsed < 5


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"threads_per_worker": 8}, r"threads_per_worker=8 is not accepted: expected a value this gateway accepts for 'worker_cores'"),
        (
            {"gateway_cluster_options": {"image": "rapids:26.10"}},
            r"gateway_cluster_options=\{'image'.*it offers: worker_cores, worker_memory",
        ),
        ({"memory_limit": "0.5GiB", "gateway_cluster_options": {"worker_cores": 3}}, r"gateway_cluster_options=\{'worker_cores': 3\}"),
        ({"rmm_pool_size": "1GiB"}, r'rmm_pool_size=1073741824 is not accepted: expected nothing with deploy="gateway"'),
    ],
)
def test_an_option_the_gateway_does_not_offer_or_refuses_is_an_error_naming_it(gateway, options, match):
    with as_user("erin"):
        assert refused_quickly(gateway, OptionError, match, gateway_address=gateway.address, **options) < 5


def test_device_gpu_on_a_gateway_without_gpu_workers_is_refused_and_the_cluster_shut_down(gateway):
    with as_user("erin"):
        elapsed = refused_quickly(
            gateway,
            OptionError,
            r"device='gpu' is not accepted: expected a gateway whose workers are dask-cuda workers",
            gateway_address=gateway.address,
            device="gpu",
            n_workers=1,
        )
    assert elapsed < 30  # a scheduler and a worker start before the workers can be asked


def test_options_passed_through_reach_the_workers(gateway):
    with as_user("frank"):
        options = {"n_workers": 1, "threads_per_worker": 2, "memory_limit": "0.5GiB"}
        with gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, verbose=False, **options) as session:
            [worker] = session.client.scheduler_info(n_workers=-1)["workers"].values()
            assert (worker["nthreads"], worker["memory_limit"]) == (2, 2**29)
            again = gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, verbose=False, **options)  # the same cell re-run
            assert again is session and len(clusters_of(gateway, "frank")) == 1
    assert clusters_of(gateway, "frank") == []


def test_the_user_lists_and_stops_the_cluster_a_dead_kernel_left(gateway, tmp_path):
    run_kernel(gateway, tmp_path, "heidi", "die")
    with as_user("heidi"):
        options = ClusterOptions.from_config(deploy="gateway", gateway_address=gateway.address)
        [left] = user_clusters(options)
        assert left.status.name == "RUNNING"
        before = cluster_pids(gateway)
        assert stop_user_cluster(options, left.name)
        assert user_clusters(options) == []
    assert not wait_gone(before, gateway)


def test_scale_updates_the_session_record(gateway):
    with as_user("ivan"):
        with gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, n_workers=1, verbose=False) as session:
            session.scale(2)
            [record] = [r for r in registry.list_sessions() if r.id == session.record.id]
            assert record.n_workers == 2 and record.scheduler_address == session.client.scheduler.address


def test_jupyterhub_auth_needs_the_hubs_token_and_auto_sends_it_when_there(gateway, monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    with pytest.raises(OptionError, match=r"gateway_auth='jupyterhub' is not accepted: expected 'jupyterhub' inside a JupyterHub server"):
        gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, gateway_auth="jupyterhub", verbose=False)
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "a-hub-token")  # inside a hub: auto logs in with the token (this gateway wants a password)
    with as_user("judy"), pytest.raises(ConnectError, match=r"gateway_auth='auto'.*refused the login \(HTTP 401.*the hub's token is used"):
        gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, verbose=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN")
    with as_user("judy"), gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, n_workers=1, verbose=False) as session:
        assert session.n_workers == 1  # without the token, auto is dask-gateway's config: the password


def test_no_gateway_address_anywhere_is_an_option_error_naming_it(gateway):
    with as_user("erin"), dask.config.set({"gateway.address": None}):
        refused_quickly(gateway, OptionError, r"gateway_address=None is not accepted: expected the Dask Gateway's address")


def test_the_kits_gateway_calls_leave_no_client_or_loop_thread_open(gateway, tmp_path):
    run_kernel(gateway, tmp_path, "kim", "die")
    gc.collect()
    gc.disable()  # what is left open stays visible: no garbage collection closes it behind the test
    try:
        before = open_gateway_clients()
        with as_user("kim"):
            options = ClusterOptions.from_config(deploy="gateway", gateway_address=gateway.address)
            [left] = user_clusters(options)
            with gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, verbose=False) as session:  # reconnects to it
                assert session.client.scheduler.address.endswith(left.name)
            refused = [
                {"gateway_cluster_options": {"image": "x"}},
                {"device": "gpu", "n_workers": 1},
                {"gateway_address": f"http://127.0.0.1:{free_port()}"},
            ]
            for bad in refused:
                with pytest.raises((OptionError, ConnectError)):
                    gdk.start_cluster(**{"deploy": "gateway", "gateway_address": gateway.address, "verbose": False, **bad})
            assert user_clusters(options) == []
        with as_user("kim", password="not-the-password"), pytest.raises(ConnectError):  # raised through dask-gateway's sync
            gdk.start_cluster(deploy="gateway", gateway_address=gateway.address, verbose=False)
        assert open_gateway_clients() <= before
    finally:
        gc.enable()
