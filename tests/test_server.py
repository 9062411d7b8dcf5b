"""The Jupyter server extension (gpu_dask_kit.server) against a real Jupyter server (pytest-jupyter).

Real parts throughout: a real CPU LocalCluster, the real registry (in a temp dir), real NVML
detection. Only NVML itself is faked, in the sampler tests, because this machine has no GPU.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import types

import psutil
import pytest
from jupyter_server.utils import url_path_join

import gpu_dask_kit
from gpu_dask_kit import environment, registry
from gpu_dask_kit.server import PAGE_CONFIG_KEY
from gpu_dask_kit.server.sampler import GpuSampler

pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = "gpu-dask-kit/api"
VALID_UNKNOWN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def jp_server_config():
    return {
        "ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}},
        "GpuDaskKit": {"workshop_notebook": "course/00_start_here.ipynb", "gpu_sample_interval": 1.0},
    }


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    path = tmp_path / "gdk-runtime"
    monkeypatch.setenv("GPU_DASK_KIT_RUNTIME_DIR", str(path))
    return path


@pytest.fixture
def state(jp_serverapp):
    return jp_serverapp.web_app.settings["gpu_dask_kit_state"]


async def fetch_json(jp_fetch, *parts, method="GET"):
    response = await jp_fetch(API, *parts, method=method, raise_error=False)
    body = response.body.decode() if response.body else ""
    return response.code, (json.loads(body) if body else None)


# --- authentication ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "environment"),
        ("GET", "gpus"),
        ("GET", "sessions"),
        ("GET", f"sessions/{VALID_UNKNOWN}"),
        ("DELETE", f"sessions/{VALID_UNKNOWN}"),
    ],
)
async def test_every_route_needs_authentication(jp_serverapp, http_server_client, jp_base_url, method, path):
    url = url_path_join(jp_base_url, API, path)
    response = await http_server_client.fetch(url, method=method, raise_error=False)
    # APIHandler answers an unauthenticated request with 403 (no login redirect for API routes)
    assert response.code == 403
    assert "traceback" not in response.body.decode()


# --- environment and gpus ----------------------------------------------------------------------------


async def test_environment_is_detect_to_dict(jp_fetch):
    code, model = await fetch_json(jp_fetch, "environment")
    assert code == 200
    expected = environment.detect().to_dict()
    assert set(model) == set(expected) | {"memory_warn", "memory_critical"}  # server.models.environment_model
    assert (model["memory_warn"], model["memory_critical"]) == (0.8, 0.95)
    assert model["mode"] == expected["mode"] and model["reason"] == expected["reason"]
    assert model["libraries"]["dask"]["installed"] is True


async def test_gpus_real_path_without_gpu(jp_fetch):
    report = environment.detect()
    code, model = await fetch_json(jp_fetch, "gpus")
    assert code == 200
    assert set(model) == {"gpus", "reason", "time"}
    if report.gpus:
        pytest.skip("this machine has a GPU; the no-GPU path is tested where there is none")
    assert model["gpus"] == []
    assert isinstance(model["reason"], str) and model["reason"]


async def test_gpus_one_shared_sampler_at_a_bounded_rate(jp_fetch, state):
    before = state.sampler.reads
    replies = await asyncio.gather(*(fetch_json(jp_fetch, "gpus") for _ in range(20)))
    assert all(code == 200 for code, _ in replies)
    for _ in range(10):
        await fetch_json(jp_fetch, "gpus")
    # 30 requests within well under the 1 s interval: one read (two if the clock ticked over)
    assert state.sampler.reads - before <= 2


class FakeNVML(types.SimpleNamespace):
    """Just the pynvml calls sample_gpus makes, for two fake GPUs. Records the calling threads."""

    def __init__(self):
        super().__init__(threads=set(), count_calls=0)

    def nvmlInit(self):
        pass

    def nvmlDeviceGetCount(self):
        self.threads.add(threading.current_thread().name)
        self.count_calls += 1
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetMemoryInfo(self, h):
        return types.SimpleNamespace(total=16 * 2**30, used=(h + 1) * 2**30, free=(15 - h) * 2**30)

    def nvmlDeviceGetUtilizationRates(self, h):
        return types.SimpleNamespace(gpu=40 + h, memory=10)

    def nvmlDeviceGetName(self, h):
        return b"Fake A100"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-fake-{h}"


@pytest.fixture
def fake_nvml(monkeypatch):
    fake = FakeNVML()
    monkeypatch.setattr(environment, "_nvml", lambda: fake)
    environment._reset_nvml_for_tests()
    yield fake
    environment._reset_nvml_for_tests()


async def test_sampler_with_fake_nvml_reads_off_the_loop_at_a_bounded_rate(fake_nvml):
    sampler = GpuSampler(interval=0.5)
    try:
        first, *rest = await asyncio.gather(*(sampler.get() for _ in range(10)))
        assert all(r is first for r in rest)
        assert [g["uuid"] for g in first["gpus"]] == ["GPU-fake-0", "GPU-fake-1"]
        assert first["gpus"][1] == {
            "index": 1,
            "name": "Fake A100",
            "uuid": "GPU-fake-1",
            "memory_total": 16 * 2**30,
            "memory_used": 2 * 2**30,
            "utilization": 41,
        }
        assert first["reason"] is None
        assert sampler.reads == 1 and fake_nvml.count_calls == 1
        assert fake_nvml.threads and all(t.startswith("gpu-dask-kit-nvml") for t in fake_nvml.threads)
        assert threading.current_thread().name not in fake_nvml.threads
        await asyncio.sleep(0.6)
        second = await sampler.get()
        assert second["time"] > first["time"] and sampler.reads == 2
    finally:
        sampler.close()


async def test_gpus_route_with_fake_nvml(jp_fetch, fake_nvml):
    code, model = await fetch_json(jp_fetch, "gpus")
    assert code == 200
    assert len(model["gpus"]) == 2 and model["gpus"][0]["memory_used"] == 2**30


async def test_sampler_survives_a_failing_sample():
    def broken():
        raise RuntimeError("driver fell over")

    sampler = GpuSampler(interval=1.0, sample=broken)
    try:
        model = await sampler.get()
        assert model["gpus"] == [] and "driver fell over" in model["reason"]
    finally:
        sampler.close()


# --- sessions ----------------------------------------------------------------------------------------


async def test_sessions_empty(jp_fetch):
    code, model = await fetch_json(jp_fetch, "sessions")
    assert code == 200
    assert model["sessions"] == [] and isinstance(model["time"], float)


@pytest.mark.parametrize("bad", ["xyz", "0" * 31, "A" * 32, "0123456789abcdef0123456789abcdeg", "..%2F..%2Fetc"])
async def test_malformed_session_id_is_400(jp_fetch, bad):
    for method in ("GET", "DELETE"):
        code, model = await fetch_json(jp_fetch, f"sessions/{bad}", method=method)
        assert code == 400, (method, bad)
        assert "32 lowercase hex" in model["message"] and not model.get("traceback")


async def test_unknown_session_id_is_404(jp_fetch):
    for method in ("GET", "DELETE"):
        code, model = await fetch_json(jp_fetch, f"sessions/{VALID_UNKNOWN}", method=method)
        assert code == 404, method
        assert VALID_UNKNOWN in model["message"]


async def test_other_verbs_are_405(jp_fetch):
    response = await jp_fetch(API, "environment", method="PUT", body="{}", raise_error=False)
    assert response.code == 405


@pytest.fixture
def cpu_session():
    session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, verbose=False)
    yield session
    session.close()


async def wait_for(predicate, timeout=10.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(interval)


async def test_session_lifecycle_with_a_real_cpu_cluster(jp_fetch, cpu_session):
    sid = cpu_session.id
    pids = [p["pid"] for p in registry.get_session(sid).processes]
    assert pids and all(psutil.pid_exists(p) for p in pids)

    async def listed_with_memory():
        code, model = await fetch_json(jp_fetch, "sessions")
        assert code == 200
        items = [s for s in model["sessions"] if s["id"] == sid]
        return items[0] if items and items[0]["memory"] else None

    item = await wait_for(listed_with_memory)
    assert item, "the session (with memory totals) did not appear in GET sessions"
    assert item["alive"] is True and item["stale"] is False and item["mode"] == "cpu"
    assert item["started_by"] == "notebook" and item["in_server"] is False
    assert item["scheduler_address"] == cpu_session.scheduler_address
    assert item["memory"]["workers"] == 1 and item["memory"]["host_memory_used"] > 0
    # jupyter-server-proxy is not enabled in this test server: no proxied path
    assert item["dashboard_path"] is None and item["dashboard_link"].startswith("http://127.0.0.1:")

    code, one = await fetch_json(jp_fetch, f"sessions/{sid}")
    assert code == 200 and one["id"] == sid

    code, body = await fetch_json(jp_fetch, f"sessions/{sid}", method="DELETE")
    assert code == 204 and body is None
    _gone, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=15)
    assert not alive, f"worker processes still running: {alive}"
    code, model = await fetch_json(jp_fetch, "sessions")
    assert [s["id"] for s in model["sessions"]] == []
    code, _ = await fetch_json(jp_fetch, f"sessions/{sid}", method="DELETE")
    assert code == 404


# --- dask-labextension integration --------------------------------------------------------------------


async def test_server_makes_our_factory_dask_labextensions_default(jp_serverapp):
    import dask

    assert dask.config.get("labextension.factory.module") == "gpu_dask_kit.integrations.labextension"
    assert dask.config.get("labextension.factory.class") == "make_cluster"


async def test_workshop_setting_reaches_page_config(jp_serverapp):
    assert jp_serverapp.web_app.settings["page_config_data"][PAGE_CONFIG_KEY] == "course/00_start_here.ipynb"


async def test_factory_cluster_is_listed_and_closed_through_the_route(jp_fetch):
    from gpu_dask_kit.integrations import labextension as labext

    cluster = await labext.make_cluster(asynchronous=True, device="cpu", n_workers=1)
    try:
        (sid,) = labext.in_server_ids()
        record = registry.get_session(sid)
        assert record.started_by == "labextension" and record.mode == "cpu"
        pids = [p["pid"] for p in record.processes]
        assert pids
        code, model = await fetch_json(jp_fetch, "sessions")
        (item,) = [s for s in model["sessions"] if s["id"] == sid]
        assert item["in_server"] is True and item["alive"] is True
        code, _ = await fetch_json(jp_fetch, f"sessions/{sid}", method="DELETE")
        assert code == 204
        assert cluster.status.name == "closed"
        assert labext.in_server_ids() == set()
        with pytest.raises(KeyError):
            registry.get_session(sid)
        _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=15)
        assert not alive
    finally:
        await cluster.close()


async def test_a_shutdown_while_plus_new_is_still_starting_closes_it_through_dask_labextension(jp_fetch):
    """The sidebar lists a "+ NEW" session from its scheduler's start on, before dask-labextension's request has
    returned; its Shut down then must not close the cluster behind the manager's back (the Dask pane kept a dead
    cluster listed: the closed cluster was registered by the manager after the kit had closed it)."""
    import dask
    from dask_labextension.manager import manager

    from gpu_dask_kit.integrations import labextension as labext

    with dask.config.set({"labextension.factory.kwargs": {"device": "cpu", "n_workers": 1}}):
        launch = asyncio.ensure_future(manager.start_cluster())
        deadline = time.monotonic() + 60
        while not (listed := registry.list_sessions()) and time.monotonic() < deadline:  # what the sidebar lists
            await asyncio.sleep(0.005)
        (sid,) = [r.id for r in listed]
        assert not launch.done(), "the start ended before the shutdown: this test did not test a shutdown during the start"
        code, _ = await asyncio.wait_for(fetch_json(jp_fetch, f"sessions/{sid}", method="DELETE"), 60)
        model = await asyncio.wait_for(launch, 60)
    assert code == 204
    assert manager.list_clusters() == [], "dask-labextension still lists the cluster that was shut down"
    assert model["id"] and labext.in_server_ids() == set()
    with pytest.raises(KeyError):
        registry.get_session(sid)


async def test_factory_cluster_closed_by_its_owner_leaves_no_record():
    from gpu_dask_kit.integrations import labextension as labext

    cluster = await labext.make_cluster(asynchronous=True, device="cpu", n_workers=1)
    (sid,) = labext.in_server_ids()
    await cluster.close()
    assert labext.in_server_ids() == set()
    with pytest.raises(KeyError):
        registry.get_session(sid)


def test_factory_rejects_bad_options_before_starting_anything():
    from gpu_dask_kit import OptionError
    from gpu_dask_kit.integrations import labextension as labext

    with pytest.raises(OptionError):
        labext.make_cluster(asynchronous=True, n_wrokers=2)
    with pytest.raises(TypeError):
        labext.make_cluster("positional")
    assert labext.in_server_ids() == set()


def test_model_doctests():
    import doctest

    from gpu_dask_kit.server import models

    result = doctest.testmod(models)
    assert result.attempted >= 4 and result.failed == 0
