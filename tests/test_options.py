import os
import subprocess
import sys
import textwrap

import dask.config
import pytest

from gpu_dask_kit import ClusterOptions, OptionError
from gpu_dask_kit.options import OPTION_DOCS, OPTION_SPECS, config_key, option_names


def test_every_option_is_declared_once_and_is_a_field_with_the_specs_default():
    fields = [f for f in ClusterOptions.__dataclass_fields__.values() if not f.name.startswith("_")]
    assert [f.name for f in fields] == list(OPTION_SPECS) == list(OPTION_DOCS) == list(option_names())
    for f in fields:
        spec = OPTION_SPECS[f.name]
        assert f.default == spec.default, f.name
        assert spec.doc.strip() and spec.accepted.strip(), f.name
        assert spec.normalise(spec.default) == spec.default, f"{f.name}: the default is not in normal form"
        assert spec.form in {"choice", "flag", "count", "list", "text"}, f.name
        assert (spec.form == "choice") == bool(spec.choices), f.name
    assert ClusterOptions() == ClusterOptions(**{n: s.default for n, s in OPTION_SPECS.items()})


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
    (tmp_path / "workshop.yaml").write_text(
        textwrap.dedent("""
        gpu-dask-kit:
          n-workers: 1
          memory-limit: 3GiB
          cuda-visible-devices: "0,1"
    """)
    )
    code = "from gpu_dask_kit import ClusterOptions; o = ClusterOptions.from_config(); print(o.n_workers, o.memory_limit, o.CUDA_VISIBLE_DEVICES)"
    env = dict(os.environ, DASK_CONFIG=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", str(3 * 2**30), "0,1"]


@pytest.mark.parametrize(
    "kwargs, parameter, fragment",
    [
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
    ],
)
def test_bad_input_names_parameter_value_accepted_and_action(kwargs, parameter, fragment):
    with pytest.raises(OptionError) as info:
        ClusterOptions.from_config(**kwargs)
    message = str(info.value)
    assert info.value.parameter == parameter
    assert message.startswith(f"{parameter}=")
    assert "expected" in message
    assert fragment.lower() in message.lower()


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"n_worker": 2}, "did you mean 'n_workers'?"), ({"rmm_release_threshold": 0.6}, "sets dask-cuda's rmm_release_threshold itself")],
)
def test_a_name_that_is_no_option_gets_the_kits_error_from_the_constructor_too(kwargs, fragment):
    """Learner review 9 (01-1): `ClusterOptions(rmm_release_threshold=0.6)` raised the dataclass's bare TypeError
    ("unexpected keyword argument"); from_config and start_cluster already named the options."""
    with pytest.raises(OptionError) as info:
        ClusterOptions(**kwargs)
    assert info.value.parameter == next(iter(kwargs)) and fragment.lower() in str(info.value).lower(), str(info.value)


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


# -- derived from the specs ----------------------------------------------------------------------------------
def test_packaged_yaml_is_generated_from_the_specs():
    import yaml

    from gpu_dask_kit.config import DEFAULTS_FILE, NON_OPTION_KEYS
    from gpu_dask_kit.options import yaml_text

    text = open(DEFAULTS_FILE).read()
    assert text == yaml_text(), "regenerate with `python -m gpu_dask_kit.options --write`"
    section = yaml.safe_load(text)["gpu-dask-kit"]
    assert list(section) == [s.config_key.split(".", 1)[1] for s in OPTION_SPECS.values()] + list(NON_OPTION_KEYS)
    for spec in OPTION_SPECS.values():
        value = section[spec.config_key.split(".", 1)[1]]
        assert (tuple(value) if isinstance(value, list) else value) == spec.default, spec.name
        assert spec.normalise(value) == spec.default, spec.name  # as dask.config hands it over
    assert section["walltime"] == "01:00:00"  # quoted: YAML reads a bare 01:00:00 as the number 3600


def test_refresh_command_prints_the_readme_table_and_the_yaml():
    from gpu_dask_kit.options import options_markdown_table, yaml_text

    run = [sys.executable, "-m", "gpu_dask_kit.options"]
    out = subprocess.run([*run, "--readme-table"], capture_output=True, text=True, check=True)
    assert out.stdout == options_markdown_table() and not out.stderr
    assert subprocess.run([*run, "--yaml"], capture_output=True, text=True, check=True).stdout == yaml_text()
    assert subprocess.run(run, capture_output=True, text=True).returncode == 2  # says what to print


