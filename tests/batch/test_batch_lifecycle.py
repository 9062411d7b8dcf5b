"""start -> compute -> scale -> close through ``kit.start_cluster(deploy="pbs" | "sge" | "lsf")`` and the REAL
dask-jobqueue cluster classes, against the stand-in scheduler commands (conftest.py): what was submitted,
that real workers from the job scripts join, that close cancels every job; bad input fails before any
submit and leaves nothing (no job, no process, no registry record)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import dask.array as da
import dask.config
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.cli import main
from gpu_dask_kit.errors import ClusterStartError, OptionError

from .conftest import QUEUE

SMALL = dict(device="cpu", memory_limit="400MiB", threads_per_worker=1, start_timeout=90)


def instructor(fake, **more) -> dict:
    """An instructor's dask config for the venue: the queue and account (batch options come from the config here)."""
    return {"gpu-dask-kit.partition": QUEUE[fake.flavour], "gpu-dask-kit.account": "proj1", "gpu-dask-kit.walltime": "00:20:00", **more}


def logs(fake, job_name: str) -> Path:
    return Path.home() / ".cache" / "gpu-dask-kit" / fake.flavour / job_name


def ids(entries) -> list[str]:
    return sorted((e["id"] if isinstance(e, dict) else e for e in entries), key=int)


def test_start_compute_scale_close_cancels_every_job(fake):
    fake.run_jobs()
    with dask.config.set(instructor(fake)):
        session = kit.start_cluster(deploy=fake.flavour, n_workers=2, **SMALL)
    try:
        assert session.n_workers == 2 and len(fake.submitted) == 2
        script = fake.submitted[0]["script"]
        assert QUEUE[fake.flavour] in script and "-m distributed.cli.dask_worker" in script
        assert "--tls-ca-file" in script  # the session's own certificate (security=True, the default) reaches the jobs
        assert session.client.scheduler.address.startswith("tls://")
        x = da.arange(1_000_000, chunks=100_000)
        assert session.client.compute(x.sum()).result() == 999_999 * 1_000_000 // 2
        record = registry.get_session(session.id)
        assert record.slurm_job_name and record.slurm_job_ids == ids(fake.submitted)
        assert len(fake.running()) >= 2  # the job scripts really run: nanny + worker each
        assert session.scale(3, timeout=90) and len(fake.submitted) == 3
        assert session.scale(1, timeout=90)  # dask-jobqueue cancels whole jobs
        assert len(fake.cancelled) == 2
    finally:
        session.close()
    assert sorted(set(fake.cancelled), key=int) == ids(fake.submitted)  # close cancelled every job it submitted
    assert session.id not in [r.id for r in registry.list_sessions()]  # the fixture then checks that no job process is left
    assert not logs(fake, record.slurm_job_name).exists()  # the jobs' log folder goes with a clean close


def test_gpu_jobs_that_never_start_are_all_cancelled_and_the_error_says_where_to_look(fake):
    fake.run_jobs(False)  # the jobs stay queued, as on a full cluster
    with dask.config.set(instructor(fake)):
        with pytest.raises(ClusterStartError) as info:
            kit.start_cluster(deploy=fake.flavour, device="gpu", n_workers=2, start_timeout=4)
    message = str(info.value)
    assert "0 of 2" in message and f"`{ {'pbs': 'qstat', 'sge': 'qstat', 'lsf': 'bjobs'}[fake.flavour] }`" in message
    assert "Every job this start submitted was cancelled" in message
    submitted = ids(fake.submitted)
    assert len(submitted) == 2 and sorted(set(fake.cancelled), key=int) == submitted
    gpu = {"pbs": ":ngpus=1:", "sge": "#$ -l gpu=1", "lsf": '#BSUB -gpu "num=1"'}[fake.flavour]
    assert all(gpu in e["script"] and "-m gpu_dask_kit.deploy.cuda_worker" in e["script"] for e in fake.submitted)
    assert kit.current_session() is None and not [r for r in registry.list_sessions() if r.slurm_job_name]
    name = fake.submitted[0]["script"].split("gdk-", 1)[1].split()[0]
    assert not logs(fake, f"gdk-{name}").exists()  # kept only when the jobs wrote logs the error could point to


