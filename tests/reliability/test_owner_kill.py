"""The owner of a session (a kernel-like process) SIGKILLed: nothing it started outlives it for long.

Three owner processes each start a real 2-worker CPU session through ``gpu_dask_kit.start_cluster``
(the scheduler and the nannies live inside the owner, as in a notebook kernel; each worker is a
process of its own). Two owners are idle; one has both workers busy in a pure-Python loop, as when
a kernel is OOM-killed in the middle of a computation. All three owners are SIGKILLed at once, and
the time until each of their processes is gone is measured. The records they leave in the registry
are stale; the real ``gpu-dask-kit sessions --cleanup`` (a subprocess) removes them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from ..conftest import kit_children, wait_for_no_new_children
from .conftest import ROOT, cli
from .kernels import tree, wait_all_gone

EXIT_LIMIT_S = 15.0

OWNER = textwrap.dedent("""
    import json, sys, time
    import gpu_dask_kit as kit
    if __name__ == "__main__":
        sys.path.insert(0, sys.argv[2])
        from tests.reliability.workloads import busy
        s = kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB", verbose=False)
        pids = [w.pid for w in s.memory().workers]
        if sys.argv[1] == "busy":
            futures = [s.client.submit(busy, 120, workers=[w.address], pure=False) for w in s.memory().workers]
            while sum(len(v) for v in s.client.processing().values()) < 2:
                time.sleep(0.05)
            time.sleep(0.5)  # the loops are running
        print(json.dumps({"id": s.id, "pids": pids, "scheduler": s.scheduler_address}), flush=True)
        time.sleep(600)
""")

STATES = ("idle", "busy", "idle")


def test_killed_owners_leave_nothing_behind(tmp_path, runtime_dir, reaper, figures):
    t0 = time.monotonic()
    figures["phases_s"] = {}
    before = kit_children()
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    env = dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir))
    owners = [subprocess.Popen([sys.executable, str(script), state, str(ROOT)], stdout=subprocess.PIPE, text=True, env=env) for state in STATES]
    reaper.track(tree(p.pid)[0] for p in owners)
    infos = []
    try:
        for proc in owners:
            line = proc.stdout.readline()
            assert line, f"owner {proc.pid} did not start a session (exit code {proc.poll()})"
            infos.append(json.loads(line))
    finally:
        trees = [tree(p.pid) for p in owners]  # owner, its 2 workers, multiprocessing's resource tracker
        for procs in trees:
            reaper.track(procs)
    for info, procs in zip(infos, trees, strict=False):
        assert set(info["pids"]) <= {p.pid for p in procs}

    figures["phases_s"]["owners_started"] = round(time.monotonic() - t0, 2)
    listed = json.loads(cli("sessions", "--json", runtime_dir=runtime_dir).stdout)
    assert sorted(r["id"] for r in listed) == sorted(i["id"] for i in infos) and all(r["alive"] for r in listed)

    killed_at = time.monotonic()
    for proc in owners:
        os.kill(proc.pid, signal.SIGKILL)
    everything = [p for procs in trees for p in procs[1:]]  # [0] is the owner itself
    _, gone_at = wait_all_gone(everything, EXIT_LIMIT_S + 5, poll=0.02, since=killed_at)
    for proc in owners:
        proc.wait()
        proc.stdout.close()
    results = []
    for state, info, procs in zip(STATES, infos, trees, strict=False):
        times = [gone_at.get(p.pid) for p in procs[1:]]
        workers = {pid: gone_at.get(pid) for pid in info["pids"]}
        results.append(
            {
                "state": state,
                "processes": len(procs),
                "all_gone_s": None if None in times else max(times),
                "workers_gone_s": workers,
                "others_gone_s": {p.pid: gone_at.get(p.pid) for p in procs[1:] if p.pid not in workers},
            }
        )
    figures["phases_s"]["kill_to_all_gone"] = round(time.monotonic() - killed_at, 2)
    exit_times = [r["all_gone_s"] for r in results]
    figures.update(owners=results, exit_limit_s=EXIT_LIMIT_S, max_exit_s=None if None in exit_times else max(exit_times))

    # The registry still names them, as stale, until the CLI cleans up.
    listed = json.loads(cli("sessions", "--json", runtime_dir=runtime_dir).stdout)
    figures["stale_before_cleanup"] = sum(r["stale"] for r in listed)
    cleanup_started = time.monotonic()
    cleanup = cli("sessions", "--cleanup", runtime_dir=runtime_dir)
    figures["cleanup_s"] = round(time.monotonic() - cleanup_started, 2)
    figures["cleanup_stdout"] = cleanup.stdout
    after = json.loads(cli("sessions", "--json", runtime_dir=runtime_dir).stdout)
    figures["sessions_after_cleanup"] = len(after)
    figures["phases_s"]["cli_done"] = round(time.monotonic() - t0, 2)
    left = wait_for_no_new_children(before, timeout=5) | {p.pid for p in reaper.survivors()}
    figures["leaked"] = sorted(left)

    assert None not in exit_times and max(exit_times) <= EXIT_LIMIT_S, f"processes outlived their owner: {results}"
    assert figures["stale_before_cleanup"] == len(STATES)
    assert cleanup.returncode == 0, cleanup.stderr
    for info in infos:
        assert f"removed stale session {info['id']}" in cleanup.stdout
    assert f"{len(STATES)} stale session(s) cleaned up." in cleanup.stdout
    assert after == [] and list(runtime_dir.glob("session-*.json")) == []
    assert not left, f"leaked processes: {left}"
