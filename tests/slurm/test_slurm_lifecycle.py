"""Real SLURM through ``kit.start_cluster(deploy="slurm")``: start -> compute -> close, scale/adapt, a worker
job cancelled mid-computation, the owner killed (``gpu-dask-kit sessions --cleanup``), jobs that cannot
start. Every test checks squeue and the jobs' processes afterwards (slurm_clean), and the registry record:
it lists the session's live job ids while it runs and is gone after close."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dask.array as da
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.cli import main
from gpu_dask_kit.deploy.slurm import squeue_jobs
from gpu_dask_kit.errors import ClusterStartError

from .conftest import SMALL, job_processes, my_jobs, owner_says, wait_until

pytestmark = pytest.mark.slurm


def start(**options) -> kit.ClusterSession:
    return kit.start_cluster(**{"deploy": "slurm", "device": "cpu", **SMALL, **options})


def queued(session) -> list[str]:
    return sorted((j for j, _, _ in squeue_jobs(session.record.slurm_job_name)), key=int)


def recorded(session) -> list[str]:
    """The job ids the session's registry FILE lists (what `gpu-dask-kit sessions` and the sidebar read)."""
    return registry.get_session(session.id).slurm_job_ids


def test_start_compute_close_leaves_nothing(slurm_clean, capsys):
    session = start(n_workers=2)
    name = session.record.slurm_job_name
    slurm_clean.append(name)
    logs = Path.home() / ".cache" / "gpu-dask-kit" / "slurm" / name
    try:
        out = capsys.readouterr().out
        assert "Started a CPU cluster with 2 worker(s). Its workers are SLURM jobs (dask worker) on partition 'debug'" in out
        assert session.n_workers == 2 and kit.current_session() is session
        assert len(queued(session)) == 2 and recorded(session) == queued(session)
        x = da.arange(1_000_000, chunks=100_000)
        assert session.client.compute(x.sum()).result() == 999_999 * 1_000_000 // 2
        assert len(job_processes(name)) >= 2  # nanny + worker per job, really under SLURM
        assert main(["sessions"]) == 0
        listing = capsys.readouterr().out
        assert f"SLURM jobs ({name}): {', '.join(queued(session))}" in listing
        assert main(["sessions", "--json"]) == 0
        (item,) = json.loads(capsys.readouterr().out)
        assert item["slurm_job_name"] == name and item["slurm_job_ids"] == queued(session) and item["n_workers"] == 2
        assert logs.is_dir()
    finally:
        t0 = time.monotonic()
        session.close()
        closed = time.monotonic() - t0
    assert squeue_jobs(name) == []  # close() waited for squeue
    assert registry.list_sessions() == [] and not logs.exists()
    print(f"close of a 2-job SLURM session: {closed:.1f} s")


def test_scale_and_adapt_up_and_down(slurm_clean):
    session = start(n_workers=1)
    slurm_clean.append(session.record.slurm_job_name)
    try:
        session.scale(3, timeout=120)
        assert session.n_workers == 3 and len(queued(session)) == 3
        assert wait_until(lambda: recorded(session) == queued(session), 10), (recorded(session), queued(session))
        session.scale(1)
        assert wait_until(lambda: len(queued(session)) == 1, 60), queued(session)
        assert wait_until(lambda: len(recorded(session)) == 1, 30), recorded(session)

        session.adapt(minimum=0, maximum=3, interval="500ms", wait_count=4)
        futures = session.client.map(lambda i: time.sleep(1.5) or i, range(24))
        assert wait_until(lambda: len(queued(session)) >= 2, 60), "adapt did not submit jobs for the work"
        assert wait_until(lambda: len(recorded(session)) >= 2, 30), recorded(session)
        assert sum(session.client.gather(futures)) == sum(range(24))
        del futures
        assert wait_until(lambda: len(queued(session)) == 0, 120), queued(session)
        assert wait_until(lambda: recorded(session) == [], 30), recorded(session)
    finally:
        session.close()


def test_adapt_needs_a_maximum(slurm_clean):
    session = start(n_workers=1)
    slurm_clean.append(session.record.slurm_job_name)
    try:
        with pytest.raises(kit.OptionError, match="maximum=None"):
            session.adapt(minimum=1)
    finally:
        session.close()


