"""Properties of the command line (gpu_dask_kit.cli): any flags exit 0, 1 or 2 with a one-line error, never with a
traceback."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpu_dask_kit.cli import build_parser, main

from .strategies import FIXTURES_OK, examples, ran


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
    ran("cli_in_process", N_CLI)
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
    ran("cli_parse_lab_check", N_PARSE)
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
    ran("cli_lab_missing_folder", N_LAB)
    argv = ["lab", "--no-browser", "--notebook-dir", missing] + (["--port", str(port)] if port else [])
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 2
    assert err.getvalue().startswith("error: --notebook-dir=") and len(err.getvalue().strip().splitlines()) == 1


N_SUBPROCESS = examples(5)


@settings(max_examples=N_SUBPROCESS, deadline=None, suppress_health_check=FIXTURES_OK)
@given(argv=st.one_of(_argv("doctor"), _argv("sessions")).filter(lambda a: all("\x00" not in t for t in a)))
def test_cli_in_a_subprocess_never_prints_a_traceback(argv, runtime_dir):
    ran("cli_subprocess", N_SUBPROCESS)
    out = subprocess.run(
        [sys.executable, "-m", "gpu_dask_kit", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)),
    )
    _check_exit(out.returncode, out.stdout, out.stderr)
