import os
import subprocess
import sys
import textwrap

import dask.config
import pytest

from gpu_dask_kit import ClusterOptions, OptionError
from gpu_dask_kit.options import OPTION_DOCS, config_key, option_names


def test_every_option_is_documented_once_and_is_a_field():
    fields = [f for f in ClusterOptions.__dataclass_fields__ if not f.startswith("_")]
    assert list(OPTION_DOCS) == fields
    for name, doc in OPTION_DOCS.items():
        assert doc["help"].strip() and doc["accepted"].strip(), name


def test_packaged_yaml_has_a_default_for_every_option():
    ClusterOptions.from_config()  # loads the YAML
    for name in option_names():
        assert dask.config.get(config_key(name), default="MISSING") != "MISSING", name


def test_defaults_are_safe_for_a_shared_machine():
    opts = ClusterOptions.from_config()
    assert opts.host == "127.0.0.1"
    assert opts.dashboard_address == "127.0.0.1:0"
    assert opts.protocol == "tcp" and opts.device == "auto"


def test_explicit_arguments_win_over_config():
    with dask.config.set({"gpu-dask-kit.n-workers": 3, "gpu-dask-kit.memory-limit": "1GiB"}):
        opts = ClusterOptions.from_config(n_workers=2)
    assert opts.n_workers == 2 and opts.memory_limit == 2**30
    assert opts.explicit == {"n_workers"}


def test_environment_variables_override_defaults(tmp_path):
    # A fresh interpreter, as an instructor's environment would be.
    code = "from gpu_dask_kit import ClusterOptions; o = ClusterOptions.from_config(); print(o.n_workers, o.rmm_pool_size, o.device)"
    env = dict(os.environ, DASK_GPU_DASK_KIT__N_WORKERS="3", DASK_GPU_DASK_KIT__RMM_POOL_SIZE="0.5", DASK_GPU_DASK_KIT__DEVICE="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["3", "0.5", "cpu"]


def test_instructor_yaml_file_overrides_defaults(tmp_path):
    (tmp_path / "workshop.yaml").write_text(textwrap.dedent("""
        gpu-dask-kit:
          n-workers: 1
          memory-limit: 3GiB
          cuda-visible-devices: "0,1"
    """))
    code = "from gpu_dask_kit import ClusterOptions; o = ClusterOptions.from_config(); print(o.n_workers, o.memory_limit, o.CUDA_VISIBLE_DEVICES)"
    env = dict(os.environ, DASK_CONFIG=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", str(3 * 2**30), "0,1"]


@pytest.mark.parametrize("kwargs, parameter, fragment", [
    ({"n_workers": 0}, "n_workers", "whole number >= 1"),
    ({"n_workers": -1}, "n_workers", "whole number >= 1"),
    ({"n_workers": 2.5}, "n_workers", "whole number >= 1"),
    ({"threads_per_worker": 0}, "threads_per_worker", "whole number >= 1"),
    ({"memory_limit": "12 parsecs"}, "memory_limit", "Check the unit"),
    ({"device_memory_limit": "lots"}, "device_memory_limit", "fraction"),
    ({"rmm_pool_size": "1GB", "rmm_async": True}, "rmm_async", "pick one"),
    ({"rmm_maximum_pool_size": "2GB"}, "rmm_maximum_pool_size", "set rmm_pool_size too"),
    ({"rmm_pool_size": "4GB", "rmm_maximum_pool_size": "2GB"}, "rmm_maximum_pool_size", "at least rmm_pool_size"),
    ({"device": "tpu"}, "device", "'auto' or 'gpu' or 'cpu'"),
    ({"protocol": "carrier-pigeon"}, "protocol", "'tcp' or 'ucx'"),
    ({"scheduler_address": "tcp://127.0.0.1:8786", "scheduler_file": __file__}, "scheduler_address", "not both"),
    ({"scheduler_address": "nonsense"}, "scheduler_address", "tcp://host:port"),
    ({"scheduler_file": "/no/such/file.json"}, "scheduler_file", "was not found"),
    ({"CUDA_VISIBLE_DEVICES": "zero"}, "CUDA_VISIBLE_DEVICES", "GPU indices"),
    ({"CUDA_VISIBLE_DEVICES": "0,0"}, "CUDA_VISIBLE_DEVICES", "list each GPU once"),
    ({"dashboard_address": "localhost"}, "dashboard_address", ":0"),
    ({"rmm_async": "maybe"}, "rmm_async", "True or False"),
    ({"connect_timeout": 0}, "connect_timeout", "seconds > 0"),
    ({"host": "0.0.0.0 ; rm -rf"}, "host", "IP address"),
    ({"local_directory": __file__}, "local_directory", "folder you can write to"),
    ({"n_worker": 2}, "n_worker", "did you mean 'n_workers'?"),
])
def test_bad_input_names_parameter_value_accepted_and_action(kwargs, parameter, fragment):
    with pytest.raises(OptionError) as info:
        ClusterOptions.from_config(**kwargs)
    message = str(info.value)
    assert info.value.parameter == parameter
    assert message.startswith(f"{parameter}=")
    assert "expected" in message
    assert fragment.lower() in message.lower()


def test_equivalent_spellings_compare_equal():
    a = ClusterOptions.from_config(memory_limit="1GiB", device_memory_limit="80%", CUDA_VISIBLE_DEVICES="0, 1")
    b = ClusterOptions.from_config(memory_limit=2**30, device_memory_limit=0.8, CUDA_VISIBLE_DEVICES=[0, 1])
    assert a == b and hash(a) == hash(b)


def test_options_are_frozen_and_replace_rechecks():
    opts = ClusterOptions.from_config(n_workers=1)
    with pytest.raises(Exception):
        opts.n_workers = 5
    assert opts.replace(n_workers=3).n_workers == 3
    with pytest.raises(OptionError):
        opts.replace(n_workers=0)


def test_changed_from_and_to_dict():
    a = ClusterOptions.from_config(n_workers=1)
    b = a.replace(n_workers=2, memory_limit="1GiB")
    assert b.changed_from(a) == {"n_workers": (1, 2), "memory_limit": ("auto", 2**30)}
    assert set(a.to_dict()) == set(option_names())


def test_off_values_turn_limits_off():
    opts = ClusterOptions.from_config(device_memory_limit="off", memory_limit=None, dashboard_address=None)
    assert opts.device_memory_limit is None and opts.memory_limit is None and opts.dashboard_address is None
