"""Real CPU clusters: start, compute, reuse, replace, connect and close, counting processes."""

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time

import dask
import psutil
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import ConnectError, OptionError, registry, scheduler_view

from .conftest import kit_children, wait_for_no_new_children
from .helpers import wait_for_scheduler_file

SMALL = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def _listening(pids):
    addrs = set()
    for pid in pids:
        try:
            for c in psutil.Process(pid).net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    addrs.add(c.laddr.ip)
        except psutil.Error:
            pass
    return addrs


def test_start_compute_close_leaves_nothing(no_leaks, runtime_dir, capsys):
    before_backend = dask.config.get("array.backend", None)
    session = kit.start_cluster(**SMALL)
    out = capsys.readouterr().out
    assert out.startswith("Started a CPU cluster with 2 worker(s). No GPU was found here, so the workers are CPU workers") and "NVML" not in out
    assert session.mode == "cpu" and session.n_workers == 2
    assert kit.current_session() is session
    assert isinstance(session.client, scheduler_view.client_class())  # scheduler_info() answers with what it fetched
    assert dask.config.get("array.backend") == "numpy" and dask.config.get("dataframe.backend") == "pandas"
    x = kit.compute.random_array((4000, 50), chunks=(1000, 50), seed=1) if hasattr(kit, "compute") else None
    from gpu_dask_kit.compute import random_array

    x = random_array((4000, 50), chunks=(1000, 50), seed=1)
    assert 0.45 < float(x.mean().compute()) < 0.55
    worker_pids = [w.pid for w in session.memory().workers]
    assert len(worker_pids) == 2 and all(psutil.pid_exists(p) for p in worker_pids)
    # Only loopback: the in-process scheduler and dashboard, and each worker.
    assert _listening([os.getpid(), *worker_pids]) <= {"127.0.0.1"}
    assert session.dashboard_link.startswith("http://127.0.0.1:") and not session.dashboard_link.endswith(":8787/status")
    # The registry holds one private file naming the workers.
    files = list(runtime_dir.glob("session-*.json"))
    assert len(files) == 1 and stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(runtime_dir.stat().st_mode) == 0o700
    record = json.loads(files[0].read_text())
    assert sorted(p["pid"] for p in record["processes"]) == sorted(worker_pids)
    assert record["owner"]["pid"] == os.getpid() and record["mode"] == "cpu"
    session.close()
    assert not wait_for_no_new_children(no_leaks)
    assert not any(psutil.pid_exists(p) for p in worker_pids)
    assert list(runtime_dir.glob("session-*.json")) == []
    assert kit.current_session() is None and session.closed
    assert dask.config.get("array.backend", None) == before_backend
    session.close()  # idempotent


def test_close_quiets_the_stopping_workers_without_an_error_of_its_own(no_leaks, capfd):
    """Learner review 11: stopping workers printed heartbeat tracebacks into the notebook, so close quiets their loggers
    first; review 12: that call passed `timeout=` to the function (Client.run hands keywords on) and every close
    printed "Run Failed ... TypeError". The workers' stderr is this process's (captured by fd)."""
    session = kit.start_cluster(**SMALL)
    levels = session.client.run(lambda: __import__("logging").getLogger("distributed.worker").level)
    session.close()
    err = capfd.readouterr().err
    assert "Run Failed" not in err and "_quiet_while_stopping" not in err, err
    assert all(level != 50 for level in levels.values())  # (CRITICAL only once close began)


def test_rerun_same_options_reuses_and_other_options_replace(no_leaks, capsys):
    first = kit.start_cluster(**SMALL)
    capsys.readouterr()
    again = kit.start_cluster(**SMALL)
    assert again is first
    assert capsys.readouterr().out.splitlines()[0] == "Reusing the running CPU cluster (same options); session.close() to start afresh."
    old_pids = [w.pid for w in first.memory().workers]
    other = kit.start_cluster(**{**SMALL, "n_workers": 1})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Closing the running CPU cluster first, because options changed (n_workers: 2 -> 1)."
    assert other is not first and first.closed and other.n_workers == 1
    assert not any(psutil.pid_exists(p) for p in old_pids)
    assert len(registry.list_sessions()) == 1
    other.close()


