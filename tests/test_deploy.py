"""The deploy interface: every target is a module with ``start(...) -> Deployment``; the
Deployment carries the cluster, its client, the scale rule and the record, and closes what it started."""

from __future__ import annotations

import inspect

import dask
import pytest

from gpu_dask_kit import OptionError, launch
from gpu_dask_kit.deploy.deployment import Deployment, target_module
from gpu_dask_kit.options import OPTION_SPECS, ClusterOptions
from gpu_dask_kit.plan import WorkerSpec


@pytest.mark.parametrize("name", [*OPTION_SPECS["deploy"].choices, "connect"])
def test_every_deploy_choice_is_a_module_with_the_one_start_signature(name):
    start = target_module(name).start
    params = inspect.signature(start).parameters
    assert next(iter(params)) == "options" and {"started_by", "security", "report"} <= set(params)
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in ("started_by", "security", "report"))


def test_scale_rule_is_carried_by_the_spec_not_planned_again():
    gpu = WorkerSpec("gpu", 2, 1, 0, devices=("0", "1"), max_workers=2)
    assert gpu.scale_target(1) == 1 and gpu.scale_target(2) == 2
    with pytest.raises(OptionError, match="one worker per GPU"):
        gpu.scale_target(3)
    slurm = WorkerSpec("gpu", 4, 1, 2**30, workers_per_unit=4)  # jobs of 4 GPU workers
    assert [slurm.scale_target(n) for n in (1, 4, 5)] == [4, 4, 8]


def test_a_local_start_is_one_deployment_that_scales_and_closes(no_leaks, monkeypatch):
    import gpu_dask_kit.deploy.local as local

    options = ClusterOptions.from_config(device="cpu", n_workers=1, memory_limit="512MiB", threads_per_worker=1)
    deployment, previous = launch.start(options, "script")
    try:
        assert isinstance(deployment, Deployment) and deployment.target == "local" and deployment.mode == "cpu"
        assert deployment.plan.spec.n_workers == 1 and deployment.record.started_by == "script"
        assert dask.config.get("array.backend") == "numpy"
        for name in ("detect", "make_plan"):
            monkeypatch.setattr(local, name, lambda *a, **k: pytest.fail("scale must not detect or plan again"))
        monkeypatch.setattr(launch, "detect", lambda *a, **k: pytest.fail("scale must not detect again"))
        # cluster.wait_for_workers swaps in a scheduler_info snapshot; a removal in flight then breaks close (CI run 24)
        monkeypatch.setattr(deployment.cluster, "wait_for_workers", lambda *a, **k: pytest.fail("scale must not use cluster.wait_for_workers"))
        assert deployment.scale(2, timeout=120)
        assert len(deployment.client.scheduler_info(n_workers=-1)["workers"]) == 2
        assert deployment.scale(1, timeout=120)  # down: until the retired worker is gone
    finally:
        deployment.close()
        dask.config.set(previous)
    assert deployment.cluster.status.name == "closed"


def test_a_connection_cannot_be_scaled():
    deployment = Deployment("connect", "cpu", "", client=None, record=None)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="scale that cluster where it was started"):
        deployment.scale_target(2)


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_worker_slower_to_start_than_ten_seconds_still_joins(tmp_path, no_leaks):
    """On a loaded 2-core machine a worker spawn can take over 10 s. The kit once passed death_timeout=10,
    which distributed also applies to the nanny's start: the nanny gave up, closed its listener, and
    LocalCluster waited forever (a kernel stuck in start_cluster). A preload that sleeps 12 s in every
    worker stands in for the slow spawn."""
    preload = tmp_path / "slow_worker_preload.py"
    preload.write_text("import time\n\ndef dask_setup(worker):\n    time.sleep(12)\n")
    options = ClusterOptions.from_config(device="cpu", n_workers=1, memory_limit="512MiB", threads_per_worker=1)
    with dask.config.set({"distributed.worker.preload": [str(preload)]}):
        deployment, previous = launch.start(options, "script")
    try:
        assert len(deployment.client.scheduler_info(n_workers=-1)["workers"]) == 1
    finally:
        deployment.close()
        dask.config.set(previous)
