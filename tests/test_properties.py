"""Property-based tests of bad input (issue 6): options, start_cluster, the CLI and the REST routes.

Each property says what the kit promises for ANY input of a kind, not for a list of examples:

- ``ClusterOptions`` accepts a value or raises ``OptionError`` naming the parameter and the value;
- ``start_cluster`` with an impossible request raises one of the kit's errors and leaves no process
  and no registry file behind;
- the CLI exits 0, 1 or 2 with a one-line error, never with a traceback;
- the server extension answers 2xx/4xx (never 500, never a traceback) to any id, query or body.

Every property counts the examples it ran into ``test-artifacts/properties.json`` (for the report).
Example counts are bounded and ``deadline=None`` (this 2-core machine is shared; no timed assertions). Each
count below is the full profile's (``GPU_DASK_KIT_PROPERTIES=full``, ``make test-properties``); ``make test``
runs the quick profile, a tenth of each (see :func:`examples`). The ``@example`` regressions run in both.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import __version__ as hypothesis_version
from hypothesis import strategies as st
from jupyter_server.utils import url_path_join

import gpu_dask_kit as kit
from gpu_dask_kit import ClusterStartError, ConnectError, KitError, OptionError
from gpu_dask_kit.cli import build_parser, main
from gpu_dask_kit.options import OPTION_SPECS, ClusterOptions, option_name, option_names, options_from_mapping
from gpu_dask_kit.scripts import add_cluster_args, options_from_args
from gpu_dask_kit.server.handlers import make_handlers

from .conftest import kit_children, wait_for_no_new_children

pytest_plugins = ["pytest_jupyter.jupyter_server"]

ARTIFACT = Path(__file__).resolve().parents[1] / "test-artifacts" / "properties.json"
FIXTURES_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


def examples(full: int) -> int:
    """The example count for the loaded hypothesis profile: ``full`` scaled by its max_examples / 100 (at least 2)."""
    return max(2, full * settings.default.max_examples // 100)


# --- example accounting ------------------------------------------------------------------------------

_COUNTS: dict[str, dict] = {}


def _ran(test: str, max_examples: int, **extra: int) -> None:
    entry = _COUNTS.setdefault(test, {"examples_run": 0, "max_examples": max_examples})
    entry["examples_run"] += 1
    for key, value in extra.items():
        entry[key] = entry.get(key, 0) + value


@pytest.fixture(scope="module", autouse=True)
def _write_counts():
    yield
    data = {"tests": {}}
    if ARTIFACT.exists():
        try:
            data = json.loads(ARTIFACT.read_text())
        except ValueError:
            pass
    data.setdefault("tests", {}).update({name: dict(entry, recorded=time.strftime("%Y-%m-%dT%H:%M:%S")) for name, entry in _COUNTS.items()})
    data["hypothesis"] = hypothesis_version
    data["profile_max_examples"] = settings.default.max_examples
    data["total_examples_run"] = sum(e["examples_run"] for e in data["tests"].values())
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    ARTIFACT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


# --- strategies --------------------------------------------------------------------------------------

NASTY = [
    "12 parsecs",
    "²",
    "٣",
    "-1",
    "0",
    "1",
    "3",
    " 2 ",
    "2.5",
    "1e400",
    "1e400 GB",
    "nan",
    "inf",
    "-inf",
    "NaN GB",
    "80%",
    "150%",
    "-5%",
    "0%",
    "4GiB",
    "1 GiB",
    "0.5",
    "1.5",
    "off",
    "auto",
    "none",
    "",
    " ",
    "\x00",
    "\n",
    "../..",
    "/etc/passwd",
    "/proc/self",
    "0.0.0.0",
    "127.0.0.1",
    "localhost",
    "::1",
    ":0",
    ":8787",
    "h:²",
    "127.0.0.1:99999",
    "tcp://",
    "tcp://127.0.0.1:8786",
    "tls://x:1",
    "ucx://h:1",
    "carrier-pigeon://h:1",
    "GPU-abc",
    "MIG-1",
    "0,0",
    "0,1",
    "0, 1",
    "true",
    "yes",
    "maybe",
    "gpu",
    "cpu",
    "tpu",
    "ucx",
    "tcp",
    " GPU ",
    "9" * 5000,
    "1" * 30 + "GB",
    "$(touch /tmp/gdk-pwned)",
    "; rm -rf /",
    "__import__('os').system('true')",
    # SLURM options: time limits, names, directives, interfaces
    "30",
    "0:30",
    "01:00:00",
    "1-12",
    "1-12:30",
    "7-23:59:59",
    "01:60:00",
    "1-24",
    "00:00:00",
    "UNLIMITED",
    "1:2:3:4",
    "slurm",
    "local",
    "debug",
    "gpu_a100",
    "ib0",
    "eth0",
    "--qos=debug",
    "#SBATCH --qos=x",
    "--a\n--b",
    "16GiB",
]

SIZE_STRINGS = st.builds(
    lambda sign, number, space, unit: f"{sign}{number}{space}{unit}",
    st.sampled_from(["", "-", "+"]),
    st.one_of(st.integers(0, 10**25).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr)),
    st.sampled_from(["", " ", "  "]),
    st.sampled_from(["", "B", "kB", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "PB", "%", "parsecs", "gib", "G"]),
)

ADDRESSES = st.builds(
    lambda scheme, host, port: f"{scheme}{host}:{port}",
    st.sampled_from(["", "tcp://", "tls://", "ucx://", "inproc://", "http://", "://"]),
    st.sampled_from(["127.0.0.1", "localhost", "", "[::1]", "h", "0.0.0.0"]),
    st.one_of(st.integers(-5, 70000).map(str), st.text(max_size=6)),
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**80), 2**80),
    st.just(10**400),
    st.floats(),
    st.floats(min_value=0, max_value=2, allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(NASTY),
    SIZE_STRINGS,
    ADDRESSES,
)

WALLTIMES = st.builds(
    lambda d, h, m, sec, form: form.format(d=d, h=h, m=m, s=sec),
    st.integers(0, 10),
    st.integers(0, 30),
    st.integers(0, 70),
    st.integers(0, 70),
    st.sampled_from(["{m}", "{m}:{s:02d}", "{h:02d}:{m:02d}:{s:02d}", "{d}-{h}", "{d}-{h:02d}:{m:02d}", "{d}-{h}:{m}:{s}", "{h}h"]),
)

VALUES = st.one_of(
    SCALARS,
    WALLTIMES,
    st.lists(st.one_of(st.integers(-2, 9), st.text(max_size=5)), max_size=3),
    st.lists(st.one_of(st.sampled_from(["--qos=debug", "--exclusive", "#SBATCH --x", "x", "--a\nb", ""]), st.text(max_size=8)), max_size=3),
    st.lists(st.integers(-2, 9), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.just(object()),
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20) | st.sampled_from(NASTY),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


# --- ClusterOptions ----------------------------------------------------------------------------------

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
def test_any_value_of_one_option_is_accepted_or_named_in_an_option_error(name, value):
    _ran("options_single_field", N_SINGLE)
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
    _ran("options_combinations", N_COMBO)
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
    _ran("options_slurm_field", N_SLURM)
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
    _ran("options_from_json", N_MAPPING)
    try:
        opts = options_from_mapping(body)
    except OptionError as err:
        assert str(err).startswith(f"{err.parameter}=")
    else:
        assert isinstance(opts, ClusterOptions)


# --- start_cluster with impossible requests ------------------------------------------------------------

_REPORT = kit.detect()
_TOTAL_MEMORY = psutil.virtual_memory().total


def _not_a_size(text: str) -> bool:
    """Text that ClusterOptions refuses as memory_limit (how it refuses is what the property checks)."""
    try:
        ClusterOptions.from_config(memory_limit=text)
    except Exception:
        return True
    return False


def _impossible_requests():
    """(kind, kwargs) pairs, each invalid at validation, plan, bind or connect time on this machine."""
    workers = st.integers(1, 2)
    kinds = [
        st.builds(
            lambda k, v, n: ("unknown_key", {k: v, "n_workers": n, "memory_limit": "1GiB"}),
            st.text(min_size=1, max_size=15).filter(lambda k: option_name(k) is None and k not in ("verbose", "security")),
            SCALARS,
            workers,
        ),
        st.builds(
            lambda size, n: ("memory_above_machine", {"device": "cpu", "n_workers": n, "memory_limit": size}),
            st.one_of(st.integers(_TOTAL_MEMORY + 1, 2**62), st.integers(10**3, 10**6).map(lambda t: f"{t}TiB")),
            workers,
        ),
        st.builds(
            lambda size, n: ("bad_size", {"device": "cpu", "n_workers": n, "memory_limit": size}),
            st.one_of(st.sampled_from(["12 parsecs", "-1GiB", "150%", "lots", "1e400 GB", "NaN"]), st.text(max_size=8).filter(_not_a_size)),
            workers,
        ),
        st.builds(lambda n: ("bad_count", {"n_workers": n}), st.one_of(st.integers(max_value=0), st.sampled_from(["²", "-1", "2.5", "many", 2.0]))),
        st.builds(
            lambda a, t: ("closed_port", {"scheduler_address": a, "connect_timeout": t}),
            st.sampled_from([1, 9, 19, 79]).map(lambda p: f"tcp://127.0.0.1:{p}"),
            st.floats(0.2, 1.0),
        ),
        st.builds(
            lambda h, n: ("unbindable_host", {"device": "cpu", "n_workers": n, "memory_limit": "1GiB", "host": h}),
            st.sampled_from(["192.0.2.1", "198.51.100.7", "203.0.113.9"]),
            workers,
        ),
        st.builds(
            lambda d: ("bad_local_directory", {"device": "cpu", "n_workers": 1, "memory_limit": "1GiB", "local_directory": d}),
            st.sampled_from([f"{__file__}/spill", "/dev/null/spill", "x" * 300, "\x00"]),
        ),
        st.builds(lambda a, f: ("address_and_file", {"scheduler_address": a, "scheduler_file": f}), st.just("tcp://127.0.0.1:8786"), st.just(__file__)),
    ]
    if _REPORT.mode != "gpu":
        kinds.append(st.builds(lambda n: ("gpu_without_gpu", {"device": "gpu", "n_workers": n}), workers))
    ucxx = _REPORT.libraries.get("distributed_ucxx")
    if not (ucxx and ucxx.installed):
        kinds.append(st.builds(lambda n: ("ucx_without_ucxx", {"device": "cpu", "protocol": "ucx", "n_workers": n}), workers))
    return st.one_of(kinds)


N_START = examples(60)


@settings(max_examples=N_START, deadline=None, suppress_health_check=FIXTURES_OK)
@given(request=_impossible_requests())
def test_impossible_start_raises_a_kit_error_and_leaves_nothing(request, runtime_dir):
    kind, kwargs = request
    before = kit_children()
    with pytest.raises(KitError) as info:
        kit.start_cluster(verbose=False, **kwargs)
    err = info.value
    spawned = kit_children() - before
    _ran("start_cluster_impossible", N_START, **{f"kind_{kind}": 1, "spawned_processes": len(spawned)})
    assert isinstance(err, (OptionError, ConnectError, ClusterStartError))
    if isinstance(err, OptionError):
        assert str(err).startswith(f"{err.parameter}=") and err.parameter in kwargs
    elif isinstance(err, ConnectError):
        assert str(err).startswith(f"scheduler_address={kwargs['scheduler_address']!r}: no scheduler answered within")
    else:
        assert "Everything that was started has been stopped" in str(err)
    assert not wait_for_no_new_children(before), f"{kind}: processes left running"
    assert list(runtime_dir.glob("session-*.json")) == [], f"{kind}: registry record left behind"
    assert kit.current_session() is None


def test_a_malformed_scheduler_file_is_a_connect_error(tmp_path, runtime_dir):
    path = tmp_path / "scheduler.json"
    before = kit_children()
    for content in ["not json", "{}", "", "[]", '{"address": "tls://127.0.0.1:9"}', '{"address": 5}']:
        path.write_text(content)
        with pytest.raises(ConnectError) as info:
            kit.start_cluster(verbose=False, scheduler_file=str(path), connect_timeout=1)
        assert str(info.value).startswith(f"scheduler_file={str(path)!r}"), content
    assert not wait_for_no_new_children(before) and list(runtime_dir.glob("session-*.json")) == []


# --- the command line ----------------------------------------------------------------------------------


def _flags(parser: argparse.ArgumentParser, command: str) -> list[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return [opt for action in sub._actions for opt in action.option_strings]


_PARSER = build_parser()
_JUNK = st.one_of(st.text(max_size=12), st.sampled_from(["--", "-", "-x", "--nope", "--json=1", "--help", "-h", "²", "\x00", "--port", "-1"]))


def _argv(command: str):
    tokens = st.one_of(st.sampled_from(_flags(_PARSER, command)), _JUNK)
    return st.lists(tokens, max_size=5).map(lambda rest: [command, *rest])


def _check_exit(code, out: str, err: str) -> None:
    assert "Traceback" not in out + err
    if code == 2:  # argparse usage error: the usage, then one error line
        lines = err.strip().splitlines()
        assert lines and lines[0].startswith("usage: "), err
        assert len([line for line in lines if line.startswith("gpu-dask-kit") and ": error: " in line]) == 1, err
    elif code == 1:
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    else:
        assert code in (0, None), code


N_CLI = examples(80)


@pytest.fixture
def no_exec(monkeypatch):
    """Safety net: `lab` replaces the process with JupyterLab (os.execv); here that would end pytest."""

    def refuse(*args):
        raise AssertionError(f"the CLI tried to exec {args!r}")

    monkeypatch.setattr(os, "execv", refuse)


@settings(max_examples=N_CLI, deadline=None, suppress_health_check=FIXTURES_OK)
@given(argv=st.one_of(_argv("doctor"), _argv("sessions"), st.lists(_JUNK, max_size=3)).filter(lambda a: not {"lab", "check"} & set(a)))
def test_cli_doctor_and_sessions_exit_cleanly_for_any_flags(argv, runtime_dir, no_exec):
    _ran("cli_in_process", N_CLI)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    _check_exit(code, out.getvalue(), err.getvalue())


N_PARSE = examples(150)


@settings(max_examples=N_PARSE, deadline=None, suppress_health_check=FIXTURES_OK)
@given(argv=st.one_of(_argv("lab"), _argv("check")), values=st.lists(st.one_of(st.integers(-5, 70000).map(str), _JUNK), max_size=4))
def test_cli_lab_and_check_arguments_parse_or_exit_2(argv, values):
    """`lab` and `check` start servers and kernels, so only their parser is exercised here."""
    _ran("cli_parse_lab_check", N_PARSE)
    argv = argv + values
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:
            _check_exit(exc.code, "", err.getvalue())
            return
    assert args.command == argv[0]
    if args.command == "lab":
        assert args.port is None or isinstance(args.port, int)
    else:
        assert args.scale in ("small", "full") and isinstance(args.timeout, int)


N_LAB = examples(20)


@settings(max_examples=N_LAB, deadline=None, suppress_health_check=FIXTURES_OK)
@given(name=st.text(max_size=20), port=st.one_of(st.none(), st.integers(1, 65535)))
def test_cli_lab_with_a_missing_folder_exits_2_with_one_line(name, port, tmp_path, no_exec):
    # one path component under a parent that never exists, so `lab` returns before it would exec JupyterLab
    name = name.replace("\x00", "").replace("/", "")
    assume(name not in ("", ".", ".."))
    missing = str(tmp_path / "does-not-exist") + "/" + name
    assert not os.path.isdir(os.path.abspath(missing))
    _ran("cli_lab_missing_folder", N_LAB)
    argv = ["lab", "--no-browser", "--notebook-dir", missing] + (["--port", str(port)] if port else [])
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 2
    assert err.getvalue().startswith("error: --notebook-dir=") and len(err.getvalue().strip().splitlines()) == 1


def _script_parser() -> argparse.ArgumentParser:
    return add_cluster_args(argparse.ArgumentParser(prog="gpu-dask-kit-script"))


_CLUSTER_FLAGS = [opt for action in _script_parser()._actions for opt in action.option_strings if opt not in ("-h", "--help")]
_SWITCHES = {opt for action in _script_parser()._actions if action.nargs == 0 for opt in action.option_strings}
_COUNT_FLAGS = {"--n-workers", "--threads-per-worker"}


def _scripts_count_bug(argv: list[str]) -> bool:
    """scripts.options_from_args calls int() on "²" or on > 4300 digits (see test_count_flag_with_a_non_ascii_digit)."""
    for flag, value in itertools.pairwise(argv):
        text = value.strip().lstrip("-")
        if flag in _COUNT_FLAGS and text.isdigit() and (not text.isascii() or len(text) > 4000):
            return True
    return False


N_FLAGS = examples(300)


@settings(max_examples=N_FLAGS, deadline=None, suppress_health_check=FIXTURES_OK)
@given(pairs=st.lists(st.tuples(st.sampled_from(_CLUSTER_FLAGS), st.one_of(SCALARS.map(str), st.sampled_from(NASTY))), max_size=5))
def test_cluster_flags_give_options_or_an_option_error(pairs):
    """What a script's `add_cluster_args` + `start_cluster_from_args` does before anything starts."""
    argv = [token for flag, value in pairs for token in ((flag,) if flag in _SWITCHES else (flag, value))]
    assume(not _scripts_count_bug(argv))
    _ran("cli_cluster_flags", N_FLAGS)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            args = _script_parser().parse_args(argv)
        except SystemExit as exc:
            assert exc.code == 2 and "error: " in err.getvalue() and "Traceback" not in err.getvalue()
            return
    try:
        ClusterOptions.from_config(**options_from_args(args))
    except OptionError as err:
        assert str(err).startswith(f"{err.parameter}=")


