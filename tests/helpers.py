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


def wait_for_scheduler_file(path, proc, timeout: float = 60.0) -> str:
    """The address in the scheduler file ``proc`` (a ``dask scheduler``) writes, once the file is whole.

    The scheduler writes it with open() + json.dump(), so a file that exists can still be empty or cut off for a
    moment (CI once read it empty on a loaded 2-core machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the scheduler exited ({proc.returncode}) before writing {path}")
        try:
            address = json.loads(path.read_text()).get("address")
        except (FileNotFoundError, ValueError):
            address = None
        if address:
            return address
        time.sleep(0.1)
    raise RuntimeError(f"no complete scheduler file at {path} after {timeout:g} s")


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


def cancel_last_made_first(client, *held, limit=10.0):
    """Cancel the futures of ``held`` (collections or futures, in the order they were made), the last made first, each
    waited for: what a restart does to a notebook's data.

    distributed 2026.7.1's ``Scheduler.stimulus_cancel`` asserts that every dependent of a cancelled key is held by a
    client. ``client.cancel([x, u, s, v])`` after an SVD reaches the SVD's own tasks below u, s, v (held by no one):
    the assertion drops the client's connection and cancels every future it holds, the next test's included
    ("scheduler-connection-lost"). With u, s, v gone first, x has no dependents left when it is cancelled."""
    from distributed import Future, futures_of

    for item in reversed(held):
        futures = [item] if isinstance(item, Future) else futures_of(item)
        client.cancel(futures)
        deadline = time.monotonic() + limit
        while any(f.status != "cancelled" for f in futures) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all(f.status == "cancelled" for f in futures), [f.status for f in futures]
