"""Fixtures of the reliability suite (``make reliability``; not part of ``make test-unit``).

The suite runs only when asked for by path (``pytest tests/reliability`` or a file/test inside it):
``pytest tests`` skips this folder (see ``pytest_ignore_collect``), so the unit run stays fast even
without ``--ignore=tests/reliability``.

The parent ``tests/conftest.py`` still applies: every test gets a private registry folder through
``GPU_DASK_KIT_RUNTIME_DIR``, and ``no_leaks`` counts this process's descendants.

Here:
- ``figures``: a dict a test fills with what it measured; it is written, with the outcome, to
  ``test-artifacts/reliability/<module>.json`` (one entry per test, merged with the other tests'
  entries of the same file), whether the test passed or failed.
- ``reaper``: processes a test saw (kernels, their workers, owners) are handed to it; whatever of them
  still runs at teardown is killed by PID (psutil checks the create time, so a recycled PID is never
  hit). Tests assert on leaks themselves; the reaper only guarantees nothing outlives a failed test.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "reliability"


def _asked_for(config) -> bool:
    """True when a command-line path points into this folder."""
    base = Path(config.invocation_params.dir)
    for arg in config.args:
        path = (base / str(arg).split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if not _asked_for(config):
        return True
    return None


def machine() -> dict:
    import dask
    import distributed

    import gpu_dask_kit

    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "gpu_dask_kit": gpu_dask_kit.__version__,
        "commit": commit,
        "cpus": os.cpu_count(),
        "memory_total_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "platform": platform.platform(),
    }


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def figures(request):
    data: dict = {}
    yield data
    report = getattr(request.node, "rep_call", None)
    if report is None:
        outcome = "error"
    elif hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    else:
        outcome = report.outcome
    entry = {
        "outcome": outcome,
        "run_at": datetime.datetime.now().isoformat(timespec="seconds"),
        "duration_s": round(report.duration, 2) if report is not None else None,
        "machine": machine(),
        **data,
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{request.node.module.__name__.rsplit('.', 1)[-1]}.json"
    try:
        existing = json.loads(path.read_text())
    except (OSError, ValueError):
        existing = {}
    existing[request.node.name] = entry
    path.write_text(json.dumps(existing, indent=1, default=str) + "\n")


class Reaper:
    def __init__(self) -> None:
        self.procs: dict[tuple[int, float], psutil.Process] = {}

    def track(self, procs) -> None:
        for proc in procs:
            try:
                self.procs[(proc.pid, proc.create_time())] = proc
            except psutil.Error:
                pass

    def survivors(self, timeout: float = 15.0) -> list[psutil.Process]:
        """The tracked processes still running after waiting up to ``timeout`` seconds for them to go.
        (Orphans, e.g. the resource tracker of a killed kernel, are no longer our descendants, so
        ``wait_for_no_new_children`` does not wait for them.)"""
        from .kernels import running, wait_all_gone

        wait_all_gone(list(self.procs.values()), timeout, poll=0.1)
        return running(list(self.procs.values()))


@pytest.fixture
def reaper():
    r = Reaper()
    yield r
    from .kernels import end

    end(list(r.procs.values()))


def cli(*args: str, runtime_dir: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real ``gpu-dask-kit`` command line (the venv's console script) against ``runtime_dir``."""
    script = Path(sys.executable).with_name("gpu-dask-kit")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "gpu_dask_kit"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