def test_count_flag_with_a_non_ascii_digit_is_an_option_error():
    args = _script_parser().parse_args(["--n-workers", "²"])
    with pytest.raises(OptionError):
        ClusterOptions.from_config(**options_from_args(args))


N_SUBPROCESS = examples(5)


@settings(max_examples=N_SUBPROCESS, deadline=None, suppress_health_check=FIXTURES_OK)
@given(argv=st.one_of(_argv("doctor"), _argv("sessions")).filter(lambda a: all("\x00" not in t for t in a)))
def test_cli_in_a_subprocess_never_prints_a_traceback(argv, runtime_dir):
    _ran("cli_subprocess", N_SUBPROCESS)
    out = subprocess.run(
        [sys.executable, "-m", "gpu_dask_kit", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)),
    )
    _check_exit(out.returncode, out.stdout, out.stderr)


# --- the REST routes -------------------------------------------------------------------------------------

API = "gpu-dask-kit/api"
VALID_UNKNOWN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}}}


def _route_paths() -> list[str]:
    """Concrete paths for every route the extension registers (a new route is covered automatically)."""
    import re

    paths = []
    for pattern, _handler, _kwargs in make_handlers("", None):
        path = re.sub(r"\(\?P<\w+>[^)]*\)", VALID_UNKNOWN, pattern).removesuffix("/?").lstrip("/")
        assert not set(path) & set("()[]?*+\\$^"), f"route {pattern!r}: teach _route_paths its placeholder"
        paths.append(path)
    return paths