def test_write_rewrites_only_the_table_between_the_markers(tmp_path, monkeypatch):
    from gpu_dask_kit.options import docs, options_markdown_table

    monkeypatch.setattr(docs, "DEFAULTS_FILE", str(tmp_path / "defaults.yaml"))
    (tmp_path / "defaults.yaml").write_text("old: yaml\n")
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n<!-- options-table: x -->\n| stale |\n<!-- end options-table -->\nafter\n")
    assert docs.write(str(readme)) == [str(readme), str(tmp_path / "defaults.yaml")]
    assert readme.read_text() == "# Title\n<!-- options-table: x -->\n" + options_markdown_table() + "<!-- end options-table -->\nafter\n"
    assert docs.write(str(readme)) == []  # up to date: nothing rewritten
    (tmp_path / "other.md").write_text("no markers\n")
    with pytest.raises(SystemExit, match="no '<!-- options-table"):
        docs.write(str(tmp_path / "other.md"))


@pytest.mark.parametrize("key", ["n-workers", "n_workers"])
def test_dashed_and_underscored_keywords_both_work(key):
    opts = ClusterOptions.from_config(**{key: 2, "memory-limit": "1GiB", "cuda-visible-devices": "0"})
    assert (opts.n_workers, opts.memory_limit, opts.CUDA_VISIBLE_DEVICES) == (2, 2**30, "0")
    assert opts.explicit == {"n_workers", "memory_limit", "CUDA_VISIBLE_DEVICES"}
    assert ClusterOptions.from_dict({key: "2"}).n_workers == 2


def test_two_spellings_of_one_option_are_an_error():
    with pytest.raises(OptionError, match=r"n_workers=3 is not accepted: expected each option once\. 'n_workers' and another spelling"):
        ClusterOptions.from_config(**{"n-workers": 2, "n_workers": 3})


@pytest.mark.parametrize("key", ["gpu-dask-kit.n_workers", "gpu-dask-kit.n-workers"])
def test_dashed_and_underscored_config_keys_both_work(key):
    with dask.config.set({key: 3, "gpu-dask-kit.memory_limit": "1GiB"}):
        opts = ClusterOptions.from_config()
    assert (opts.n_workers, opts.memory_limit) == (3, 2**30) and opts.explicit == frozenset()


