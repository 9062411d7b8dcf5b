import json
import os
import signal
import stat

import psutil
import pytest

from gpu_dask_kit import cleanup, registry
from gpu_dask_kit.cli import main as cli_main

from .helpers import start_owner, wait_gone


def test_ids_are_validated():
    for bad in ["", "../../etc/passwd", "A" * 32, "0" * 31, "0" * 33, None, 7, "g" * 32]:
        with pytest.raises(ValueError, match="not valid"):
            registry.validate_session_id(bad)
    with pytest.raises(KeyError, match="no session"):
        registry.get_session("0" * 32)
    with pytest.raises(KeyError):
        cleanup.shutdown_session("0" * 32)


def test_records_are_private_and_listed(runtime_dir):
    rec = registry.register(scheduler_address="tcp://127.0.0.1:1", dashboard_link=None, mode="cpu", n_workers=0, options={})
    assert stat.S_IMODE(rec.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(runtime_dir.stat().st_mode) == 0o700
    [listed] = registry.list_sessions()
    assert listed.id == rec.id and listed.alive and listed.to_dict()["stale"] is False
    registry.unregister(rec.id)
    assert registry.list_sessions() == []


def test_garbage_and_foreign_files_are_ignored(runtime_dir):
    runtime_dir.mkdir(exist_ok=True)
    (runtime_dir / "session-broken.json").write_text("{not json")
    (runtime_dir / f"session-{'a' * 32}.json").write_text(json.dumps({"id": "../x"}))
    assert registry.list_sessions() == []


def test_killed_owner_is_stale_and_cleanup_leaves_nothing(tmp_path, runtime_dir, capsys):
    proc, info = start_owner(tmp_path, runtime_dir, n_workers=2)
    try:
        [record] = registry.list_sessions()
        assert record.id == info["id"] and record.alive
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        [record] = registry.list_sessions()
        assert record.stale if hasattr(record, "stale") else not record.alive
        assert cli_main(["sessions"]) == 0
        assert "STALE" in capsys.readouterr().out
        assert cli_main(["sessions", "--cleanup"]) == 0
        out = capsys.readouterr().out
        assert f"removed stale session {info['id']}" in out and "1 stale session(s) cleaned up." in out
        assert registry.list_sessions() == []
        assert wait_gone(info["pids"], 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in info["pids"]:
            if psutil.pid_exists(pid):
                psutil.Process(pid).kill()


def test_workers_of_a_killed_owner_exit_by_themselves(tmp_path, runtime_dir):
    proc, info = start_owner(tmp_path, runtime_dir, n_workers=1)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert wait_gone(info["pids"], 20), "workers should notice the scheduler is gone (death_timeout) and exit"
    finally:
        for pid in info["pids"]:
            if psutil.pid_exists(pid):
                psutil.Process(pid).kill()


def test_shutdown_of_another_processes_live_session(tmp_path, runtime_dir):
    proc, info = start_owner(tmp_path, runtime_dir, n_workers=1)
    try:
        cleanup.shutdown_session(info["id"])
        assert wait_gone(info["pids"], 15)
        assert registry.list_sessions() == []
    finally:
        proc.kill()
        proc.wait()


def test_prune_dead_removes_only_records_with_nothing_running(tmp_path, runtime_dir):
    # a record whose owner ran and exited (nothing recorded runs): pruned
    code = (
        "from gpu_dask_kit import registry\n"
        "print(registry.register(scheduler_address='tcp://127.0.0.1:9', dashboard_link=None, mode='cpu',"
        " n_workers=0, options={}, started_by='script').id)"
    )
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)), capture_output=True, text=True, check=True
    ).stdout.strip()
    # a record whose owner is gone but one recorded process still runs: kept (stale, for --cleanup)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        kept = registry.register(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=1, options={}, worker_pids=[sleeper.pid])
        kept.owner = {"pid": 999_999_999, "create_time": 0.0}
        registry.update(kept)
        mine = registry.register(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=0, options={})
        assert registry.prune_dead() == [dead]
        assert sorted(r.id for r in registry.list_sessions()) == sorted([kept.id, mine.id])
        assert sleeper.poll() is None  # pruning never signals anything
    finally:
        sleeper.kill()
        sleeper.wait()


def test_slurm_job_ids_round_trip_and_old_records_still_load(runtime_dir):
    record = registry.register(scheduler_address=None, dashboard_link=None, mode="gpu", n_workers=2, options={"deploy": "slurm"})
    assert registry.get_session(record.id).slurm_job_name is None and record.to_dict()["slurm_job_ids"] == []
    record.slurm_job_name, record.slurm_job_ids = "gdk-0123abcd", ["41", "42"]
    registry.update(record)
    again = registry.get_session(record.id)
    assert (again.slurm_job_name, again.slurm_job_ids) == ("gdk-0123abcd", ["41", "42"])
    data = json.loads(record.path.read_text())  # a record written before phase 2 has no SLURM fields
    del data["slurm_job_name"], data["slurm_job_ids"]
    record.path.write_text(json.dumps(data))
    assert registry.get_session(record.id).slurm_job_ids == []


def test_prune_dead_leaves_slurm_records_to_cleanup(runtime_dir):
    """Only SLURM can tell whether a dead owner's jobs are gone: such records wait for --cleanup."""
    record = registry.register(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=0, options={})
    record.owner = {"pid": 999_999_999, "create_time": 0.0}
    record.slurm_job_name, record.slurm_job_ids = "gdk-0123abcd", ["41"]
    registry.update(record)
    local = registry.register(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=0, options={})
    local.owner = {"pid": 999_999_999, "create_time": 0.0}
    registry.update(local)
    assert registry.prune_dead() == [local.id]
    assert [r.id for r in registry.list_sessions()] == [record.id]


@pytest.mark.parametrize("old, new, value", [("backend", "mode", "gpu"), ("kind", "started_by", "script")])
def test_a_record_written_with_an_old_key_loads_under_its_new_name(runtime_dir, old, new, value):
    rec = registry.register(scheduler_address=None, dashboard_link=None, n_workers=1, options={}, **{"mode": "cpu", new: value})
    data = json.loads(rec.path.read_text())
    assert data[new] == value and old not in data
    data[old] = data.pop(new)  # as a kit version before the rename wrote it
    rec.path.write_text(json.dumps(data))
    loaded = registry.get_session(rec.id)
    assert getattr(loaded, new) == value and loaded.to_dict()[new] == value and old not in loaded.to_dict()
    registry.unregister(rec.id)
