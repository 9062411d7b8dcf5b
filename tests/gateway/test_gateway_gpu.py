"""deploy="gateway" with GPU workers: the gateway runs `dask cuda worker` (real dask-cuda 26.10) on simulated GPUs."""

from __future__ import annotations

import json
import os

import pytest
from dask_gateway import BasicAuth

import gpu_dask_kit as gdk
from gpu_dask_kit.deploy.gateway_login import KitGateway
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.session import start_session

from ..simgpu import simnvml
from ..simgpu.fixtures import SIMGPU_DIR
from .conftest import as_user, cluster_pids, wait_gone
from .server import PASSWORD, start_gateway

pytestmark = [pytest.mark.gateway, pytest.mark.simgpu]


@pytest.fixture(scope="module")
def gpu_gateway(tmp_path_factory):
    work = tmp_path_factory.mktemp("gpu-gateway")
    simulated = json.dumps({"count": 1, "state_dir": str(work / "contexts")})  # one GPU per gateway worker
    bindir = os.path.dirname(os.sys.executable)
    environment = {simnvml.ENV: simulated, "PYTHONPATH": os.pathsep.join(p for p in (SIMGPU_DIR, os.environ.get("PYTHONPATH")) if p)}
    server = start_gateway(work, worker_cmd=[os.path.join(bindir, "dask"), "cuda", "worker"], environment=environment)
    server.baseline = {p.pid for p in server.descendants()}
    yield server
    assert not server.stop(), "processes the gateway server left running (ended by PID now)"


def test_dask_cuda_workers_of_a_gateway_are_gpu_mode_and_close_leaves_nothing(gpu_gateway):
    with as_user("grace"):
        session = gdk.start_cluster(deploy="gateway", gateway_address=gpu_gateway.address, device="gpu", n_workers=2, verbose=False)
        try:
            assert (session.mode, session.n_workers) == ("gpu", 2)
            assert "dask-cuda worker(s)" in session.reason
            assert session.client.submit(sum, [1, 2, 3]).result() == 6
            pids = cluster_pids(gpu_gateway)
            with as_user("heidi"):  # a second user gets their own GPU cluster and sees only it
                with start_session(
                    ClusterOptions.from_config(deploy="gateway", gateway_address=gpu_gateway.address, n_workers=1), started_by="script"
                ) as other:
                    assert other.mode == "gpu" and other.client.scheduler.address != session.client.scheduler.address
                    with KitGateway(gpu_gateway.address, auth=BasicAuth("heidi", PASSWORD)) as heidi:
                        assert [c.scheduler_address for c in heidi.list_clusters()] == [other.client.scheduler.address]
                    pids |= cluster_pids(gpu_gateway)
        finally:
            session.close()
    assert not wait_gone(pids, gpu_gateway)