def test_worker_job_cancelled_mid_computation(slurm_clean):
    session = start(n_workers=2)
    slurm_clean.append(session.record.slurm_job_name)
    client = session.client
    try:
        futures = client.map(lambda i: time.sleep(0.5) or i * i, range(40))
        wait_until(lambda: sum(f.done() for f in futures) >= 4, 60, 0.1)
        victim = queued(session)[0]
        subprocess.run(["scancel", victim], check=True)
        assert sum(client.gather(futures)) == sum(i * i for i in range(40))  # rescheduled on the other worker
        assert wait_until(lambda: victim not in queued(session), 60)
        session.scale(2, timeout=120)  # the session is still usable: a replacement job comes up
        assert client.submit(sum, [1, 2, 3]).result() == 6
        assert wait_until(lambda: victim not in recorded(session) and len(recorded(session)) == 2, 60), recorded(session)
    finally:
        session.close()


OWNER = textwrap.dedent("""
    import json, sys, time
    import gpu_dask_kit as kit
    if __name__ == "__main__":
        session = kit.start_cluster(deploy="slurm", device="cpu", n_workers=2, job_memory="300MiB", walltime="00:15:00", verbose=False)
        print(json.dumps({"id": session.id, "name": session.record.slurm_job_name}), flush=True)
        time.sleep(600)
""")


@pytest.mark.parametrize("ending", ["death timeout", "cleanup"])
def test_owner_killed_jobs_end(slurm_clean, tmp_path, ending, capsys):
    """The owner SIGKILLed: its jobs end by themselves (the workers close when they lose the scheduler, at
    the latest after the death timeout), or `gpu-dask-kit sessions --cleanup` cancels them at once."""
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    death_timeout = 20 if ending == "death timeout" else 600
    env = dict(os.environ, DASK_JOBQUEUE__SLURM__DEATH_TIMEOUT=str(death_timeout))  # GPU_DASK_KIT_RUNTIME_DIR: this test's
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        info = owner_says(owner)
        assert info, "the owner process did not start its cluster"
        slurm_clean.append(info["name"])
        assert len(registry.get_session(info["id"]).slurm_job_ids) == 2
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        t0 = time.monotonic()
        if ending == "cleanup":
            assert len(squeue_jobs(info["name"])) == 2  # still there: the workers would wait 600 s
            assert main(["sessions"]) == 0
            assert "STALE" in capsys.readouterr().out
            assert main(["sessions", "--cleanup"]) == 0
            out = capsys.readouterr().out
            assert f"SLURM jobs of {info['name']} cancelled" in out and "1 stale session(s) cleaned up." in out
            assert squeue_jobs(info["name"]) == []  # --cleanup waited for squeue
            assert registry.list_sessions() == []
        gone = wait_until(lambda: not squeue_jobs(info["name"]), death_timeout + 60)
        assert gone, f"jobs still queued {time.monotonic() - t0:.0f} s after the owner died: {squeue_jobs(info['name'])}"
        assert wait_until(lambda: not job_processes(info["name"]), 30)
        print(f"SLURM jobs and their processes ended ({ending}) {time.monotonic() - t0:.1f} s after the owner's SIGKILL")
        if ending == "death timeout":  # the record stays STALE until SLURM says the jobs are gone; then --cleanup removes it
            assert [r.id for r in registry.list_sessions()] == [info["id"]]
            assert main(["sessions", "--cleanup"]) == 0 and registry.list_sessions() == []
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_jobs_that_cannot_start_report_the_pending_reason(slurm_clean, slurm, capsys):
    node_mib = int(subprocess.run(["sinfo", "-h", "-o", "%m"], capture_output=True, text=True).stdout.split()[0].rstrip("+"))
    blocker = subprocess.run(
        ["sbatch", "--parsable", "-J", "gdk-test-blocker", f"--mem={node_mib}M", "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        assert wait_until(lambda: [s for j, s, _ in squeue_jobs("gdk-test-blocker") if s == "R"], 30)
        before = {j for j, _ in my_jobs()}
        with pytest.raises(ClusterStartError) as info:
            start(n_workers=1, start_timeout=15)
        said = capsys.readouterr().out
        assert "Waiting for SLURM: 1 of 1 job(s) pending (Resources)" in said, said
        message = str(info.value)
        assert "0 of 1" in message and "Resources" in message and "start_timeout" in message and "cancelled" in message
        assert {j for j, _ in my_jobs()} - before == set()  # nothing of the failed start stays queued
        assert registry.list_sessions() == [] and kit.current_session() is None
    finally:
        subprocess.run(["scancel", blocker])
        wait_until(lambda: not squeue_jobs("gdk-test-blocker"), 60)
    assert not [j for j, n in my_jobs() if n.startswith("gdk-")]
