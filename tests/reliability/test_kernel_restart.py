"""Kernel restarts (and an interrupt) in a real Jupyter kernel: the old cluster never outlives its kernel.

A real ipykernel (the venv's ``python3`` kernel spec, started by ``jupyter_client``) runs the notebook
start cell, then is restarted the three ways a kernel goes away in practice:

- ``restart-now``: ``KernelManager.restart_kernel(now=True)``, Jupyter's forced restart (SIGKILL to the
  kernel's process group);
- ``restart-graceful``: ``restart_kernel(now=False)``, JupyterLab's "Restart Kernel" (interrupt,
  shutdown request, then SIGTERM/SIGKILL to the process group after 2.5 s/5 s);
- ``kernel-sigkill``: only the kernel process is SIGKILLed (the OOM killer's way); its workers must
  exit by themselves before Jupyter's auto-restart starts a new kernel.

After each: every process of the old kernel is gone within 15 s, the registry holds no live record of
it (a stale one is removed by the real ``gpu-dask-kit sessions --cleanup``), and the start cell plus a
computation work again in the new kernel; shutting that kernel down leaves nothing running.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from gpu_dask_kit import registry

from ..conftest import kit_children, wait_for_no_new_children
from .conftest import ROOT, cli
from .kernels import Kernel, tree, wait_all_gone

GONE_LIMIT_S = 15.0

START = """\
import json, gpu_dask_kit as kit
s = kit.start_cluster(n_workers=2, memory_limit="1GiB")
print(json.dumps({"id": s.id, "pids": sorted(w.pid for w in s.memory().workers), "scheduler": s.scheduler_address}))
"""

COMPUTE = """\
import dask.array as da
print(json.dumps({"sum": int(s.client.compute(da.arange(1_000_000, chunks=100_000).sum()).result(timeout=60))}))
"""
EXPECTED_SUM = 499999500000


def _registry_state(runtime_dir: Path, session_id: str) -> str:
    path = runtime_dir / f"session-{session_id}.json"
    if not path.exists():
        return "removed"
    return "alive" if registry.get_session(session_id).alive else "stale"


async def _restart_scenario(mode: str, runtime_dir: Path, tmp_path: Path, reaper, figures: dict) -> None:
    before = kit_children()
    kernel = Kernel(runtime_dir, tmp_path / "kernel.log", ROOT)
    try:
        await kernel.start()
        first = (await kernel.execute(START)).last_json()
        old = tree(kernel.pid)  # the kernel, its 2 workers, multiprocessing's resource tracker
        reaper.track(old)
        assert set(first["pids"]) <= {p.pid for p in old}, (first, old)
        figures["old_processes"] = len(old)

        started = time.monotonic()
        if mode == "restart-now":
            await kernel.restart(now=True)
        elif mode == "restart-graceful":
            await kernel.restart(now=False)
        else:
            os.kill(kernel.pid, signal.SIGKILL)
            # The workers must go by themselves: nothing else signals them in this mode.
            own, _ = wait_all_gone(old, GONE_LIMIT_S, since=started)
            figures["old_gone_by_themselves_s"] = own
            await kernel.reconnect_after_crash()
        figures["restart_s"] = round(time.monotonic() - started, 2)
        gone, gone_at = wait_all_gone(old, GONE_LIMIT_S, since=started)
        figures["old_gone_s"] = gone
        assert gone is not None, f"old kernel processes still running {GONE_LIMIT_S} s after the restart: {[p.pid for p in old if p.pid not in gone_at]}"

        state = _registry_state(runtime_dir, first["id"])
        figures["old_record_after_restart"] = state
        assert state in ("removed", "stale"), "the dead kernel's session is still listed as live"
        cleanup = cli("sessions", "--cleanup", runtime_dir=runtime_dir)
        assert cleanup.returncode == 0, cleanup.stderr
        figures["cleanup_stdout"] = cleanup.stdout.strip()
        assert _registry_state(runtime_dir, first["id"]) == "removed"

        second = (await kernel.execute(START)).last_json()
        reaper.track(tree(kernel.pid))
        assert second["id"] != first["id"] and not set(second["pids"]) & set(first["pids"])
        assert (await kernel.execute(COMPUTE)).last_json()["sum"] == EXPECTED_SUM
        assert [(r.id, r.alive) for r in registry.list_sessions()] == [(second["id"], True)]

        new = tree(kernel.pid)
        reaper.track(new)
        shut = time.monotonic()
        await kernel.shutdown(now=False)  # JupyterLab's "Shut Down Kernel"
        figures["shutdown_s"] = round(time.monotonic() - shut, 2)
        figures["new_gone_s"], _ = wait_all_gone(new, GONE_LIMIT_S, since=shut)
        # A stale record (no process left behind it) is allowed here: Jupyter SIGTERMs the kernel 2.5 s after
        # the shutdown request, before the kit's atexit hook runs. Recorded, not asserted (docs/reliability.md).
        figures["new_record_after_shutdown"] = _registry_state(runtime_dir, second["id"])
        assert figures["new_gone_s"] is not None
        assert figures["new_record_after_shutdown"] in ("removed", "stale")
        assert "already in use" not in kernel.all_output()
    finally:
        await kernel.shutdown(now=True)
        left = wait_for_no_new_children(before, timeout=10) | {p.pid for p in reaper.survivors()}
        figures["leaked"] = sorted(left)
    assert not left, f"leaked processes: {left}"


@pytest.mark.parametrize("mode", ["restart-now", "restart-graceful", "kernel-sigkill"])
def test_kernel_restart_leaves_no_old_cluster(mode, runtime_dir, tmp_path, reaper, figures):
    figures["mode"] = mode
    asyncio.run(_restart_scenario(mode, runtime_dir, tmp_path, reaper, figures))


def test_interrupt_leaves_the_cluster_usable(runtime_dir, tmp_path, reaper, figures):
    """Jupyter's stop button sends SIGINT to the kernel's whole process group, workers included
    (dask/distributed#1925): the kit's IgnoreInterrupt worker plugin keeps them alive and the cluster usable."""

    async def scenario():
        before = kit_children()
        kernel = Kernel(runtime_dir, tmp_path / "kernel.log", ROOT)
        try:
            await kernel.start()
            first = (await kernel.execute(START)).last_json()
            reaper.track(tree(kernel.pid))
            long = asyncio.ensure_future(kernel.execute("import time\ns.client.submit(time.sleep, 8, pure=False).result()", check=False, timeout=60))
            await asyncio.sleep(2)
            await kernel.km.interrupt_kernel()
            interrupted = await long
            figures["interrupted_cell_s"] = round(interrupted.elapsed, 2)
            # The interrupted task keeps one worker busy for at most ~6 s more (dask does not cancel a running
            # task); 10 s is enough for the next computation on a healthy cluster.
            assert interrupted.error is not None and interrupted.error["ename"] == "KeyboardInterrupt"
            after = await kernel.execute(
                "import dask.array as da, time\nt = time.time()\n"
                "v = int(s.client.compute(da.arange(1_000_000, chunks=100_000).sum()).result(timeout=10))\n"
                "print(json.dumps({'sum': v, 's': time.time() - t, 'pids': sorted(w.pid for w in s.memory().workers)}))",
                check=False,
                timeout=60,
            )
            figures["after_interrupt"] = after.last_json() if after.error is None else after.error["ename"]
            assert after.error is None, f"the cluster is unusable after an interrupt: {after.error['ename']}: {after.error['evalue']}"
            assert after.last_json()["sum"] == EXPECTED_SUM
            figures["workers_survived"] = after.last_json()["pids"] == first["pids"]
        finally:
            await kernel.shutdown(now=True)  # SIGKILL to the process group: the workers go with it
            left = wait_for_no_new_children(before, timeout=10) | {p.pid for p in reaper.survivors()}
            figures["leaked"] = sorted(left)
        assert not left

    asyncio.run(scenario())
