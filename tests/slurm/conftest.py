"""A real single-node SLURM for the `slurm` tests: started by .ci/slurm/start when SLURM's commands exist
and it is not up yet (and stopped at the end only then); otherwise the tests are skipped with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from gpu_dask_kit.options import ClusterOptions

ROOT = Path(__file__).resolve().parents[2]

#: Small jobs for this 2-core machine; every test adds what it is about.
SMALL = dict(job_memory="300MiB", walltime="00:15:00")


def slurm_options(**changes) -> ClusterOptions:
    """Checked options of a SLURM session (CPU jobs unless ``device`` says otherwise), as start_cluster builds them."""
    return ClusterOptions.from_config(**{"deploy": "slurm", "device": "cpu", "walltime": "00:10:00", **changes})


def _sinfo_up() -> str | None:
    """None when the node answers idle/mixed/allocated, else why not."""
    try:
        proc = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {exc}"
    states = proc.stdout.split()
    if proc.returncode != 0:
        return f"sinfo failed: {proc.stderr.strip()}"
    if not any(s.rstrip("*") in ("idle", "mix", "alloc") for s in states):
        return f"no usable SLURM node (sinfo states: {states or 'none'})"
    return None


@pytest.fixture(scope="session")
def slurm():
    """Makes sure a SLURM answers; yields its one node's name."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        pytest.skip("SLURM is not installed: apt-get install -y slurmctld slurmd munge slurm-client, then .ci/slurm/start (as root)")
    started = False
    why = _sinfo_up()
    if why is not None:
        if os.geteuid() != 0:
            pytest.skip(f"SLURM is not running ({why}) and starting it needs root: sudo .ci/slurm/start")
        proc = subprocess.run([str(ROOT / ".ci/slurm/start")], capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            pytest.skip(f"SLURM is installed but .ci/slurm/start failed: {proc.stderr.strip()[-500:]}")
        started = True
    node = subprocess.run(["sinfo", "-h", "-o", "%N"], capture_output=True, text=True, timeout=30).stdout.split()[0]
    yield node
    if started:
        subprocess.run([str(ROOT / ".ci/slurm/stop")], capture_output=True, text=True, timeout=180)


def my_jobs() -> list[tuple[str, str]]:
    """(job id, job name) of every job of this user that squeue lists."""
    out = subprocess.run(["squeue", "-h", "--user", str(os.getuid()), "-o", "%i|%j"], capture_output=True, text=True, timeout=30).stdout
    return [tuple(line.split("|", 1)) for line in out.splitlines() if line]


def job_processes(job_name: str) -> list[psutil.Process]:
    """Processes started by the session's SLURM jobs (SLURM puts SLURM_JOB_NAME into their environment)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("SLURM_JOB_NAME") == job_name and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def owner_says(owner) -> dict | None:
    """The JSON line an owner process prints once its session runs (lines before it, such as the kit's
    "Waiting for SLURM: ... pending (Priority)", are what a notebook would show)."""
    for line in owner.stdout:
        if line.startswith("{"):
            return json.loads(line)
    return None


def wait_until(predicate, timeout: float, interval: float = 0.5):
    """Poll ``predicate`` until it returns something truthy or ``timeout`` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


@pytest.fixture
def slurm_clean(slurm, no_leaks):
    """Fails the test when a job it submitted is still queued or any process of its jobs still runs."""
    before = {j for j, _ in my_jobs()}
    names: list[str] = []
    yield names
    left = [(j, n) for j, n in my_jobs() if j not in before]
    if left:
        subprocess.run(["scancel", *[j for j, _ in left]], capture_output=True)

    # With proctrack/linuxproc (this one-node SLURM) a job leaves squeue once its batch shell ends; the
    # worker processes, re-parented, finish their graceful shutdown about a second later.
    def procs() -> list[psutil.Process]:
        return [p for n in names for p in job_processes(n)]

    wait_until(lambda: not procs(), 30)
    left_procs = procs()
    assert not left, f"jobs left in squeue: {left}"
    assert not left_procs, f"job processes left: {[(p.pid, p.cmdline()) for p in left_procs]}"