ROUTE_PATHS = _route_paths()


class Server:
    """Synchronous requests to the pytest-jupyter server (hypothesis drives sync functions)."""

    def __init__(self, loop, client, base_url, auth):
        self.loop, self.client, self.base, self.auth = loop, client, url_path_join(base_url, API), auth

    def fetch(self, raw_path: str, method: str = "GET", body: bytes | None = None, headers=None):
        headers = {**self.auth, **(headers or {})}
        return self.loop.run_until_complete(
            self.client.fetch(
                self.base + "/" + raw_path,
                method=method,
                body=body,
                headers=headers,
                raise_error=False,
                allow_nonstandard_methods=True,
                follow_redirects=False,
                request_timeout=30,
            )
        )


@pytest.fixture
def server(jp_serverapp, http_server_client, jp_base_url, jp_auth_header, jp_asyncio_loop):
    return Server(jp_asyncio_loop, http_server_client, jp_base_url, jp_auth_header)


def _check_reply(response) -> str:
    body = response.body.decode("utf-8", "replace") if response.body else ""
    assert 200 <= response.code < 500, (response.code, response.effective_url, body[:300])
    assert "Traceback" not in body and 'File "' not in body, body[:300]
    if response.code >= 400 and response.headers.get("Content-Type", "").startswith("application/json"):
        assert not json.loads(body).get("traceback")
    return body


