"""A worker SIGKILLed in the middle of a computation: the result is still right.

Each trial starts a real 2-worker CPU cluster (scheduler in this process, two nanny-managed worker
processes), submits a 1360-task array computation, waits until one worker holds finished results and
tasks are still running, SIGKILLs that worker's process, and compares the result with NumPy.
Dask recomputes the lost blocks (they are deterministic) on the surviving worker and on the worker the
nanny starts in place of the killed one. Every trial is run even if an earlier one failed, so the
figure is an honest N/N.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import psutil

import gpu_dask_kit as kit
from gpu_dask_kit import registry

from ..conftest import kit_children, wait_for_no_new_children
from . import workloads

TRIALS = 5
#: Seconds after submission before the kill, per trial (the computation takes ~4 s undisturbed here).
KILL_AFTER = (0.5, 1.0, 1.5, 2.0, 2.5)


def _kill_mid_computation(trial: dict) -> None:
    """One trial; fills ``trial`` (which keeps what was measured even when the trial raises)."""
    seed, kill_after = trial["seed"], trial["kill_after_s"]
    before = kit_children()
    reference = workloads.numpy_reference(seed)
    started = time.monotonic()
    session = kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    try:
        client = session.client
        workers = {w.address: w.pid for w in session.memory().workers}
        trial["worker_pids"] = sorted(workers.values())
        trial["start_s"] = round(time.monotonic() - started, 2)
        result = workloads.dask_workload(seed)
        n_tasks = len(result.__dask_graph__())
        submitted = time.monotonic()
        future = client.compute(result)
        # Wait until the computation is under way (``kill_after`` seconds, later in later trials) and a
        # worker holds finished blocks (lost with it) while tasks are still to run; then kill the worker
        # holding the most results.
        victim = None
        deadline = submitted + 60
        while time.monotonic() < deadline and not future.done():
            held = {addr: len(keys) for addr, keys in client.has_what().items()}
            if time.monotonic() - submitted >= kill_after and held and max(held.values()) >= 10:
                victim = max(held, key=held.get)
                break
            time.sleep(0.05)
        assert victim is not None and not future.done(), "the computation ended before a worker could be killed"
        processing = sum(len(v) for v in client.processing().values())
        victim_pid = workers[victim]
        os.kill(victim_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        trial.update(
            tasks=n_tasks,
            killed_after_s=round(killed_at - submitted, 2),
            victim_pid=victim_pid,
            results_held_by_victim=held[victim],
            tasks_processing_at_kill=processing,
            done_at_kill=future.done(),
        )
        value = future.result(timeout=180)
        trial["result_after_kill_s"] = round(time.monotonic() - killed_at, 2)
        trial["total_compute_s"] = round(time.monotonic() - submitted, 2)
        trial["correct"] = bool(np.allclose(value, reference, rtol=1e-12, atol=0))
        trial["max_abs_error"] = float(np.max(np.abs(value - reference)))
        assert not psutil.pid_exists(victim_pid) or psutil.Process(victim_pid).status() == psutil.STATUS_ZOMBIE
        # The nanny replaced the worker: two workers again, one of them a new process.
        deadline = time.monotonic() + 30
        while session.n_workers != 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        now = sorted(w.pid for w in session.memory().workers)
        trial["worker_pids_after"] = now
        trial["replaced"] = len(now) == 2 and victim_pid not in now
        # The registry record follows the replacement (so `sessions --cleanup` would end the new worker).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            recorded = sorted(p["pid"] for p in registry.get_session(session.id).processes)
            if recorded == now:
                break
            time.sleep(0.2)
        trial["registry_pids_after"] = recorded
        trial["registry_follows"] = recorded == now
    finally:
        session.close()
    left = wait_for_no_new_children(before)
    trial["leaked"] = sorted(left)
    trial["ok"] = bool(trial.get("correct") and trial.get("replaced") and trial.get("registry_follows") and not left)


def test_worker_sigkill_mid_computation(no_leaks, figures):
    trials = []
    for seed in range(TRIALS):
        trial = {"seed": seed, "kill_after_s": KILL_AFTER[seed]}
        trials.append(trial)
        try:
            _kill_mid_computation(trial)
        except Exception as exc:  # keep going: the figure is N/N over all trials
            trial.update(ok=False, error=f"{type(exc).__name__}: {exc}")
    passed = sum(t["ok"] for t in trials)
    figures.update(
        trials=trials,
        passed=passed,
        total=TRIALS,
        summary=f"{passed}/{TRIALS}",
        max_result_after_kill_s=max((t.get("result_after_kill_s", 0) for t in trials), default=None),
    )
    assert passed == TRIALS, f"{passed}/{TRIALS} trials correct and clean: {trials}"
