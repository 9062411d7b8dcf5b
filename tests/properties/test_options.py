"""Properties of the options (gpu_dask_kit.options): ``ClusterOptions`` accepts a value or raises ``OptionError``
naming the parameter and the value, for any value, any combination of keywords, any SLURM option and any JSON body."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpu_dask_kit import OptionError
from gpu_dask_kit.options import OPTION_SPECS, ClusterOptions, option_name, option_names, options_from_mapping

from .strategies import FIXTURES_OK, JSON, VALUES, examples, ran

N_SINGLE = examples(1000)


@settings(max_examples=N_SINGLE, deadline=None, suppress_health_check=FIXTURES_OK)
@given(name=st.sampled_from(option_names()), value=VALUES)
# Regressions: each of these once escaped as a bare ValueError/OverflowError or hid the value given.
@example(name="n_workers", value="²")
@example(name="threads_per_worker", value="9" * 5000)
@example(name="connect_timeout", value=10**400)
@example(name="memory_limit", value="1e400 GB")
@example(name="rmm_pool_size", value="1.797693134862316e+305kB")
@example(name="dashboard_address", value="h:²")
@example(name="dashboard_address", value=":" + "9" * 5000)
@example(name="dashboard_address", value=99999)
@example(name="CUDA_VISIBLE_DEVICES", value=["a"])
@example(name="host", value="\x00")
@example(name="local_directory", value="\x00")
@example(name="walltime", value=3600)
@example(name="walltime", value="9" * 5000)
@example(name="job_memory", value="0.5")
@example(name="job_extra_directives", value=["--a", 1])
@example(name="gateway_cluster_options", value="0.0")  # JSON text of a number: the error named the parsed 0.0
def test_any_value_of_one_option_is_accepted_or_named_in_an_option_error(name, value):
    ran("options_single_field", N_SINGLE)
    try:
        opts = ClusterOptions.from_config(**{name: value})
    except OptionError as err:
        message = str(err)
        assert err.parameter == name
        assert message.startswith(f"{name}=") and " is not accepted: expected " in message
        if not (name == "rmm_maximum_pool_size" and "rmm_pool_size" in err.accepted):
            # every single-field error shows the value as given (combination errors show the parsed size); a
            # count typed as digits ("0" from a form or a flag) is shown as the number: n_workers=0
            as_number = isinstance(value, str) and value.strip().isascii() and value.strip().isdigit()
            assert repr(value) in message or (as_number and message.startswith(f"{name}={int(value.strip())} ")), message
        return
    # Accepted: the normalised value is a fixed point, and the options survive the JSON round trip that
    # REST bodies and registry files take.
    assert ClusterOptions.from_config(**{name: getattr(opts, name)}) == opts
    assert options_from_mapping(json.loads(json.dumps(opts.to_dict()))) == opts


N_COMBO = examples(500)


@settings(max_examples=N_COMBO, deadline=None, suppress_health_check=FIXTURES_OK)
@given(kwargs=st.dictionaries(st.one_of(st.sampled_from(option_names()), st.text(min_size=1, max_size=12)), VALUES, max_size=6))
def test_any_combination_of_keywords_is_accepted_or_an_option_error(kwargs):
    ran("options_combinations", N_COMBO)
    try:
        ClusterOptions.from_config(**kwargs)
    except OptionError as err:
        named = set(kwargs) | {option_name(k) for k in kwargs}  # a dashed key is reported by its option name
        assert err.parameter in named, (err.parameter, kwargs)
        assert str(err).startswith(f"{err.parameter}=")
        if err.parameter not in option_names():
            assert "one of the option names" in err.accepted
    known = {k: v for k, v in kwargs.items() if k in option_names()}
    try:
        ClusterOptions(**known)  # the dataclass itself, without dask.config
    except OptionError as err:
        assert err.parameter in known


N_SLURM = examples(400)
SLURM_OPTIONS = sorted(name for name, spec in OPTION_SPECS.items() if spec.slurm_only)


@settings(max_examples=N_SLURM, deadline=None, suppress_health_check=FIXTURES_OK)
@given(name=st.sampled_from(SLURM_OPTIONS), value=VALUES, dashed=st.booleans())
@example(name="walltime", value="1-00:00", dashed=True)
@example(name="job_extra_directives", value="--qos=debug", dashed=False)
def test_any_value_of_a_slurm_option_with_deploy_slurm_is_accepted_or_named(name, value, dashed):
    """SLURM options with deploy="slurm": as keyword or dashed key, accepted (then a fixed point that
    survives JSON), or an OptionError naming the option and showing the value."""
    ran("options_slurm_field", N_SLURM)
    key = name.replace("_", "-") if dashed else name
    try:
        opts = ClusterOptions.from_config(deploy="slurm", **{key: value})
    except OptionError as err:
        assert err.parameter == name and str(err).startswith(f"{name}=") and " is not accepted: expected " in str(err)
        assert repr(value) in str(err) or (name in ("job_cores", "gpus_per_job") and isinstance(value, str)), str(err)
        return
    assert ClusterOptions.from_config(deploy="slurm", **{name: getattr(opts, name)}) == opts
    assert options_from_mapping(json.loads(json.dumps(opts.to_dict()))) == opts
    if getattr(opts, name) != OPTION_SPECS[name].default:  # the default itself is nothing given
        with pytest.raises(OptionError, match='Pass deploy="slurm"'):
            ClusterOptions.from_config(deploy="local", **{key: value})


N_MAPPING = examples(200)


@settings(max_examples=N_MAPPING, deadline=None, suppress_health_check=FIXTURES_OK)
@given(body=st.one_of(JSON, st.dictionaries(st.sampled_from(option_names()), JSON, max_size=5)))
def test_any_json_body_is_options_or_an_option_error(body):
    ran("options_from_json", N_MAPPING)
    try:
        opts = options_from_mapping(body)
    except OptionError as err:
        assert str(err).startswith(f"{err.parameter}=")
    else:
        assert isinstance(opts, ClusterOptions)