TRAVERSAL = [
    "..",
    ".",
    "../x",
    "..%2F..%2Fvictim",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "x%2F..%2F..%2Fvictim",
    "%00",
    "%ZZ",
    "%FF%FE",
    VALID_UNKNOWN + "%0A",
    VALID_UNKNOWN.upper(),
    "0" * 33,
    "a" * 4000,
    "%252e%252e",
]

N_IDS = examples(200)


@settings(max_examples=N_IDS, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    session_id=st.one_of(
        st.text(max_size=64),
        st.from_regex(r"[0-9a-f]{32}", fullmatch=True),
        st.text(alphabet="0123456789abcdefABCDEF./%\\", max_size=40),
        st.sampled_from(TRAVERSAL),
    ),
    encode=st.booleans(),
    method=st.sampled_from(["GET", "DELETE"]),
)
def test_any_session_id_is_answered_with_a_4xx(server, session_id, encode, method, runtime_dir):
    _ran("rest_session_ids", N_IDS)
    raw = urllib.parse.quote(session_id, safe="") if encode else urllib.parse.quote(session_id, safe="/%.\\")
    response = server.fetch(f"sessions/{raw}", method=method)
    _check_reply(response)
    if encode and session_id:
        import re

        expected = 404 if re.fullmatch(r"[0-9a-f]{32}", session_id) else 400
        assert response.code == expected, (session_id, response.code)
    assert list(runtime_dir.glob("*")) == []


