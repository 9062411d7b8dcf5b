"""A real single-node Son of Grid Engine for the `sge` tests: started by .ci/sge/start when SGE's commands
exist and its queue is not up (and stopped at the end only then); otherwise the tests are skipped with the reason."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "all.q"


def _queue_up() -> str | None:
    """None when SGE answers and lists the queue, else why not."""
    try:
        proc = subprocess.run(["qstat", "-f", "-q", QUEUE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"qstat failed: {exc}"
    if proc.returncode != 0 or f"{QUEUE}@" not in proc.stdout:
        return f"qstat -f -q {QUEUE}: {(proc.stderr or proc.stdout).strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def sge():
    """Makes sure an SGE answers with the queue all.q."""
    os.environ.setdefault("SGE_ROOT", "/var/lib/gridengine")
    os.environ.setdefault("SGE_CELL", "default")
    if shutil.which("qconf") is None or shutil.which("qsub") is None:
        pytest.skip("SGE is not installed: apt-get install gridengine-master gridengine-exec gridengine-client (preseeded: see .ci/sge/start)")
    started = False
    why = _queue_up()
    if why is not None:
        if os.geteuid() != 0:
            pytest.skip(f"SGE is not running ({why}) and starting it needs root: sudo .ci/sge/start")
        before = _sge_daemons()
        proc = subprocess.run([str(ROOT / ".ci/sge/start")], capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:  # installed and root: a failure, not a skip
            subprocess.run([str(ROOT / ".ci/sge/stop")], capture_output=True, text=True, timeout=180)
            pytest.fail(f".ci/sge/start failed: {proc.stderr.strip()[-500:]}")
        started = True
    yield QUEUE
    if started:
        subprocess.run([str(ROOT / ".ci/sge/stop")], capture_output=True, text=True, timeout=180)
        left = set(_sge_daemons()) - set(before)
        for pid in left:
            psutil.Process(pid).kill()
        assert not left, f".ci/sge/stop left SGE daemons it started running: {left} (killed now)"


def _sge_daemons() -> list[int]:
    return [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in ("sge_qmaster", "sge_execd")]


def my_jobs() -> list[str]:
    """Ids of every job of this user that qstat lists (queued, running or being deleted)."""
    out = subprocess.run(["qstat", "-u", psutil.Process().username()], capture_output=True, text=True, timeout=30).stdout
    return [line.split()[0] for line in out.splitlines()[2:] if line.strip()]


def job_processes(job_name: str) -> list[psutil.Process]:
    """Processes started by the session's SGE jobs (SGE puts JOB_NAME into their environment)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("JOB_NAME") == job_name and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def sge_clean(sge, no_leaks):
    """Fails the test when a job it submitted is still listed or a process of its jobs still runs."""
    import time

    before = set(my_jobs())
    names: list[str] = []
    yield names
    deadline = time.monotonic() + 30
    while ((left := [j for j in my_jobs() if j not in before]) or [p for n in names for p in job_processes(n)]) and time.monotonic() < deadline:
        time.sleep(0.5)
    procs = [p for n in names for p in job_processes(n)]
    if left:
        subprocess.run(["qdel", *left], capture_output=True)
    assert not left, f"jobs left in qstat: {left}"
    assert not procs, f"job processes left: {[(p.pid, p.cmdline()) for p in procs]}"
