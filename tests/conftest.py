"""Shared fixtures: a private session registry per test, and process accounting for leak checks."""

from __future__ import annotations

import os
import sys
import time

import psutil
import pytest
from hypothesis import settings

from .simgpu.fixtures import sim_gpus  # noqa: F401  (the simulated-GPU fixture, for every test module)

# Property tests (tests/properties/) scale their example counts by the profile's max_examples / 100:
# `make test` runs "quick" (a tenth: ~320 examples), `make test-properties` (in .ci/run) runs "full" (~3,200).
PROPERTIES_ENV = "GPU_DASK_KIT_PROPERTIES"
settings.register_profile("full", max_examples=100, deadline=None)
settings.register_profile("quick", max_examples=10, deadline=None)
settings.load_profile(os.environ.get(PROPERTIES_ENV, "quick"))


def kit_children() -> set[int]:
    """PIDs of this test process's descendants, minus multiprocessing's shared resource tracker
    (started once per interpreter by the first spawn and kept for its lifetime, not a session's process)."""
    pids = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if "resource_tracker" in " ".join(proc.cmdline()) or proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        pids.add(proc.pid)
    return pids


def wait_for_no_new_children(before: set[int], timeout: float = 15.0) -> set[int]:
    """Wait until no descendant beyond ``before`` runs; return the leftovers (empty when clean)."""
    deadline = time.monotonic() + timeout
    while True:
        left = kit_children() - before
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own registry folder (GPU_DASK_KIT_RUNTIME_DIR), so tests never see a user's
    real sessions or each other's."""
    path = tmp_path_factory.mktemp("runtime")
    monkeypatch.setenv("GPU_DASK_KIT_RUNTIME_DIR", str(path))
    return path


@pytest.fixture
def no_leaks():
    """Closes every kit session the test left open, then fails the test if any child process it
    started still runs. Yields the set of child PIDs that existed before the test."""
    before = kit_children()
    yield before
    from gpu_dask_kit.session import close_all

    close_all()
    left = wait_for_no_new_children(before)
    assert not left, f"processes left running: {[(p, psutil.Process(p).cmdline()) for p in left if psutil.pid_exists(p)]}"


PYTHON = sys.executable


#: Tests that run in `make test-slow` (.ci/run) instead of `make test`, by node-id prefix, each with what keeps
#: its coverage in `make test`. Decided here, in one place, so the two tiers can be read side by side.
SLOW_TIER = {
    "tests/strictgpu/": (
        "every notebook in GPU mode with host/device mixing refused (~4 min on 2 cores); make test keeps the "
        "simulated-GPU tier (real dask-cuda on stand-in GPUs) and nbval of every notebook with its exercises solved"
    ),
    "tests/test_hints.py::test_out_of_memory_in_a_task_prints_the_hint_in_a_real_kernel_and_the_session_survives": (
        "a worker killed 4 times over its memory limit in a real kernel (~1.5 min); make test keeps the hints' texts "
        "(test_hints) and the kernel tests of test_aio/test_clients; tests/reliability kills workers too"
    ),
}


def _matches(nodeid: str, prefixes) -> str | None:
    return next((p for p in prefixes if nodeid == p or nodeid.startswith(p if p.endswith("/") else p + "[")), None)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items):
    """The slow tier (above); `gpu`-marked tests are skipped, with the detection reason, where no GPU is usable."""
    for item in items:
        if _matches(item.nodeid, SLOW_TIER):
            item.add_marker(pytest.mark.slow)
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from gpu_dask_kit import detect

    report = detect("auto")
    if report.mode == "gpu":
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {report.reason_text}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)