N_QUERY = examples(60)


@settings(max_examples=N_QUERY, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    path=st.sampled_from([p for p in ROUTE_PATHS if VALID_UNKNOWN not in p]),
    params=st.dictionaries(st.text(max_size=10), st.one_of(st.text(max_size=20), st.sampled_from(NASTY[:30])), max_size=4),
)
def test_any_query_string_on_the_get_routes_is_ignored(server, path, params):
    _ran("rest_query_strings", N_QUERY)
    query = urllib.parse.urlencode(params)
    response = server.fetch(f"{path}?{query}")
    body = _check_reply(response)
    assert response.code == 200 and isinstance(json.loads(body), dict)


N_BODIES = examples(200)


@settings(max_examples=N_BODIES, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    path=st.sampled_from(ROUTE_PATHS),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode), JSON.map(lambda j: json.dumps(j).encode())),
    content_type=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]),
)
def test_any_body_on_any_route_is_answered_without_a_500(server, path, method, body, content_type, runtime_dir):
    _ran("rest_bodies", N_BODIES)
    before = kit_children()
    response = server.fetch(path, method=method, body=body, headers={"Content-Type": content_type})
    _check_reply(response)
    # no route takes a body: reads answer as usual, writes are 405, an unknown session 404, and tornado
    # itself answers 400 to a form body it cannot parse
    assert response.code in (200, 400, 404, 405), response.code
    assert kit_children() == before and list(runtime_dir.glob("*")) == []
