"""PBS, SGE and LSF without a scheduler: the REAL dask-jobqueue classes write the job scripts and call the
submit/cancel/status commands, which are tests/batch/fake_scheduler.py installed under their names in a
folder first on PATH (it records what was submitted and cancelled, and can run a job script as a local
process so that real workers join). Every test checks that nothing it started is left."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

FAKE = Path(__file__).with_name("fake_scheduler.py")
COMMANDS = {"pbs": ("qsub", "qdel", "qstat"), "sge": ("qsub", "qdel", "qstat", "qconf"), "lsf": ("bsub", "bkill", "bjobs", "bqueues")}
QUEUE = {"pbs": "workq", "sge": "all.q", "lsf": "normal"}


@dataclass
class FakeScheduler:
    """The stand-in's state folder: what was submitted, cancelled and run."""

    flavour: str
    state: Path

    def _read(self, name: str) -> list[dict]:
        path = self.state / name
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    @property
    def submitted(self) -> list[dict]:
        return self._read("submitted.log")

    @property
    def cancelled(self) -> list[str]:
        return [e["id"] for e in self._read("cancelled.log")]

    @property
    def calls(self) -> list[list[str]]:
        return [e["argv"] for e in self._read("calls.log")]

    @property
    def verified(self) -> list[str]:
        return [e["script"] for e in self._read("verified.log")]

    def pids(self) -> dict[str, int]:
        """job id -> PID of the job script the stand-in ran (its process group)."""
        return {p.stem: int(p.read_text()) for p in (self.state / "jobs").glob("*.pid")}

    def running(self) -> list[psutil.Process]:
        """Processes of the jobs still running: each job's script and everything in its process group."""
        groups = set(self.pids().values())
        found = []
        for proc in psutil.process_iter():
            try:
                if os.getpgid(proc.pid) in groups and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except (psutil.Error, ProcessLookupError):
                continue
        return found

    def run_jobs(self, run: bool = True) -> None:
        os.environ["FAKE_BATCH_RUN"] = "1" if run else "0"


def install(bin_dir: Path, commands: tuple[str, ...]) -> None:
    bin_dir.mkdir(exist_ok=True)
    for name in commands:
        path = bin_dir / name
        # runpy replaces sys.argv[0] with the path it runs: the command's name travels in the environment
        path.write_text(
            f"#!{sys.executable}\nimport os, runpy\nos.environ['FAKE_BATCH_COMMAND'] = {name!r}\nrunpy.run_path({str(FAKE)!r}, run_name='__main__')\n"
        )
        path.chmod(0o755)


@pytest.fixture(params=["pbs", "sge", "lsf"])
def fake(request, tmp_path, monkeypatch, no_leaks):
    """A stand-in scheduler of each flavour on PATH; fails the test when a job process it ran is left."""
    flavour = request.param
    state = tmp_path / "state"
    state.mkdir()
    install(tmp_path / "bin", COMMANDS[flavour])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BATCH_STATE", str(state))
    monkeypatch.setenv("FAKE_BATCH_FLAVOUR", flavour)
    monkeypatch.setenv("FAKE_BATCH_QUEUES", QUEUE[flavour])
    monkeypatch.setenv("FAKE_BATCH_RUN", "0")
    scheduler = FakeScheduler(flavour, state)
    yield scheduler
    deadline = time.monotonic() + 15
    while (left := scheduler.running()) and time.monotonic() < deadline:
        time.sleep(0.2)
    for proc in left:  # fail below, but leave nothing running
        try:
            proc.kill()
        except psutil.Error:
            pass
    assert not left, f"job processes left: {[(p.pid, p.cmdline()) for p in left]}"


#: The stand-in scheduler commands run as scripts (they read $FAKE_BATCH_STATE when imported): not a test module
#: or a doctest module for `pytest --doctest-modules`.
collect_ignore = ["fake_scheduler.py"]