def test_context_manager_closes(no_leaks, runtime_dir):
    with kit.start_cluster(verbose=False, **SMALL) as session:
        assert session.client.submit(sum, [1, 2, 3]).result() == 6
    assert session.closed and kit.current_session() is None
    assert list(runtime_dir.glob("session-*.json")) == []


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"n_workers": 0}, "n_workers"),
        ({"n_workers": -1}, "n_workers"),
        ({"memory_limit": "12 parsecs"}, "memory_limit"),
        ({"rmm_async": True, "rmm_pool_size": "1GiB"}, "rmm_async"),
        ({"device": "gpu"}, "device"),
        ({"protocol": "ucx"}, "protocol"),
        ({"scheduler_address": "tcp://127.0.0.1:1", "scheduler_file": __file__}, "scheduler_address"),
        ({"nworkers": 2}, "nworkers"),
        ({"memory_limit": "1000000TiB"}, "memory_limit"),
    ],
)
def test_bad_input_raises_before_any_process_or_file(kwargs, parameter, runtime_dir):
    before = kit_children()
    with pytest.raises(OptionError) as info:
        kit.start_cluster(**kwargs)
    assert info.value.parameter == parameter
    assert kit_children() == before
    assert list(runtime_dir.glob("*")) == [] and kit.current_session() is None


def test_bad_input_does_not_touch_the_running_session(no_leaks):
    session = kit.start_cluster(verbose=False, **SMALL)
    with pytest.raises(OptionError):
        kit.start_cluster(n_workers=0)
    assert kit.current_session() is session and session.is_alive()
    session.close()


