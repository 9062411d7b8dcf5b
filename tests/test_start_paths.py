"""The "+ NEW" button, a script, a widget and ``start_cluster()`` give the same cluster for the same config.

Each path starts a real cluster from the same dask config (an instructor's ``gpu-dask-kit`` section); the
test compares what runs: worker count, threads and memory limit per worker, the mode, the scheduler's and the
workers' plugins. ``deploy: slurm`` runs the same comparison on SLURM jobs (skipped, with the reason, where
no SLURM controller answers: `.ci/slurm/start` starts one).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess

import dask.config
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.integrations import labextension as labext
from gpu_dask_kit.scripts import add_cluster_args, start_cluster_from_args

LOCAL = {"device": "cpu", "n-workers": 2, "threads-per-worker": 1, "memory-limit": "1GiB"}


def _unnumbered(name: str) -> str:
    """distributed names its work-stealing plugin with a fresh uuid per scheduler."""
    return name.split("-")[0] if name.startswith("WorkStealing") else name


def _fingerprint(client, mode):
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    return {
        "mode": mode,
        "workers": len(workers),
        "threads": sorted(w["nthreads"] for w in workers),
        "memory_limit": sorted(w["memory_limit"] for w in workers),
        "scheduler_plugins": sorted(_unnumbered(n) for n in client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.plugins))),
        "worker_plugins": sorted({tuple(sorted(p)) for p in client.run(lambda dask_worker: list(dask_worker.plugins)).values()}),
    }


def _by_start_cluster():
    session = kit.start_cluster(verbose=False)
    try:
        return _fingerprint(session.client, session.mode)
    finally:
        session.close()


def _by_script():
    args = add_cluster_args(argparse.ArgumentParser()).parse_args([])  # no flags: the config decides
    session = start_cluster_from_args(args, verbose=False)
    try:
        return _fingerprint(session.client, session.mode)
    finally:
        session.close()


def _by_widget():
    pytest.importorskip("ipywidgets")
    from gpu_dask_kit.notebook.widgets.controls import ClusterControls

    controls = ClusterControls()
    controls.start()
    assert controls.wait(300) and controls.last_error is None, controls.last_error
    session = controls.session
    try:
        return _fingerprint(session.client, session.mode)
    finally:
        session.close()


def _by_new_button():
    from distributed import Client

    cluster = labext.make_cluster()  # what the factory gets: the config's options, no keywords
    (sid,) = labext.in_server_ids()
    try:
        with Client(cluster, set_as_default=False) as client:  # the start waited for the plan's workers
            return _fingerprint(client, kit.registry.get_session(sid).mode)
    finally:
        labext._sessions[sid].close_now()


PATHS = {"start_cluster": _by_start_cluster, "script": _by_script, "widget": _by_widget, "+ NEW": _by_new_button}


def test_every_entry_point_starts_the_same_local_cluster(no_leaks):
    with dask.config.set({"gpu-dask-kit": LOCAL}):
        seen = {name: start() for name, start in PATHS.items()}
    first = seen["start_cluster"]
    assert first["workers"] == 2 and first["threads"] == [1, 1] and first["memory_limit"] == [2**30, 2**30]
    assert "gpu-dask-kit-resource-check" in first["scheduler_plugins"] and "gpu-dask-kit-session" in first["scheduler_plugins"]
    for name, fingerprint in seen.items():
        assert fingerprint == first, f"{name} differs from start_cluster(): {fingerprint} != {first}"


def _slurm_running() -> str | None:
    if shutil.which("sinfo") is None:
        return "SLURM is not installed (no sinfo)"
    done = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=20)
    if done.returncode != 0 or ("idle" not in done.stdout and "mix" not in done.stdout):
        return f"no SLURM controller answers with an idle node (sinfo: {(done.stderr or done.stdout).strip()[:120]}); run .ci/slurm/start"
    return None


def test_every_entry_point_follows_an_instructors_deploy_slurm(no_leaks):
    reason = _slurm_running()
    if reason:
        pytest.skip(reason)
    config = {"device": "cpu", "deploy": "slurm", "n-workers": 1, "job-cores": 1, "job-memory": "2GiB", "walltime": "00:10:00", "memory-limit": "1GiB"}
    with dask.config.set({"gpu-dask-kit": config}):
        seen = {name: PATHS[name]() for name in ("start_cluster", "script", "widget", "+ NEW")}
    first = seen["start_cluster"]
    assert first["workers"] == 1
    for name, fingerprint in seen.items():
        assert fingerprint == first, f"{name} differs from start_cluster(): {fingerprint} != {first}"
