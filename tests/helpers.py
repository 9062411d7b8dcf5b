"""Helpers for tests that need a kit session owned by another process (a 'kernel')."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import psutil
from jupyter_client.manager import KernelManager

OWNER_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import gpu_dask_kit as kit
    if __name__ == "__main__":
        s = kit.start_cluster(n_workers=int(sys.argv[1]), memory_limit="1GiB", verbose=False)
        print(json.dumps({"id": s.id, "pids": [w.pid for w in s.memory().workers]}), flush=True)
        time.sleep(600)
""")


def start_owner(tmp_path, runtime_dir, n_workers=1):
    """Start a process that owns a kit session and waits; return (popen, {"id", "pids"})."""
    script = tmp_path / "owner.py"
    script.write_text(OWNER_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(n_workers)], stdout=subprocess.PIPE, text=True, env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir))
    )
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        proc.wait()
        raise RuntimeError("the owner process did not start a session")
    return proc, json.loads(line)


def start_kernel(env: dict, startup_timeout: float = 60):
    """jupyter_client's ``start_new_kernel`` (the venv's python3 kernel), tried a second time when the kernel died
    before replying: it binds five TCP ports jupyter_client chose and released a moment before, and a Dask process
    of a test beside it can take one in between (ZMQError Address already in use, seen with three xdist workers).
    Returns (manager, client); the caller shuts the kernel down."""
    for attempt in (1, 2):
        km = KernelManager(kernel_name="python3")
        km.start_kernel(env=env)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=startup_timeout)
            return km, kc
        except RuntimeError as exc:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            if attempt == 2 or "died before replying" not in str(exc):
                raise
    raise AssertionError("unreachable")


def wait_gone(pids, timeout):
    """True once none of ``pids`` runs (a zombie counts as gone) within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(_running(p) for p in pids):
            return True
        time.sleep(0.2)
    return False


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # exited between the look-up and the read (seen: /proc/PID/stat gone)
        return False
