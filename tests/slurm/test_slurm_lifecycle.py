"""Real SLURM: start -> compute -> close, scale/adapt, a worker job cancelled mid-computation, the owner
killed, jobs that cannot start. Every test checks squeue and the jobs' processes afterwards (slurm_clean)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import dask.array as da
import pytest
from distributed import Client

from gpu_dask_kit.deploy.slurm import cancel_jobs, close_slurm, job_ids, squeue_jobs, start_slurm
from gpu_dask_kit.errors import ClusterStartError

from .conftest import job_processes, my_jobs, slurm_options, wait_until

pytestmark = pytest.mark.slurm

SMALL = dict(job_memory="300MiB", walltime="00:15:00")


def n_workers(cluster) -> int:
    return len(cluster.scheduler_info["workers"])


def test_start_compute_close_leaves_nothing(slurm_clean, tmp_path):
    cluster, plan = start_slurm(slurm_options(n_workers=2, **SMALL), "cpu", log_directory=str(tmp_path / "logs"))
    slurm_clean.append(plan.job_name)
    try:
        assert n_workers(cluster) == 2
        ids = job_ids(cluster)
        assert len(ids) == 2 and {j for j, _, _ in squeue_jobs(plan.job_name)} == set(ids)
        with Client(cluster) as client:
            x = da.arange(1_000_000, chunks=100_000)
            assert client.compute(x.sum()).result() == 999_999 * 1_000_000 // 2
            assert len(client.scheduler_info()["workers"]) == 2
        assert len(job_processes(plan.job_name)) >= 2  # nanny + worker per job, really under SLURM
    finally:
        close_slurm(cluster)
    assert squeue_jobs(plan.job_name) == []
    assert not (tmp_path / "logs").exists()


def test_scale_and_adapt_up_and_down(slurm_clean, tmp_path):
    cluster, plan = start_slurm(slurm_options(n_workers=1, **SMALL), "cpu", log_directory=str(tmp_path / "logs"))
    slurm_clean.append(plan.job_name)
    try:
        cluster.scale(3)
        assert wait_until(lambda: n_workers(cluster) == 3, 120), n_workers(cluster)
        assert len(squeue_jobs(plan.job_name)) == 3
        cluster.scale(1)
        assert wait_until(lambda: len(squeue_jobs(plan.job_name)) == 1, 60), squeue_jobs(plan.job_name)
        assert wait_until(lambda: n_workers(cluster) == 1, 30)

        cluster.adapt(minimum=0, maximum=3, interval="500ms", wait_count=4)
        with Client(cluster) as client:
            futures = client.map(lambda i: time.sleep(1.5) or i, range(24))
            assert wait_until(lambda: len(squeue_jobs(plan.job_name)) >= 2, 60), "adapt did not submit jobs for the work"
            assert sum(client.gather(futures)) == sum(range(24))
            del futures
        assert wait_until(lambda: len(squeue_jobs(plan.job_name)) == 0, 120), squeue_jobs(plan.job_name)
    finally:
        close_slurm(cluster)


def test_worker_job_cancelled_mid_computation(slurm_clean, tmp_path):
    cluster, plan = start_slurm(slurm_options(n_workers=2, **SMALL), "cpu", log_directory=str(tmp_path / "logs"))
    slurm_clean.append(plan.job_name)
    try:
        with Client(cluster) as client:
            futures = client.map(lambda i: time.sleep(0.5) or i * i, range(40))
            wait_until(lambda: sum(f.done() for f in futures) >= 4, 60, 0.1)
            victim = job_ids(cluster)[0]
            subprocess.run(["scancel", victim], check=True)
            assert sum(client.gather(futures)) == sum(i * i for i in range(40))  # rescheduled on the other worker
            assert wait_until(lambda: victim not in {j for j, _, _ in squeue_jobs(plan.job_name)}, 60)
            cluster.scale(2)  # the session is still usable: a replacement job comes up
            assert wait_until(lambda: n_workers(cluster) == 2, 120)
            assert client.submit(sum, [1, 2, 3]).result() == 6
    finally:
        close_slurm(cluster)


OWNER = textwrap.dedent("""
    import json, sys, time, types
    sys.path.insert(0, sys.argv[1])
    from tests.slurm.conftest import slurm_options
    from gpu_dask_kit.deploy.slurm import start_slurm, job_ids
    if __name__ == "__main__":
        cluster, plan = start_slurm(slurm_options(n_workers=2, job_memory="300MiB"), "cpu", log_directory=sys.argv[2],
                                    on_wait=lambda m: print(m, file=sys.stderr))
        print(json.dumps({"name": plan.job_name, "ids": job_ids(cluster)}), flush=True)
        time.sleep(600)
""")


@pytest.mark.parametrize("ending", ["death timeout", "cleanup"])
def test_owner_killed_jobs_end(slurm_clean, tmp_path, ending):
    """The owner SIGKILLed: its jobs end by themselves (the workers close when they lose the scheduler, at
    the latest after the death timeout), or cancel_jobs (what `--cleanup` calls with the registry's job
    name) ends them at once."""
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    death_timeout = 20 if ending == "death timeout" else 600
    env = dict(os.environ, DASK_JOBQUEUE__SLURM__DEATH_TIMEOUT=str(death_timeout))
    owner = subprocess.Popen([sys.executable, str(script), os.getcwd(), str(tmp_path / "logs")], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = owner.stdout.readline()
        assert line, "the owner process did not start its cluster"
        info = json.loads(line)
        slurm_clean.append(info["name"])
        assert len(info["ids"]) == 2
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        t0 = time.monotonic()
        if ending == "cleanup":
            assert len(squeue_jobs(info["name"])) == 2  # still there: the workers would wait 600 s
            cancel_jobs(info["name"])
        gone = wait_until(lambda: not squeue_jobs(info["name"]), death_timeout + 60)
        assert gone, f"jobs still queued {time.monotonic() - t0:.0f} s after the owner died: {squeue_jobs(info['name'])}"
        assert wait_until(lambda: not job_processes(info["name"]), 30)
        print(f"SLURM jobs and their processes ended ({ending}) {time.monotonic() - t0:.1f} s after the owner's SIGKILL")
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_jobs_that_cannot_start_report_the_pending_reason(slurm_clean, slurm, tmp_path):
    node_mib = int(subprocess.run(["sinfo", "-h", "-o", "%m"], capture_output=True, text=True).stdout.split()[0].rstrip("+"))
    blocker = subprocess.run(
        ["sbatch", "--parsable", "-J", "gdk-test-blocker", f"--mem={node_mib}M", "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    said: list[str] = []
    try:
        assert wait_until(lambda: [s for j, s, _ in squeue_jobs("gdk-test-blocker") if s == "R"], 30)
        with pytest.raises(ClusterStartError) as info:
            start_slurm(
                slurm_options(n_workers=1, start_timeout=15, **SMALL),
                "cpu",
                on_wait=said.append,
                job_name="gdk-test-pending",
                log_directory=str(tmp_path / "logs"),
            )
        assert any("pending (Resources)" in s for s in said), said
        message = str(info.value)
        assert "0 of 1" in message and "Resources" in message and "start_timeout" in message and "cancelled" in message
        assert squeue_jobs("gdk-test-pending") == []
    finally:
        subprocess.run(["scancel", blocker])
        wait_until(lambda: not squeue_jobs("gdk-test-blocker"), 60)
    assert not [j for j, n in my_jobs() if n.startswith("gdk-test")]
