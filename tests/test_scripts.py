import argparse
import os
import subprocess
import sys

import pytest

from gpu_dask_kit import OptionError, add_cluster_args
from gpu_dask_kit.options import option_names
from gpu_dask_kit.scripts import flag_name, options_from_args

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(*argv):
    return add_cluster_args(argparse.ArgumentParser()).parse_args(list(argv))


def test_one_flag_per_option_with_the_same_name():
    args = parse()
    for name in option_names():
        assert hasattr(args, name)
    help_text = add_cluster_args(argparse.ArgumentParser()).format_help()
    for name in option_names():
        assert flag_name(name) in help_text
    assert "--cuda-visible-devices" in help_text


def test_unset_flags_are_left_to_the_config():
    assert options_from_args(parse()) == {}


def test_flags_become_options():
    args = parse(
        "--device", "cpu", "--n-workers", "3", "--rmm-pool-size", "0.5", "--rmm-async", "--scheduler-file", "/tmp/s.json", "--cuda-visible-devices", "0,1"
    )
    assert options_from_args(args) == {
        "device": "cpu",
        "n_workers": 3,
        "rmm_pool_size": "0.5",
        "rmm_async": True,
        "scheduler_file": "/tmp/s.json",
        "CUDA_VISIBLE_DEVICES": "0,1",
    }
    assert options_from_args(parse("--no-rmm-async"))["rmm_async"] is False


def test_bad_flag_values_get_the_kit_error():
    from gpu_dask_kit import ClusterOptions

    with pytest.raises(OptionError, match="n_workers=-2"):
        ClusterOptions.from_config(**options_from_args(parse("--n-workers", "-2")))


def test_example_script_runs_end_to_end(runtime_dir):
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "train_script.py"), "--device", "cpu", "--n-workers", "1", "--memory-limit", "1GiB", "--rows", "2000"],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "mode=cpu workers=1 largest singular value=" in out.stdout
    assert list(runtime_dir.glob("session-*.json")) == []


def test_example_script_reports_bad_flags_clearly(runtime_dir):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_script.py"), "--n-workers", "0"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "n_workers=0 is not accepted: expected a whole number >= 1" in out.stderr


def test_flags_are_derived_from_the_specs():
    from gpu_dask_kit.options import OPTION_SPECS

    parser = add_cluster_args(argparse.ArgumentParser())
    actions = {a.dest: a for a in parser._actions if a.dest in OPTION_SPECS}
    assert list(actions) == list(OPTION_SPECS)
    for name, spec in OPTION_SPECS.items():
        action = actions[name]
        assert tuple(action.option_strings[: len(spec.flags)]) == spec.flags and spec.flags[0] == "--" + name.replace("_", "-")
        assert action.default is None  # unset: the dask config decides
        assert spec.doc.replace("%", "%%") in action.help and spec.accepted.replace("%", "%%") in action.help
        if spec.form == "flag":
            assert isinstance(action, argparse.BooleanOptionalAction), name
        elif spec.form == "list":
            assert isinstance(action, argparse._AppendAction), name
        else:
            assert isinstance(action, argparse._StoreAction), name
    assert not hasattr(__import__("gpu_dask_kit.scripts").scripts, "_BOOLEAN")


def test_slurm_flags_become_options():
    args = parse(
        "--deploy",
        "slurm",
        "--partition",
        "gpu",
        "--walltime",
        "02:00:00",
        "--job-cores",
        "8",
        "--job-memory",
        "32GiB",
        "--gpus-per-job",
        "1",
        "--job-extra-directives=--qos=debug",
        "--job-extra-directives=--exclusive",
        "--interface",
        "ib0",
        "--start-timeout",
        "600",
    )
    values = options_from_args(args)
    assert values == {
        "deploy": "slurm",
        "partition": "gpu",
        "walltime": "02:00:00",
        "job_cores": 8,
        "job_memory": "32GiB",
        "gpus_per_job": 1,
        "job_extra_directives": ["--qos=debug", "--exclusive"],
        "interface": "ib0",
        "start_timeout": "600",
    }
    from gpu_dask_kit import ClusterOptions

    opts = ClusterOptions.from_config(**values)
    assert opts.job_extra_directives == ("--qos=debug", "--exclusive") and opts.job_memory == 32 * 2**30
    with pytest.raises(OptionError, match='Pass deploy="slurm"'):
        ClusterOptions.from_config(**options_from_args(parse("--partition", "gpu")))


def test_rmm_async_switch_has_three_states():
    assert "rmm_async" not in options_from_args(parse())  # auto, or whatever the config says
    assert options_from_args(parse("--rmm-async"))["rmm_async"] is True
    assert options_from_args(parse("--no-rmm-async"))["rmm_async"] is False


def test_async_example_script(runtime_dir, tmp_path):
    from .test_script_guard import ROOT, run_script

    argv = [str(ROOT / "examples" / "async_script.py"), "--device", "cpu", "--n-workers", "2", "--memory-limit", "1GiB"]
    run = run_script(argv, runtime_dir, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "mode=cpu workers=2 sum of squares=285 array sum=499500" in run.stdout
    assert list(runtime_dir.glob("session-*.json")) == []
