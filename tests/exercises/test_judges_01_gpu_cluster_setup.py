"""Notebook 01's exercise judges: 01-1 (``workshop_options``, the options dask-cuda reads) and 01-2 (``spill_at``,
a share of each GPU in bytes), each with answer cells learners wrote in review."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import EXERCISES, judge

from ..test_exercises_cases import RIGHT
from .helpers import assert_refused, judged, judged_cell, judged_with_ns, not_yet, run_without


def test_01_1_says_only_what_dask_cuda_reads(client):
    """Review 6, item 8: dask-cuda 26.10's LocalCUDACluster reads a float in (0, 1] as a share of the GPU and parses a
    string with parse_bytes ("60%" raises): the hint for 60 suggested a percent string, and "60%" passed unremarked."""
    verdict = judge(
        "01-1", run_without("workshop_options = kit.ClusterOptions(device_memory_limit=60, rmm_async=True, dashboard_address=':0')", "01-1", client)
    )
    assert not verdict.correct and "percent" not in verdict.message and "float between 0 and 1" in verdict.message, verdict.message
    verdict = judge("01-1", run_without(RIGHT["01-1"][0], "01-1", client))
    assert verdict.correct and "LocalCUDACluster itself does not read a '%' string" in verdict.message, verdict.message
    assert "0.6" in EXERCISES["01-1"].solution and "%" not in EXERCISES["01-1"].solution


# Review 8: CPU workers on a GPU node; the percent note only for the option it was given to.
def test_01_1_cpu_workers_on_the_gpu_node_are_rejected(client):
    code = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0', device='cpu')"
    not_yet("01-1", client, code, "CPU workers (device='cpu')")


@pytest.mark.parametrize("pin", ["CUDA_VISIBLE_DEVICES='0'", "n_workers=1", "protocol='ucx'", "threads_per_worker=4"])
def test_01_1_options_pinned_to_one_gpu_or_worker_are_rejected(pin, client):
    """Learner review 9: the node's other GPUs left unused, as device='cpu' did in review 8, were "Correct"."""
    code = f"workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0', {pin})"
    not_yet("01-1", client, code, f"also asks for {pin}" if pin.startswith("protocol") else f"also fixes {pin}")


def test_01_1_the_percent_note_names_the_option_that_had_it(client):
    host = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0', memory_limit='60%')"
    verdict, _ = judged_with_ns("01-1", client, host)  # a host limit beside the device one: refused since review 25
    assert not verdict.correct and "percent string" not in verdict.message and "also sets memory_limit" in verdict.message, verdict.message
    device = "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':0')"
    verdict, _ = judged_with_ns("01-1", client, device)
    assert verdict.correct and "percent string" in verdict.message, verdict.message


def test_01_2_a_percent_string_is_called_a_percentage(client):
    """Review 7, item 8: `spill_at = "60%"` was told "a str is neither"."""
    verdict = judged("01-2", client, "spill_at = '60%'")
    assert not verdict.correct and "is a percentage" in verdict.message and "a str is neither" not in verdict.message, verdict.message


def test_01_2_decimal_units_are_named_without_confirming_the_digits(client):
    verdict = not_yet("01-2", client, "spill_at = '9.6GB'", "decimal unit")
    assert "right digits" not in verdict.message and "Any unit is fine" not in verdict.message, verdict.message


@pytest.mark.parametrize("given", ["9.52GiB", "9.55 GiB", "9.7GiB"])
def test_01_2_a_size_a_digit_off_is_not_accepted(given, client):
    """Learner review 14: "9.52GiB" (0.8% off) was Correct under a 1% tolerance; 3 significant digits need only 0.5%."""
    verdict = judged("01-2", client, f"spill_at = {given!r}")
    assert verdict.answered and not verdict.correct, verdict.message


def test_review_25_01_1_a_host_limit_beside_the_device_limit_is_refused(client):
    code = 'workshop_options = kit.ClusterOptions(device_memory_limit=0.6, memory_limit=0.6, rmm_async=True, dashboard_address=":0")'
    assert_refused("01-1", client, code, "also sets memory_limit=0.6")


def test_review_36_01_1_port_0_written_as_text_is_a_free_port(client):
    """`dashboard_address="0"` was read as no dashboard ("a fixed port (or none)"); distributed reads "0" as a free port."""
    _, verdict = judged_cell("01-1", client, 'workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address="0")')
    assert verdict.correct, verdict.message


def test_review_37_01_1_no_dashboard_is_named_as_no_dashboard_not_as_none(client):
    """Learner review 37: `dashboard_address=False` was told "dashboard_address is None, a fixed port (or none)"."""
    code = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=False)"
    assert_refused("01-1", client, code, "turns the dashboard off (None or False)", not_said="is None")


def test_review_39_01_1_a_bare_zero_is_told_what_distributed_itself_does_with_it(client):
    """Learner review 39: `dashboard_address=0` passes (the kit reads it as a free port), but distributed's own clusters
    read a bare 0 as no address given and take 8787 (`clean_dashboard_address(dashboard_address or default_port)`)."""
    _, verdict = judged_cell("01-1", client, "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=0)")
    assert verdict.correct and "write ':0' there" in verdict.message, verdict.message
    _, verdict = judged_cell("01-1", client, "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0')")
    assert verdict.correct and "write ':0'" not in verdict.message, verdict.message


def test_review_40_01_1_the_dashboard_left_out_is_refused(client):
    """Learner review 40: `ClusterOptions(device_memory_limit=0.6, rmm_async=True)` passed on the kit's default port."""
    code = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True)"
    assert_refused("01-1", client, code, "your answer leaves dashboard_address out")


def test_review_55_01_2_zero_bytes_is_said_to_be_zero(client):
    """Learner review 55: `int(0.6) * 16 * 2**30` (0 bytes) was told it is "read as a few bytes ... give the bytes"."""
    assert_refused("01-2", client, "spill_at = int(0.6) * 16 * 2**30", "spill_at is 0 bytes (if arithmetic made it", not_said="a few bytes")


def test_review_57_01_2_a_bare_fraction_is_not_said_to_be_0_bytes(client):
    """Learner review 57: `spill_at = 0.6` was told "spill_at is 0 bytes" (the R55 fix for int(0.6) * ... read 0.6 as 0)."""
    assert_refused("01-2", client, "spill_at = 0.6", "spill_at looks like a fraction", not_said="0 bytes")


def test_review_57_01_1_a_cluster_options_turned_into_a_dict_is_named(client):
    """Learner review 57: `kit.ClusterOptions(...).to_dict()` was told "build it with kit.ClusterOptions(...)" (it was)."""
    code = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0').to_dict()"
    assert_refused("01-1", client, code, "a dict made from a ClusterOptions", not_said="build it with")
