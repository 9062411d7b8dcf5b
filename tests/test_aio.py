"""Async mode without traps, re-run errors in plain words, stale sessions, connect mode and unknown resources
(issues 21 and 22 item 6). Notebook behaviour runs in a real kernel; the rest with real CPU clusters."""

from __future__ import annotations

import os
import time

import psutil
import pytest
from jupyter_client.manager import start_new_kernel

import gpu_dask_kit as kit
from gpu_dask_kit.session_info import plain_reason

from .conftest import wait_for_no_new_children
from .test_hints import _run  # one cell in a real kernel: (status, output)

SMALL = {"device": "cpu", "n_workers": 1, "threads_per_worker": 1, "memory_limit": "1GiB"}


def test_notebook_async_and_rerun_habits_in_a_real_kernel(runtime_dir):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    km, kc = start_new_kernel(kernel_name="python3", env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        opts = "device='cpu', n_workers=1, threads_per_worker=1, memory_limit='1GiB'"
        status, out = _run(kc, f"import gpu_dask_kit as kit\ns = kit.start_cluster({opts}, verbose=False)\nf = s.client.submit(sum, [1, 2])")
        assert status == "ok", out
        status, out = _run(kc, "await f")  # a synchronous session's future, awaited
        assert status == "error" and "gpu-dask-kit: `await` needs an asynchronous client" in out and "asynchronous=True" in out, out
        status, out = _run(kc, "x = s.client.submit(sum, [1, 2]); y = s.client.submit(lambda a: a + 1, x); print(y.result())")
        assert status == "ok" and out.strip() == "4", out
        _run(kc, "_ = s.client.restart()")
        status, out = _run(kc, "y.result()")
        assert status == "error" and "gpu-dask-kit: the cluster restarted" in out and "`y` (In [3])" in out, out
        assert "distributed/client.py" not in out, out  # one line of error, not distributed's internals
        _run(kc, "s.close()")
        status, out = _run(kc, "s.client.submit(sum, [1]).result()")
        assert status == "error" and "ClosedClientError" in out and "re-run the cell that starts the cluster (In [1])" in out, out
        status, out = _run(kc, "f.result()")
        assert status == "error" and "IOLoop is closed" in out and "has been closed since" in out, out
        # async mode: start without await says what to write; close without await still closes
        status, out = _run(kc, "pending = kit.start_cluster(asynchronous=True)\npending.client")
        assert status == "error" and "session = await gpu_dask_kit.start_cluster(asynchronous=True" in out, out
        status, out = _run(kc, f"a = await kit.start_cluster(asynchronous=True, {opts}, verbose=False)\nprint(await a.client.submit(sum, [1, 2]))")
        assert status == "ok" and out.strip() == "3", out
        status, out = _run(kc, f"again = await kit.start_cluster(asynchronous=True, {opts})")
        assert "await session.close() to start afresh" in out, out
        status, out = _run(kc, "pids = [p.pid for p in a.record.live_processes()]\nr = a.close()")  # no await
        assert status == "ok", out
        wait = "import asyncio, psutil\nfor _ in range(150):\n    if not any(psutil.pid_exists(p) for p in pids): break\n    await asyncio.sleep(0.2)\n"
        status, out = _run(kc, wait + "print(a.closed, [p for p in pids if psutil.pid_exists(p)])")
        assert status == "ok" and out.strip() == "True []", out
        status, out = _run(kc, f"b = await kit.start_cluster(asynchronous=True, {opts}, verbose=False)\nawait b.close()\nprint(b.closed)")
        assert status == "ok" and out.strip() == "True", out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_close_on_a_replaced_session_closes_the_current_one(no_leaks, capsys):
    old = kit.start_cluster(**SMALL, verbose=False)
    current = kit.start_cluster(**{**SMALL, "n_workers": 2}, verbose=False)
    pids = [p.pid for p in current.record.live_processes()]
    capsys.readouterr()
    old.close()  # the notebook's last cell, on the stale `session`
    said = capsys.readouterr().out
    assert "replaced by a later start_cluster() (a CPU cluster with 2 worker(s), the current session): closing that one" in said
    assert current.closed and kit.current_session() is None
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    old.close()  # again: nothing left to close, nothing said
    assert capsys.readouterr().out == ""


def test_a_task_asking_for_a_resource_no_worker_has_is_refused_within_seconds(no_leaks):
    from distributed.client import FutureCancelledError

    with kit.start_cluster(**SMALL, verbose=False) as session:
        started = time.monotonic()
        with pytest.raises(FutureCancelledError, match=r"resources=\{'GPU': 1\}, but none of the 1 worker\(s\) has that \(they declare no resources"):
            session.client.submit(sum, [1, 2], resources={"GPU": 1}).result(timeout=60)
        assert time.monotonic() - started < 15
        assert session.client.submit(sum, [2, 2], pure=False).result() == 4  # the cluster is fine


def test_connect_mode_names_what_it_ignores_and_disconnects(no_leaks, capsys):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", dashboard_address=":0") as cluster:
        session = kit.start_cluster(scheduler_address=cluster.scheduler_address, n_workers=4, memory_limit="2GiB")
        said = capsys.readouterr().out
        assert "Ignored in connect mode: memory_limit=2147483648, n_workers=4." in said, said
        again = kit.start_cluster(scheduler_address=cluster.scheduler_address, n_workers=4, memory_limit="2GiB", verbose=False)
        assert again is session
        kit.start_cluster(scheduler_address=cluster.scheduler_address, verbose=True)
        said = capsys.readouterr().out
        assert said.startswith(f"Disconnecting from the scheduler at {cluster.scheduler_address} first") and "keeps running" in said, said
        assert "Closing the running" not in said
        kit.current_session().close()
        assert cluster.status.name == "running"
    assert not wait_for_no_new_children(no_leaks)


def test_cpu_start_message_is_plain_and_gives_the_dashboard(no_leaks, capsys):
    text = plain_reason("cpu", "CPU mode: no NVIDIA driver was found on this machine (NVML could not be loaded).")
    assert "NVML" not in text and "No GPU was found here, so the workers are CPU workers" in text and "gpu-dask-kit doctor" in text
    with kit.start_cluster(n_workers=1, memory_limit="1GiB"):
        said = capsys.readouterr().out
    assert "NVML" not in said and "Dashboard: http" in said and "not" in said.split("Dashboard:")[1]
