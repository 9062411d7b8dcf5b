import json
import os
import subprocess
import sys

import pytest

from gpu_dask_kit.cli import main
from gpu_dask_kit.workshop import lab_command

from . import fake_nvml


def test_doctor_explains_this_machine(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mode for device='auto': ")
    assert "Why: " in out and "Libraries:" in out and "dask_cuda" in out


def test_doctor_json_is_the_report(capsys):
    assert main(["doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"mode", "reason", "reason_text", "gpus", "libraries"} <= set(data)


def test_doctor_require_gpu_exits_non_zero_without_gpu(capsys):
    code = main(["doctor", "--require-gpu"])
    from gpu_dask_kit import detect

    if detect().mode == "gpu":
        assert code == 0
    else:
        assert code == 1
        assert "--require-gpu: no usable GPU here." in capsys.readouterr().err


def test_doctor_with_fake_gpus_and_options(monkeypatch, capsys):
    fake_nvml.install(monkeypatch, fake_nvml.FakeNVML(gpus=2))
    from gpu_dask_kit import environment

    monkeypatch.setattr(environment, "_library", lambda m: environment.LibraryInfo(True, "1.0"))
    assert main(["doctor", "--require-gpu", "--options"]) == 0
    out = capsys.readouterr().out
    assert "Mode for device='auto': GPU" in out and "[1] Fake H100 80GB HBM3" in out
    assert "rmm_pool_size" in out and "device_memory_limit" in out
    environment._reset_nvml_for_tests()


def test_doctor_options_lists_every_spec_with_its_flag_and_current_default(capsys):
    import dask.config

    from gpu_dask_kit.options import OPTION_SPECS

    with dask.config.set({"gpu-dask-kit.n-workers": 3}):
        assert main(["doctor", "--options"]) == 0
    out = capsys.readouterr().out
    for name, spec in OPTION_SPECS.items():
        assert f"  {name} ({spec.flags[0]}) = " in out and spec.help() in out, name
    assert "  n_workers (--n-workers) = 3\n" in out and "  walltime (--walltime) = '01:00:00'\n" in out


def test_sessions_empty(capsys, runtime_dir):
    assert main(["sessions"]) == 0
    assert capsys.readouterr().out.startswith("No gpu-dask-kit sessions")
    assert main(["sessions", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_console_script_entry_point_runs():
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "gpu-dask-kit"), "doctor"], capture_output=True, text=True)
    assert out.returncode == 0 and "Mode for device='auto'" in out.stdout
    out = subprocess.run([sys.executable, "-m", "gpu_dask_kit", "sessions", "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().startswith("[")


def test_unknown_subcommand_and_bad_flag_exit_2(capsys):
    for argv in (["frobnicate"], ["doctor", "--gpu-please"], []):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2


def test_lab_command_binds_loopback(tmp_path):
    cmd = lab_command(str(tmp_path), 8899, open_browser=False)
    assert "--ServerApp.ip=127.0.0.1" in cmd and f"--ServerApp.root_dir={tmp_path}" in cmd
    assert "--ServerApp.port=8899" in cmd and "--no-browser" in cmd
    assert cmd[:3] == [sys.executable, "-m", "jupyterlab"]


def test_lab_rejects_a_missing_folder(capsys):
    assert main(["lab", "--notebook-dir", "/no/such/folder"]) == 2
    assert "--notebook-dir='/no/such/folder' is not a folder" in capsys.readouterr().err


def test_sessions_lists_the_job_ids_of_a_slurm_session(capsys, runtime_dir):
    from gpu_dask_kit import registry

    record = registry.register(scheduler_address="tcp://127.0.0.1:9", dashboard_link=None, mode="cpu", n_workers=2, options={"deploy": "slurm"})
    record.slurm_job_name, record.slurm_job_ids = "gdk-0123abcd", ["41", "42"]
    registry.update(record)
    pbs = registry.register(scheduler_address="tcp://127.0.0.1:7", dashboard_link=None, mode="cpu", n_workers=1, options={"deploy": "pbs"})
    pbs.slurm_job_name, pbs.slurm_job_ids = "gdk-4567cdef", ["7.pbs"]
    registry.update(pbs)
    local = registry.register(scheduler_address="tcp://127.0.0.1:8", dashboard_link=None, mode="cpu", n_workers=1, options={})
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert out.count("SLURM jobs") == 1 and "SLURM jobs (gdk-0123abcd): 41, 42" in out and "PBS jobs (gdk-4567cdef): 7.pbs" in out
    assert record.id in out and local.id in out
    assert main(["sessions", "--json"]) == 0
    items = {i["id"]: i for i in json.loads(capsys.readouterr().out)}
    assert items[record.id]["slurm_job_ids"] == ["41", "42"] and items[local.id]["slurm_job_name"] is None