def test_instructor_yaml_with_underscores_and_capitals(tmp_path):
    (tmp_path / "workshop.yaml").write_text(
        textwrap.dedent("""
        gpu-dask-kit:
          n_workers: 1
          threads-per-worker: 2
          CUDA_VISIBLE_DEVICES: "1"
          job_extra_directives: ["--qos=debug"]
    """)
    )
    code = (
        "from gpu_dask_kit import ClusterOptions; o = ClusterOptions.from_config(); "
        "print(o.n_workers, o.threads_per_worker, o.CUDA_VISIBLE_DEVICES, *o.job_extra_directives)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, DASK_CONFIG=str(tmp_path)), capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "2", "1", "--qos=debug"]


def test_dask_labextension_yaml_kwargs_with_dashes_start_a_kit_cluster(no_leaks, runtime_dir):
    """What dask-labextension's "+ NEW" does: read labextension.factory from the shipped YAML (with the
    dashed kwargs its comment shows), import the factory and call it with those kwargs."""
    import importlib

    import yaml

    import gpu_dask_kit.server

    path = os.path.join(os.path.dirname(gpu_dask_kit.server.__file__), "dask-labextension.yaml")
    factory = yaml.safe_load(open(path))["labextension"]["factory"]
    assert "{n-workers: 2" in open(path).read()  # the spelling the comment tells users to write
    kwargs = {"n-workers": 1, "threads-per-worker": 1, "memory-limit": "1GiB", "device": "cpu"}
    with dask.config.set({"labextension.factory": dict(factory, kwargs=kwargs)}):
        spec = dask.config.get("labextension.factory")
        make = getattr(importlib.import_module(spec["module"]), spec["class"])
        cluster = make(*spec["args"], **spec["kwargs"])
    try:
        assert len(cluster.scheduler_info["workers"]) == 1
        assert len(list(runtime_dir.glob("session-*.json"))) == 1
    finally:
        cluster.close()


# -- new options (SLURM, start_timeout, rmm_async auto) --------------------------------------------------------
@pytest.mark.parametrize("text", ["30", "0:30", "90:00", "01:00:00", "100:00:00", "2-0", "2-12", "1-12:30", "1-00:00:01", " 7-23:59:59 "])
def test_walltime_accepts_slurms_time_forms(text):
    assert ClusterOptions.from_config(deploy="slurm", walltime=text).walltime == text.strip()


@pytest.mark.parametrize(
    "value, hint",
    [
        ("1h", "SLURM's forms"),
        ("01:00:00:00", "SLURM's forms"),
        ("1:2:3:4", "SLURM's forms"),
        ("-1", "SLURM's forms"),
        ("1-", "SLURM's forms"),
        ("UNLIMITED", "SLURM's forms"),
        ("", "SLURM's forms"),
        (3600, "in YAML, quote it"),
        (1.5, "SLURM's forms"),
        ("01:60:00", "minutes and seconds to 59"),
        ("10:75", "minutes and seconds to 59"),
        ("1-24:00", "hours go to 23"),
        ("0", "above zero"),
        ("00:00:00", "above zero"),
        ("٣٠", "SLURM's forms"),
    ],
)
def test_walltime_refuses_other_forms_clearly(value, hint):
    with pytest.raises(OptionError) as info:
        ClusterOptions.from_config(deploy="slurm", walltime=value)
    message = str(info.value)
    assert info.value.parameter == "walltime" and message.startswith(f"walltime={value!r} is not accepted: expected a SLURM time")
    assert '"MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"' in message and hint in message


@pytest.mark.parametrize(
    "name, good, bad",
    [
        ("partition", ["gpu", "debug_2", "a100-80gb", "p.long"], ["gpu partition", "-x", "gpu;rm", "ä", "x" * 65, 5]),
        ("account", ["proj123", "ML-lab"], ["proj 1", "$(id)", "a/b", ["a"]]),
        ("interface", ["ib0", "eth0", "enp1s0f0", "bond0.100"], ["ib 0", "x" * 16, "/dev/ib0", 0]),
    ],
)
def test_slurm_names_are_simple_identifiers(name, good, bad):
    for value in good:
        assert getattr(ClusterOptions.from_config(deploy="slurm", **{name: value}), name) == value
    for value in bad:
        with pytest.raises(OptionError) as info:
            ClusterOptions.from_config(deploy="slurm", **{name: value})
        assert info.value.parameter == name and str(info.value).startswith(f"{name}={value!r} is not accepted")
    assert getattr(ClusterOptions.from_config(deploy="slurm", **{name: None}), name) is None


def test_job_sizes_and_counts():
    opts = ClusterOptions.from_config(deploy="slurm", job_cores="8", job_memory="16GiB", gpus_per_job=2)
    assert (opts.job_cores, opts.job_memory, opts.gpus_per_job) == (8, 16 * 2**30, 2)
    for kwargs, fragment in [
        ({"job_memory": "0.5"}, 'with a unit, e.g. "16GiB"'),
        ({"job_memory": 1000}, "at least"),
        ({"job_memory": "lots"}, "Check the unit"),
        ({"job_cores": 0}, "job_cores=1 or more"),
        ({"gpus_per_job": -1}, "gpus_per_job=1 or more"),
    ]:
        with pytest.raises(OptionError, match=fragment) as info:
            ClusterOptions.from_config(deploy="slurm", **kwargs)
        assert info.value.parameter == next(iter(kwargs))


def test_job_extra_directives_a_list_or_one_string():
    opts = ClusterOptions.from_config(deploy="slurm", job_extra_directives=["--qos=debug", " --exclusive "])
    assert opts.job_extra_directives == ("--qos=debug", "--exclusive")
    assert opts.to_dict()["job_extra_directives"] == ["--qos=debug", "--exclusive"]  # JSON: a list
    assert ClusterOptions.from_config(deploy="slurm", job_extra_directives="--qos=debug").job_extra_directives == ("--qos=debug",)
    assert ClusterOptions.from_config(deploy="slurm", job_extra_directives=[]).job_extra_directives == ()
    for value, fragment in [
        ("--qos=a\n--x", "without line breaks"),
        (["--a", "--b\r"], "without line breaks"),
        (["#SBATCH --qos=debug"], "Leave out '#SBATCH'"),
        (["qos=debug"], "sbatch option"),
        ([1], "a list of sbatch options"),
        ({"a": 1}, "a list of sbatch options"),
    ]:
        with pytest.raises(OptionError, match=fragment) as info:
            ClusterOptions.from_config(deploy="slurm", job_extra_directives=value)
        assert info.value.parameter == "job_extra_directives"


@pytest.mark.parametrize(
    "name, value",
    [
        ("partition", "gpu"),
        ("account", "proj"),
        ("walltime", "30"),
        ("job_cores", 4),
        ("job_memory", "4GiB"),
        ("gpus_per_job", 1),
        ("job_extra_directives", ["--qos=x"]),
        ("interface", "ib0"),
    ],
)
def test_slurm_options_without_deploy_slurm_say_to_pass_it(name, value):
    assert all(
        OPTION_SPECS[n].slurm_only for n in ("partition", "account", "walltime", "job_cores", "job_memory", "gpus_per_job", "job_extra_directives", "interface")
    )
    for deploy in ({}, {"deploy": "local"}):
        with pytest.raises(OptionError) as info:
            ClusterOptions.from_config(**deploy, **{name: value})
        message = str(info.value)
        assert info.value.parameter == name and message.startswith(f"{name}=")
        assert "is a batch-job option" in message and 'Pass deploy="slurm"' in message
    assert ClusterOptions.from_config(deploy="slurm", **{name: value}).deploy == "slurm"


def test_slurm_options_from_the_config_are_ignored_on_a_local_deploy():
    with dask.config.set({"gpu-dask-kit.partition": "gpu", "gpu-dask-kit.walltime": "30"}):
        opts = ClusterOptions.from_config(device="cpu")
        assert (opts.deploy, opts.partition, opts.walltime) == ("local", "gpu", "30")
        assert ClusterOptions.from_dict(opts.to_dict()) == opts  # a record's options read back, as configured
        assert ClusterOptions.from_config(partition="gpu").partition == "gpu"  # the configured value: nothing new


def test_deploy_and_a_running_scheduler_exclude_each_other():
    with pytest.raises(OptionError, match='either deploy="slurm"') as info:
        ClusterOptions.from_config(deploy="slurm", scheduler_address="tcp://10.0.0.5:8786")
    assert info.value.parameter == "scheduler_address"
    with pytest.raises(OptionError, match='either deploy="gateway"') as info:
        ClusterOptions.from_config(deploy="gateway", scheduler_address="tls://10.0.0.5:8786")
    assert info.value.parameter == "scheduler_address"
    with pytest.raises(OptionError) as info:
        ClusterOptions.from_config(deploy="kubernetes")
    assert str(info.value).startswith("deploy='kubernetes' is not accepted: expected 'local' or 'slurm'")


def test_start_timeout_is_seconds_for_any_deploy():
    assert ClusterOptions.from_config().start_timeout == 120.0
    assert ClusterOptions.from_config(start_timeout="300").start_timeout == 300.0
    with pytest.raises(OptionError, match="seconds > 0"):
        ClusterOptions.from_config(start_timeout=0)


def test_rmm_async_defaults_to_auto():
    assert ClusterOptions.from_config().rmm_async is None
    assert "needs no sizing and gives freed memory back to the GPU" in OPTION_SPECS["rmm_async"].doc  # why auto picks it
    assert ClusterOptions.from_config(rmm_pool_size="0.5").rmm_async is None  # auto + a pool: the pool, no error
    assert ClusterOptions.from_config(rmm_async="auto").rmm_async is None
    assert ClusterOptions.from_config(rmm_async=False, rmm_pool_size="0.5").rmm_async is False
    assert ClusterOptions.from_config(rmm_async=True, rmm_managed_memory=False).rmm_async is True
    with pytest.raises(OptionError, match="Pick one"):
        ClusterOptions.from_config(rmm_async=True, rmm_pool_size="0.5")
    assert ClusterOptions.from_config(device="cpu", rmm_async=True).rmm_async is True  # means nothing on CPU; no error


# -- start_cluster's signature --------------------------------------------------------------------------------
def test_with_option_signature_gives_a_real_signature_and_doc():
    import inspect
    import pydoc

    from gpu_dask_kit.options import with_option_signature

    def start(*, verbose: bool = True, **options):
        """Start something.

        More text.
        """
        return verbose, options

    decorated = with_option_signature(start)
    assert decorated is start and start(verbose=False, n_workers=2) == (False, {"n_workers": 2})  # same function
    params = inspect.signature(start).parameters
    assert list(params) == ["verbose", *OPTION_SPECS]  # **options is gone: unknown names are refused anyway
    for name, spec in OPTION_SPECS.items():
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY and params[name].default == spec.default, name
    assert str(params["n_workers"]) == "n_workers: int | None = None"
    assert str(params["walltime"]) == "walltime: str = '01:00:00'"
    assert start.__doc__.startswith("Start something.\n\nMore text.\n\nCluster options\n---------------\n")
    text = pydoc.render_doc(start, renderer=pydoc.plaintext)  # what help(start) prints
    signature_line = text.splitlines()[2]
    assert signature_line.startswith("start(*, verbose: bool = True, device: str = 'auto', n_workers: int | None = None")
    for spec in OPTION_SPECS.values():
        assert f"{spec.name}: " in signature_line and spec.doc in text and spec.accepted in text
    from IPython.core.oinspect import Inspector  # what Shift+Tab in a notebook shows

    try:
        inspector = Inspector(theme_name="nocolor")
    except TypeError:  # IPython < 9
        inspector = Inspector()
    info = inspector.info(start, "start")
    assert "n_workers: int | None = None" in info["definition"] and "Cluster options" in info["docstring"]


def test_with_option_signature_needs_a_var_keyword_function():
    from gpu_dask_kit.options import with_option_signature

    def no_options(a, b=1):
        return a

    with pytest.raises(TypeError, match=r"must end with \*\*options"):
        with_option_signature(no_options)

    def keeps_its_own(device="gpu", **options):
        return device

    params = inspect_parameters(with_option_signature(keeps_its_own))
    assert params["device"].default == "gpu" and list(params).count("device") == 1


def inspect_parameters(func):
    import inspect

    return inspect.signature(func).parameters
