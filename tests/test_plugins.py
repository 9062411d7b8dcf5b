"""The kit's scheduler plugin owns the registry record on every close path; links come from distributed's config."""

import json
import os
import signal
import time

import dask
import psutil

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.integrations.labextension import make_cluster
from gpu_dask_kit.links import CONFIG_KEY, DEFAULT_TEMPLATE

from .conftest import wait_for_no_new_children

ONE = dict(n_workers=1, threads_per_worker=1, memory_limit="1GiB")


def _records(runtime_dir):
    return [json.loads(p.read_text()) for p in runtime_dir.glob("session-*.json")]


def _wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _pids(runtime_dir):
    (record,) = _records(runtime_dir)
    return sorted(p["pid"] for p in record["processes"])


def test_record_is_removed_when_the_cluster_is_closed_directly(no_leaks, runtime_dir):
    session = kit.start_cluster(verbose=False, **ONE)
    (record,) = _records(runtime_dir)
    assert record["id"] == session.id and len(record["processes"]) == 1
    session.cluster.close()  # not through the session: the scheduler's close runs the plugin
    assert _records(runtime_dir) == []
    session.close()
    assert not wait_for_no_new_children(no_leaks)


def test_record_is_removed_on_client_shutdown(no_leaks, runtime_dir):
    session = kit.start_cluster(verbose=False, **ONE)
    (pid,) = _pids(runtime_dir)
    session.client.shutdown()
    assert _wait_for(lambda: _records(runtime_dir) == []), _records(runtime_dir)
    session.close()
    assert not wait_for_no_new_children(no_leaks)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_factory_cluster_record_follows_a_killed_worker_and_client_shutdown(no_leaks, runtime_dir):
    from distributed import Client

    cluster = make_cluster(device="cpu", **ONE)
    try:
        (old,) = _pids(runtime_dir)
        os.kill(old, signal.SIGKILL)  # its nanny starts a new worker process
        assert _wait_for(lambda: _pids(runtime_dir) not in ([old], [])), _records(runtime_dir)
        (new,) = _pids(runtime_dir)
        assert new != old and psutil.pid_exists(new)
        client = Client(cluster)
        client.shutdown()
        assert _wait_for(lambda: _records(runtime_dir) == [])
    finally:
        cluster.close()
    assert not wait_for_no_new_children(no_leaks)


def test_jupyterhub_link_is_the_same_for_session_client_cluster_and_record(no_leaks, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    assert dask.config.get(CONFIG_KEY) == DEFAULT_TEMPLATE
    with kit.start_cluster(verbose=False, **ONE) as session:
        port = session.client.scheduler_info()["services"]["dashboard"]
        expected = f"/user/ada/proxy/{port}/status"
        assert session.dashboard_link == expected
        assert session.client.dashboard_link == expected
        assert session.cluster.dashboard_link == expected
        assert expected in repr(session.cluster) or expected in session.cluster._repr_html_()
        assert registry.list_sessions()[0].dashboard_link == expected
    assert dask.config.get(CONFIG_KEY) == DEFAULT_TEMPLATE  # closing restores distributed's default


def test_without_jupyterhub_links_stay_distributeds_default(no_leaks, monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    with kit.start_cluster(verbose=False, **ONE) as session:
        port = session.client.scheduler_info()["services"]["dashboard"]
        assert session.dashboard_link == session.client.dashboard_link == f"http://127.0.0.1:{port}/status"


REPLACE_UNDER_HUB = """
import dask, gpu_dask_kit as kit
if __name__ == "__main__":
    first = kit.start_cluster(device="cpu", n_workers=1, memory_limit="1GiB", verbose=False)
    second = kit.start_cluster(device="cpu", n_workers=1, memory_limit="1GiB", security=True, verbose=False)
    print("LINK", second.dashboard_link)
    second.close()
    print("AFTER", dask.config.get("distributed.dashboard.link"))
"""


def test_a_replaced_session_behind_jupyterhub_restores_distributeds_link(tmp_path, runtime_dir):
    """In a fresh process (distributed not imported before the first start), replacing a session must not
    restore a missing link template: the next scheduler failed to format its link (found by tests/hub)."""
    import subprocess
    import sys

    script = tmp_path / "replace.py"
    script.write_text(REPLACE_UNDER_HUB)
    env = dict(os.environ, JUPYTERHUB_SERVICE_PREFIX="/user/ada/", GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "LINK /user/ada/proxy/" in run.stdout and f"AFTER {DEFAULT_TEMPLATE}" in run.stdout, run.stdout