def test_an_unknown_queue_is_refused_before_any_submit(fake):
    with dask.config.set(instructor(fake, **{"gpu-dask-kit.partition": "nosuch"})):
        with pytest.raises(OptionError) as info:
            kit.start_cluster(deploy=fake.flavour, **SMALL)
    assert info.value.parameter == "partition" and "nosuch" in str(info.value) and "Unknown queue nosuch" in str(info.value)
    assert fake.submitted == [] and not [c for c in fake.calls if c[0] in ("qsub", "bsub")]
    assert kit.current_session() is None and not [r for r in registry.list_sessions() if r.slurm_job_name]


def test_missing_commands_are_named_before_any_submit(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # none of the scheduler's commands (nor the stand-ins)
    with pytest.raises(OptionError) as info:
        kit.start_cluster(deploy=fake.flavour, **SMALL)
    message = str(info.value)
    assert info.value.parameter == "deploy" and message.startswith(f"deploy='{fake.flavour}'") and "not on this machine's PATH" in message
    assert fake.calls == [] and kit.current_session() is None
    assert not [r for r in registry.list_sessions() if r.slurm_job_name]


@pytest.mark.parametrize("fake", ["sge"], indirect=True)  # only SGE offers a verify-only submit (qsub -w v)
def test_sge_verify_refusal_stops_before_any_submit(fake):
    os.environ["FAKE_BATCH_REFUSE"] = 'job requests unknown resource "gpu"'
    try:
        with dask.config.set(instructor(fake)), pytest.raises(ClusterStartError) as info:
            kit.start_cluster(deploy="sge", device="gpu")
    finally:
        del os.environ["FAKE_BATCH_REFUSE"]
    assert 'unknown resource "gpu"' in str(info.value) and "Nothing was submitted" in str(info.value)
    assert len(fake.verified) == 1 and "#$ -l gpu=1" in fake.verified[0] and fake.submitted == []
    assert kit.current_session() is None


OWNER = textwrap.dedent("""
    import json, sys, time
    import gpu_dask_kit as kit
    if __name__ == "__main__":
        session = kit.start_cluster(deploy=sys.argv[1], device="cpu", n_workers=2, memory_limit="400MiB", threads_per_worker=1, verbose=False)
        print(json.dumps({"id": session.id, "name": session.record.slurm_job_name}), flush=True)
        time.sleep(600)
""")


def test_owner_killed_then_cleanup_cancels_its_jobs_by_the_recorded_ids(fake, tmp_path, capsys):
    """PBS/SGE/LSF list jobs by id: a cleanup from another process cancels the ids in the dead owner's record."""
    fake.run_jobs()
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    env = dict(os.environ, DASK_GPU_DASK_KIT__PARTITION=QUEUE[fake.flavour], DASK_JOBQUEUE__PBS__DEATH_TIMEOUT="600")
    env.update(DASK_JOBQUEUE__SGE__DEATH_TIMEOUT="600", DASK_JOBQUEUE__LSF__DEATH_TIMEOUT="600")  # the workers would wait 600 s
    line = None
    owner = subprocess.Popen([sys.executable, str(script), fake.flavour], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        line = next((x for x in owner.stdout if x.startswith("{")), None)  # type: ignore[union-attr]
        assert line, "the owner process did not start its cluster"
        info = json.loads(line)
        record = registry.get_session(info["id"])
        assert record.slurm_job_ids == ids(fake.submitted) and len(record.slurm_job_ids) == 2
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        assert fake.cancelled == [] and len(fake.running()) >= 2  # the jobs outlive their owner
        assert main(["sessions", "--cleanup"]) == 0
        out = capsys.readouterr().out
        assert f"jobs of {info['name']} cancelled" in out and "1 stale session(s) cleaned up." in out
        assert sorted(set(fake.cancelled), key=int) == ids(fake.submitted)
        assert info["id"] not in [r.id for r in registry.list_sessions()]
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if line:  # the dead owner's job-log folder: --cleanup (cleanup.py) does not remove it, for SLURM either
            shutil.rmtree(logs(fake, json.loads(line)["name"]), ignore_errors=True)
