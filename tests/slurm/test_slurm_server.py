"""The sidebar's REST route with a SLURM session: a notebook-like owner process starts
``kit.start_cluster(deploy="slurm")``; ``GET sessions`` lists it with its job ids, ``DELETE sessions/<id>``
shuts it down and cancels its jobs (squeue lists none afterwards), as the sidebar's "Shut down" does."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from gpu_dask_kit.deploy.slurm import squeue_jobs

from .conftest import owner_says

pytest_plugins = ["pytest_jupyter.jupyter_server"]
pytestmark = pytest.mark.slurm

API = "gpu-dask-kit/api"

OWNER = textwrap.dedent("""
    import json, time
    import gpu_dask_kit as kit
    if __name__ == "__main__":
        session = kit.start_cluster(deploy="slurm", device="cpu", n_workers=2, job_memory="300MiB", walltime="00:15:00", verbose=False)
        print(json.dumps({"id": session.id, "name": session.record.slurm_job_name}), flush=True)
        time.sleep(600)
""")


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}}}


async def fetch_json(jp_fetch, *parts, method="GET"):
    response = await jp_fetch(API, *parts, method=method, raise_error=False)
    body = response.body.decode() if response.body else ""
    return response.code, (json.loads(body) if body else None)


async def test_sidebar_lists_a_slurm_session_and_shuts_it_down(slurm_clean, jp_fetch, tmp_path):
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        info = owner_says(owner)
        assert info, "the owner process did not start its SLURM session"
        slurm_clean.append(info["name"])
        ids = sorted((j for j, _, _ in squeue_jobs(info["name"])), key=int)
        assert len(ids) == 2
        code, model = await fetch_json(jp_fetch, "sessions")
        assert code == 200
        (item,) = [s for s in model["sessions"] if s["id"] == info["id"]]
        assert item["slurm_job_name"] == info["name"] and item["slurm_job_ids"] == ids
        assert item["alive"] is True and item["n_workers"] == 2

        code, body = await fetch_json(jp_fetch, f"sessions/{info['id']}", method="DELETE")
        assert code == 204 and body is None
        assert squeue_jobs(info["name"]) == []  # the route waited until squeue listed none of its jobs
        code, model = await fetch_json(jp_fetch, "sessions")
        assert [s["id"] for s in model["sessions"]] == []
    finally:
        owner.kill()
        owner.wait()
