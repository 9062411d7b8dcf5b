"""Properties of a script's cluster flags (gpu_dask_kit.scripts): options or an OptionError, before anything starts."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpu_dask_kit import OptionError
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.scripts import add_cluster_args, options_from_args

from .strategies import FIXTURES_OK, NASTY, SCALARS, examples, ran


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
    ran("cli_cluster_flags", N_FLAGS)
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
