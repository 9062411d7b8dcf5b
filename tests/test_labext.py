"""The dask-labextension factory's clusters keep their registry record in step when scaled from the Dask pane."""

import json
import time

import psutil

from gpu_dask_kit import registry
from gpu_dask_kit.integrations.labextension import make_cluster

from .conftest import wait_for_no_new_children


def _record(runtime_dir):
    (path,) = runtime_dir.glob("session-*.json")
    return json.loads(path.read_text())


def test_factory_cluster_scaled_elsewhere_updates_its_record(no_leaks, runtime_dir):
    cluster = make_cluster(device="cpu", n_workers=1, threads_per_worker=1, memory_limit="1GiB")
    try:
        assert _record(runtime_dir)["started_by"] == "labextension" and len(_record(runtime_dir)["processes"]) == 1
        cluster.scale(2)  # what dask-labextension's scale box calls
        deadline = time.monotonic() + 30
        while len(_record(runtime_dir)["processes"]) != 2:
            assert time.monotonic() < deadline, _record(runtime_dir)
            time.sleep(0.2)
        record = _record(runtime_dir)
        pids = [p["pid"] for p in record["processes"]]
        assert record["n_workers"] == 2 and all(psutil.pid_exists(p) for p in pids)
        assert registry.list_sessions()[0].live_processes()
    finally:
        cluster.close()
    assert list(runtime_dir.glob("session-*.json")) == []
    assert not wait_for_no_new_children(no_leaks)