def test_jupyterhub_dashboard_link(no_leaks, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    with kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB") as session:
        port = session.client.scheduler_info()["services"]["dashboard"]
        assert session.dashboard_link == f"/user/ada/proxy/{port}/status"
        assert registry.list_sessions()[0].dashboard_link == session.dashboard_link


def test_dashboard_can_be_turned_off(no_leaks):
    with kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB", dashboard_address=None) as session:
        assert session.dashboard_link is None


# --- connect mode ----------------------------------------------------------------------------------


@pytest.fixture
def external_cluster(tmp_path):
    """A `dask scheduler` and one `dask worker` started by hand, as on SLURM; stopped by PID after."""
    sched_file = tmp_path / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(sched_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        address = wait_for_scheduler_file(sched_file, procs[0])
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--memory-limit",
                    "1GiB",
                    "--host",
                    "127.0.0.1",
                    "--no-nanny",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        yield address, str(sched_file), procs
    finally:
        for p in reversed(procs):  # the worker first: one whose scheduler went first waits ~10 s to reconnect
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.mark.parametrize("by", ["address", "file"])
def test_connect_to_existing_scheduler_and_leave_it_running(external_cluster, by):
    address, sched_file, procs = external_cluster
    kwargs = {"scheduler_address": address} if by == "address" else {"scheduler_file": sched_file}
    session = kit.start_cluster(verbose=False, connect_timeout=30, **kwargs)
    try:
        assert session.mode == "cpu" and session.cluster is None
        assert isinstance(session.client, scheduler_view.client_class())
        assert session.client.submit(lambda: 40 + 2).result() == 42
        assert registry.list_sessions()[0].started_by == "connect"
    finally:
        session.close()
    assert all(p.poll() is None for p in procs), "closing a connected session must not stop somebody else's cluster"
    assert registry.list_sessions() == []


def test_scheduler_file_still_being_written_is_read_again(external_cluster, tmp_path, runtime_dir):
    """`dask scheduler` writes its file with open() + json.dump(): a kit started in the same moment (a batch script
    that starts both) can find the file empty; that is not yet "not a scheduler file"."""
    address, sched_file, _ = external_cluster
    half = tmp_path / "half.json"
    half.write_text("")
    writer = threading.Timer(0.5, lambda: half.write_text(open(sched_file).read()))
    writer.start()
    try:
        session = kit.start_cluster(scheduler_file=str(half), connect_timeout=30, verbose=False)
    finally:
        writer.join()
    try:
        assert session.scheduler_address == address
    finally:
        session.close()


def test_file_that_is_no_scheduler_file_fails_clearly(no_leaks, runtime_dir, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("remember to start the scheduler")
    with pytest.raises(ConnectError) as info:
        kit.start_cluster(scheduler_file=str(path), connect_timeout=5)
    message = str(info.value)
    assert f"scheduler_file={str(path)!r} is not a scheduler file" in message and "scheduler_address" in message
    assert list(runtime_dir.glob("*")) == [] and kit.current_session() is None


def test_unreachable_scheduler_fails_clearly(no_leaks, runtime_dir):
    started = time.monotonic()
    with pytest.raises(ConnectError) as info:
        kit.start_cluster(scheduler_address="tcp://127.0.0.1:9", connect_timeout=2)
    assert time.monotonic() - started < 20
    message = str(info.value)
    assert "scheduler_address='tcp://127.0.0.1:9'" in message and "no scheduler answered within 2 s" in message
    assert list(runtime_dir.glob("*")) == []


def test_scheduler_without_workers_times_out_clearly(tmp_path, runtime_dir):
    sched_file = tmp_path / "s.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            "127.0.0.1:0",
            "--scheduler-file",
            str(sched_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_scheduler_file(sched_file, proc)
        with pytest.raises(ConnectError, match="no worker joined within 2 s"):
            kit.start_cluster(scheduler_file=str(sched_file), connect_timeout=2)
        assert list(runtime_dir.glob("*")) == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sessions_close_at_interpreter_exit(runtime_dir, tmp_path):
    script = tmp_path / "forget_to_close.py"
    script.write_text(
        textwrap.dedent("""
        import gpu_dask_kit as kit
        if __name__ == "__main__":
            s = kit.start_cluster(n_workers=2, memory_limit="1GiB", verbose=False)
            print(",".join(str(w.pid) for w in s.memory().workers), flush=True)
    """)
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir))
    )
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.strip().split(",")]
    deadline = time.monotonic() + 15
    while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(psutil.pid_exists(p) for p in pids)
    assert list(runtime_dir.glob("session-*.json")) == []


def _recorded_pids(runtime_dir):
    files = list(runtime_dir.glob("session-*.json"))
    assert len(files) == 1
    return sorted(p["pid"] for p in json.loads(files[0].read_text())["processes"])


def _wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_scale_updates_the_registry_and_close_stops_the_new_workers(no_leaks, runtime_dir):
    session = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    first = _recorded_pids(runtime_dir)
    assert session.scale(3) is session and session.n_workers == 3
    pids = sorted(w.pid for w in session.memory().workers)
    assert len(pids) == 3 and set(first) < set(pids)
    assert _recorded_pids(runtime_dir) == pids  # what `sessions --cleanup` and the sidebar would stop
    assert json.loads(next(runtime_dir.glob("session-*.json")).read_text())["n_workers"] == 3
    session.scale(2)
    assert session.n_workers == 2 and _wait_for(lambda: len(_recorded_pids(runtime_dir)) == 2)
    session.close()
    assert not wait_for_no_new_children(no_leaks)
    assert not any(psutil.pid_exists(p) for p in pids)


@pytest.mark.parametrize("value, accepted", [(0, "whole number"), ("two", "whole number"), (True, "whole number")])
def test_scale_rejects_bad_values_and_leaves_the_cluster_as_it_was(no_leaks, value, accepted):
    session = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    with pytest.raises(OptionError, match="n_workers") as info:
        session.scale(value)
    assert accepted in str(info.value)
    assert session.n_workers == 1 and session.options.n_workers == 1 and session.is_alive()
    session.close()


def test_a_restarted_worker_is_followed_in_the_registry(no_leaks, runtime_dir):
    session = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    (old,) = _recorded_pids(runtime_dir)
    os.kill(old, 9)  # the nanny starts a new worker process
    assert _wait_for(lambda: _recorded_pids(runtime_dir) not in ([old], [])), _recorded_pids(runtime_dir)
    (new,) = _recorded_pids(runtime_dir)
    assert new != old and psutil.pid_exists(new)
    session.close()
    assert not psutil.pid_exists(new) or psutil.Process(new).status() == psutil.STATUS_ZOMBIE


def test_workers_ignore_the_interrupt_jupyter_sends_to_the_kernels_process_group(no_leaks):
    import signal

    session = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    handlers = session.client.run(lambda: int(signal.getsignal(signal.SIGINT)))
    assert list(handlers.values()) == [int(signal.SIG_IGN)]
    (pid,) = [w.pid for w in session.memory().workers]
    os.kill(pid, signal.SIGINT)  # what the stop button does to every process in the kernel's group
    time.sleep(1)
    assert psutil.pid_exists(pid) and session.client.submit(sum, [1, 2]).result(timeout=30) == 3
    session.close()


def test_scale_and_adapt_after_the_close_cell_get_the_kits_sentence(no_leaks, runtime_dir):
    """Learner review 14 (08 cell 37 after the close cell): a raw traceback into session.py, no cell named. Now the
    kit's SessionClosedError, which the notebook hint turns into one sentence naming the cell to re-run."""
    from gpu_dask_kit.clients import SessionClosedError
    from gpu_dask_kit.notebook.hints import explain

    session = kit.start_cluster(**SMALL)
    session.close()
    history = ["", "session = kit.start_cluster()", "session.close()", "session.scale(3)"]
    for call in (lambda: session.scale(3), lambda: session.adapt(minimum=1, maximum=3)):
        with pytest.raises(SessionClosedError) as raised:
            call()
        hint = explain(raised.value, session=session, namespace={"In": history, "session": session, "kit": kit})
        assert hint is not None and "its close cell ran" in hint and "In [1]" in hint, hint
