"""16 single-threaded CPU workers through SLURM on this machine: all connect, compute, close, nothing left.
The times are printed (and recorded in docs/scaling.md), never asserted."""

from __future__ import annotations

import pytest

from .scale_check import run_scale

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_sixteen_workers(slurm_clean, capsys):
    figures = run_scale(16)
    with capsys.disabled():
        print("\nSLURM scale check:", figures)
    assert figures["workers_connected"] == 16 and figures["jobs_submitted"] == 16 and figures["job_ids_in_record"] == 16
    assert figures["result_ok"]
    assert figures["jobs_left_in_squeue"] == 0 and figures["processes_left"] == 0
