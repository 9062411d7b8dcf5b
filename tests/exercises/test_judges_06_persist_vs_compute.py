# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 06's exercise judges: 06-1 (``col_sums_persisted`` held on the workers, ``col_sums_local`` brought here)
and 06-2 (``fraction``, x's size over the cluster's memory, both read rather than typed), each with answer cells
learners wrote in review, with x lazy as in the notebook."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import LIMITS
from ..test_exercises_corpus import _run, namespace
from .helpers import LIMITS_06, SUMS, assert_refused, assert_rejected, cells_in_shell, judge_answer_with_ns, judged_cell, notebook_namespace, run_without


def test_right_answers_of_06_1_from_a_lazy_x_pass(client):
    """In notebook 06, x is lazy: Dask fuses making x's chunks into the sum (random-sum-...), and that still counts as from x."""
    from gpu_dask_kit.compute import random_array

    ns = _run("", "06-1", client)
    ns["x"] = random_array((40_000, 10), chunks=(10_000, 10), seed=6)
    exec(compile(SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())", "<answer>", "exec"), ns)
    ns["In"] = ["", SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())"]
    verdict = judge("06-1", ns)
    assert verdict.correct, verdict.message


def test_06_1_a_local_persist_is_not_called_lazy(client):
    """06-1 with notebook 06's x (lazy): `.persist(scheduler="sync")` ran the sums in this process; before: "nothing ran yet"."""
    import dask.array as da

    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist(scheduler='sync')\ncol_sums_local = col_sums_persisted.compute()"
    ns = namespace("06-1", client)
    ns["x"] = da.random.default_rng(62).random((1000, 10), chunks=(250, 10))
    exec(compile(code, "<answer 06-1>", "exec"), ns)
    ns["In"] = ["", code, 'exercises.check("06-1", globals())']
    verdict = judge("06-1", ns)
    assert not verdict.correct and "THIS notebook's process" in verdict.message and "nothing ran yet" not in verdict.message, verdict.message


def test_06_1_sums_computed_here_and_wrapped_are_told_so_not_only_a_local_persist(client):
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = da.from_array(col_sums.compute())\ncol_sums_local = to_host(col_sums.compute())"
    ns, verdict = judge_answer_with_ns("06-1", code, client)
    assert_rejected("06-1", ns, verdict, "da.from_array(... .compute())")


# Review 6, item 2: 06-2 with a number typed in where the exercise asks to read it (x's size, the limits, the worker count).
WORKERS = f"limits = [w['memory_limit'] for w in {LIMITS}]\n"
TYPED_06_2 = [
    ("from dask.utils import parse_bytes\nfraction = x.nbytes / (2 * parse_bytes('1GiB'))", "a memory size is written out"),
    (WORKERS + "fraction = 20e6 / sum(limits)", "x's size is a number written out"),
    (WORKERS + "fraction = x.nbytes / limits[0] * 0.5", "equals the number of workers here"),
    (WORKERS + "fraction = x.nbytes / (limits[0] * 2)", "equals the number of workers here"),
    (
        "from dask.utils import parse_bytes\nCPU_CLUSTER = {'n_workers': 2, 'memory_limit': '1GiB'}\nfraction = x.nbytes / (CPU_CLUSTER['n_workers'] * parse_bytes(CPU_CLUSTER['memory_limit']))",
        "cluster request",
    ),
]


@pytest.mark.parametrize(("code", "said"), TYPED_06_2)
def test_06_2_a_typed_size_limit_or_worker_count_is_not_accepted(code, said, client):
    """Before: each was "Correct" (the corpus' x is 20e6 bytes, its two workers have 1 GiB each)."""
    verdict = judge("06-2", run_without(code, "06-2", client))
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message


@pytest.mark.parametrize(
    "code",
    [WORKERS + 'fraction = f"{100 * x.nbytes / sum(limits):.3g}%"', WORKERS + 'pct = x.nbytes / sum(limits) * 100\nfraction = f"{pct:.3g}%"'],
)
def test_06_2_a_percentage_formatted_with_3g_passes(code, client):
    """Learner review 29: the format spec `.3g` was read as a size typed in ("3g": 3 GB)."""
    verdict = judge("06-2", run_without(code, "06-2", client))
    assert verdict.correct, verdict.message


BYTES_HELD = (  # notebook 06's helper (cell 4), as the learner has it
    "import time\nfrom dask.core import flatten\nfrom distributed import wait\n\n"
    "def _bytes_in_memory(keys, dask_scheduler=None):\n"
    "    return sum(max(ts.nbytes, 0) for ts in (dask_scheduler.tasks.get(k) for k in keys) if ts is not None and ts.state == 'memory')\n\n"
    "def bytes_held(c, expect=None, timeout=10.0):\n    keys = list(flatten(c.__dask_keys__()))\n    deadline = time.monotonic() + timeout\n"
    "    while True:\n        held = session.client.run_on_scheduler(_bytes_in_memory, keys)\n"
    "        if expect is None or held == expect or time.monotonic() > deadline:\n            return held\n        time.sleep(0.1)\n"
)


def _lazy_x(client, code):
    """06-2 as in notebook 06 after cell 20: x is the lazy recipe (its persisted copy was dropped)."""
    import dask.array as da

    ns = namespace("06-2", client)
    exec(compile(BYTES_HELD, "<notebook 06, cell 4>", "exec"), ns)
    ns["x"] = da.random.default_rng(61).random((250_000, 10), chunks=(62_500, 10))
    exec(compile(code, "<answer 06-2>", "exec"), ns)
    ns["In"] = ["", code, 'exercises.check("06-2", globals())']
    return ns


PERSISTED_06_2 = [
    WORKERS + "x_p = x.persist()\nwait(x_p)\nfraction = bytes_held(x_p, expect=x.nbytes) / sum(limits)",
    WORKERS + "fraction = bytes_held(x.persist(), expect=x.nbytes) / sum(limits)",  # the persisted copy is dropped: the re-run persists again
    WORKERS + "x_p = x.persist()\nwait(x_p)\nfraction = bytes_held(x_p, expect=x.nbytes) / sum(limits)\ndel x_p",
]


@pytest.mark.parametrize("code", PERSISTED_06_2)
def test_06_2_persisting_x_and_reading_the_bytes_held_is_accepted(code, client):
    """Review 6, item 3: before, "computed x ... brings every value of x to this notebook" (a persist keeps them on the workers)."""
    verdict = judge("06-2", _lazy_x(client, code))
    assert verdict.correct, verdict.message


def test_06_2_computing_x_for_its_size_is_still_told(client):
    verdict = judge("06-2", _lazy_x(client, WORKERS + "fraction = x.compute().nbytes / sum(limits)"))
    assert not verdict.correct and "brings every value of x to this notebook" in verdict.message, verdict.message


# Review 8b (what kept 06 below 5): worker counts typed in a slice or assumed by equal limits; hints that blamed the wrong thing
WRONG_06 = [
    ("06-2", LIMITS_06 + "fraction = x.nbytes / sum(limits[:2])", "the slice :2", "GiB"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / (session.n_workers * min(limits))", "every worker has the same limit", "typed"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / (len(limits) * limits[0])", "every worker has the same limit", "typed"),
    ("06-2", LIMITS_06 + "fraction = round(x.nbytes / sum(limits), 2)", "rounded so far", "GiB"),
    ("06-2", LIMITS_06 + 'fraction = f"{100*x.nbytes/sum(limits):.0f}%"', "rounded so far", "GiB"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**20 / (sum(limits) / 2**30)", "MiB", "typed"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**30 / (sum(limits) / 2**20)", "MiB", "typed"),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), WRONG_06)
def test_06_2_typed_worker_counts_and_what_the_hints_blame(key, code, said, not_said, client):
    ns, verdict = judge_answer_with_ns(key, code, client)
    assert_rejected(key, ns, verdict, said, not_said)


def test_06_2_memory_in_use_is_not_the_memory_limits(client):
    """Learner review 9: `x.nbytes / session.memory().total("host_memory_used")` got "not what your answer cell gives
    now" (memory in use moved between the run and the check's re-run), not what is wrong: in use is not the limits."""
    from gpu_dask_kit.monitor import snapshot

    ns = notebook_namespace("06-2", client)
    ns["session"].memory = lambda: snapshot(client, mode="cpu", fresh=True)
    ns, verdict = judge_answer_with_ns("06-2", 'fraction = x.nbytes / session.memory().total("host_memory_used")', client, ns=ns)
    assert_rejected("06-2", ns, verdict, "divides by memory in use", "gives now")


@pytest.mark.parametrize(
    ("code", "said", "not_said"),
    [
        (LIMITS_06 + "fraction = x.nbytes / 2**20 / (sum(limits) / 2**30)", "different units (MiB and GiB)", "typed in"),
        (LIMITS_06 + "fraction = x.nbytes / sum(limits) if x.nbytes else float('{share:.4f}')", "written out", "memory size"),
    ],
)
def test_06_2_hints_say_what_the_cell_did(code, said, not_said, client):
    """Learner review 11 (and 8): MiB over GiB was told "the limits are typed in"; a typed fallback fraction (the
    answer, rounded, in a string) was told "a memory size is written out"."""
    ns = notebook_namespace("06-2", client)
    share = ns["x"].nbytes / sum(w["memory_limit"] for w in client.scheduler_info(n_workers=-1)["workers"].values())
    ns, verdict = judge_answer_with_ns("06-2", code.replace("{share:.4f}", f"{share:.4f}"), client, ns=ns)
    assert_rejected("06-2", ns, verdict, said, not_said)


def test_06_2_the_same_unit_on_both_sides_cancels_and_passes(client):
    """Learner review 11: both sides in MB (the unit cancels, the value is right), with `limits` read in a cell before,
    was told "the limits are typed in"."""
    ns = notebook_namespace("06-2", client)
    exec(compile(LIMITS_06, "<an earlier cell>", "exec"), ns)
    _, verdict = judge_answer_with_ns("06-2", "fraction = (x.nbytes / 1e6) / (sum(limits) / 1e6)", client, ns=ns)
    assert verdict.correct, verdict.message


def test_06_1_a_compute_per_value_is_not_one_fetch(client):
    """Learner review 11: a .compute() per column sum (N_COLS round trips) was "Correct"."""
    code = SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = np.array([to_host(col_sums_persisted[i].compute()) for i in range(N_COLS)])"
    ns, verdict = judge_answer_with_ns("06-1", code, client)
    assert_rejected("06-1", ns, verdict, "separate computations (a .compute() per value or piece)")


@pytest.mark.parametrize(
    "local",
    [
        "to_host(x.compute().sum(axis=0)) + 0 * to_host(col_sums_persisted.compute())",
        "0 * to_host(col_sums_persisted.compute()) + to_host(x.compute().sum(axis=0))",
    ],
)
def test_06_1_a_zero_weighted_fetch_beside_a_sum_made_here_is_rejected(local, client):
    """Learner review 11: all of x summed in the notebook, plus 0 times the persisted sums, was Correct."""
    code = SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = " + local
    ns, verdict = judge_answer_with_ns("06-1", code, client)
    assert_rejected("06-1", ns, verdict, "contributes nothing")


LIMITS_READ = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"


@pytest.mark.parametrize(
    "code",
    [
        LIMITS_READ + "limits_mib = [l // 2**20 for l in limits]\nfraction = x.nbytes / 2**20 / sum(limits_mib)",
        LIMITS_READ + "fraction = (x.nbytes / 2**20) / (sum(limits) // 2**20)",
    ],
)
def test_review_24_06_2_limits_floor_divided_into_mib_pass(code, client):
    _, verdict = judged_cell("06-2", client, code)
    assert verdict.correct, verdict.message


PERSIST = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\n"


def test_review_24_06_1_without_to_host_passes_on_cpu_and_is_told_why_a_gpu_needs_it(client):
    _, verdict = judged_cell("06-1", client, PERSIST + "col_sums_local = col_sums_persisted.compute()")
    assert verdict.correct and "On a GPU, .compute() gives a CuPy array" in verdict.message, verdict.message
    _, verdict = judged_cell("06-1", client, PERSIST + "col_sums_local = to_host(col_sums_persisted.compute())")
    assert verdict.correct and "CuPy" not in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (PERSIST + "col_sums_local = to_host((x.mean(axis=0) * x.shape[0]).compute())", "(a sum, or a mean)"),
        (
            PERSIST + "col_sums_local = to_host(col_sums_persisted.compute())\ncol_sums_local = col_sums_local + 0 * to_host(x.sum(axis=0).compute())",
            "as an earlier line of the cell made it",
        ),
    ],
)
def test_review_24_06_1_refusals_say_what_the_cell_did(code, said, client):
    assert_refused("06-1", client, code, said)


@pytest.mark.parametrize("change", [".astype(int)", ".round(2)"])
def test_review_25_06_1_sums_changed_after_they_came_back_are_refused(change, client):
    assert_refused("06-1", client, PERSIST + f"col_sums_local = to_host(col_sums_persisted.compute()){change}", "changed after they came back")


def test_review_25_06_2_a_fraction_with_a_percent_sign_rounded_is_told_so(client):
    assert_refused("06-2", client, LIMITS_READ + 'fraction = f"{x.nbytes / sum(limits):.2f}%"', "the fraction written with a '%' sign")


@pytest.mark.parametrize("rounding", ["col_sums_local = col_sums_local.round(6)", "col_sums_local = np.round(col_sums_local, 6)"])
def test_review_30_06_1_sums_rounded_after_they_came_back_are_refused(rounding, client):
    """Learner review 30: .round(6) changed the sums by less than the 1e-9 a GPU's reductions need, and passed."""
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())\n" + rounding
    assert_refused("06-1", client, code, "changed after they came back (round(...))")


def test_review_31_06_2_a_share_formatted_to_one_digit_is_named_as_rounded(client):
    """Learner review 31: float(f"{share:.1g}") was told "sizes mixed between GiB and GB" (0.02 is 1.07 times 0.0186)."""
    code = WORKERS + 'fraction = float(f"{x.nbytes / sum(limits):.1g}")'
    verdict = judge("06-2", run_without(code, "06-2", client))
    assert not verdict.correct and "rounded so far" in verdict.message and "GB" not in verdict.message, verdict.message


def test_review_32_06_2_a_number_in_a_str_is_refused(client):
    verdict = judge("06-2", run_without(WORKERS + "fraction = str(x.nbytes / sum(limits))", "06-2", client))
    assert not verdict.correct and "a str holding a plain number" in verdict.message, verdict.message


def test_review_32_06_1_the_sums_with_an_extra_axis_are_named(client):
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute()).reshape(1, -1)"
    assert_refused("06-1", client, code, "with an extra axis", not_said="sum over the rows")


@pytest.mark.parametrize(
    ("after", "said"),
    [
        ("[:5]", "holds 5 of the column sums, not all"),
        ("\ncol_sums_local.sort()", "but in another order"),
    ],
)
def test_review_33_06_1_a_slice_or_a_sort_after_fetching_is_named(after, said, client):
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())" + after
    assert_refused("06-1", client, code, said)


def test_review_33_06_2_a_name_the_lesson_set_to_none_is_named_when_the_cell_raised(shell, client):
    """`x_persisted.nbytes` after the cell that drops x_persisted: the check said only that the cell failed."""
    from .helpers import cells_in_shell

    ns = cells_in_shell(
        shell,
        "06-2",
        client,
        "x_persisted = None",
        "fraction = x_persisted.nbytes / sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())",
    )
    verdict = judge("06-2", ns)
    assert not verdict.correct and "`x_persisted` holds None in this notebook now" in verdict.message, verdict.message


def test_review_33_06_1_np_asarray_of_the_persisted_sums_is_told_what_a_gpu_does_with_it(client):
    """`np.asarray(col_sums_persisted)` passes on CPU; its note spoke of a .compute() the cell did not call."""
    _, verdict = judged_cell("06-1", client, PERSIST + "col_sums_local = np.asarray(col_sums_persisted)")
    assert verdict.correct and "np.asarray(...) of it raises TypeError" in verdict.message and ".compute() gives" not in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("fraction = x.nbytes / sum(limits) / 2", "also divided by 2, a number written out"),
        ("fraction = int(x.nbytes / sum(limits) * 10000) / 10000", "was cut after it was computed"),
    ],
)
def test_review_36_06_2_a_number_beside_the_limits_read_is_not_called_limits_typed_in(code, said, client):
    limits = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"
    assert_refused("06-2", client, limits + code, said, not_said="typed in")


def test_review_37_06_2_a_sum_of_x_is_not_said_to_bring_every_value_here(client):
    limits = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"
    assert_refused("06-2", client, limits + "fraction = x.sum().compute() / sum(limits)", "computed something of x's values", not_said="every value of x")


def _numpy_block(seeds, dtype, block_id=(), block_info=None):
    """compute._cupy_random_block with NumPy's generator: the same graph as a GPU session's x, without a GPU."""
    import numpy as np

    return np.random.default_rng(int(seeds[block_id])).random(block_info[None]["chunk-shape"], dtype=dtype)


def test_06_1_sums_of_an_x_made_as_on_a_gpu_are_known_to_come_from_x(client):
    """H100, fourteenth session: on a GPU the reference answer was told "col_sums_persisted was not computed from x on
    the workers". There x is `map_blocks(_cupy_random_block, seeds, token="random_cupy")`, which Dask fuses into the
    first sum step: the fused task is named `sum-...`, and x's name is left only inside the subgraph that task runs."""
    import dask.array as da
    import numpy as np
    from distributed import wait

    from gpu_dask_kit.exercises.lineage import made_from

    ns = notebook_namespace("06-1", client)
    chunks = ns["x"].chunks
    seeds = np.random.default_rng(12).integers(0, 2**63 - 1, size=tuple(len(c) for c in chunks), dtype=np.int64)
    ns["x"] = da.map_blocks(_numpy_block, seeds, "float64", chunks=chunks, dtype="float64", meta=np.empty((0, 0)), token="random_cupy")
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())"
    _, verdict = judge_answer_with_ns("06-1", code, client, ns=ns)
    assert verdict.correct, verdict.message
    # the same sums made from a copy of x in the notebook are still told apart
    copy = da.from_array(ns["x"].compute(), chunks=chunks).sum(axis=0).persist()
    wait(copy)
    assert made_from(copy, ns["x"]) is False


def test_06_1_cupys_refusal_to_become_numpy_is_explained_by_the_check(shell, client):
    """H100, fourteenth session: `np.asarray(col_sums_persisted)` raised CuPy's TypeError on a GPU, and the check said
    only "failed when it last ran". NumPy converts its own arrays, so the cell raises CuPy's error itself here."""
    error = "raise TypeError('Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly.')"
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\n" + error + "\ncol_sums_local = np.asarray(col_sums_persisted)"
    verdict = judge("06-1", cells_in_shell(shell, "06-1", client, code))
    assert verdict.message.startswith("Could not be checked (06-1): NumPy was handed a CuPy array"), verdict.message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("w0 = memory.workers[0]\nfraction = w0.managed_bytes / w0.host_memory_limit", "(memory.workers[0])"),
        ("fraction = memory.workers[0].managed_bytes / limits[0]", "reads one worker's numbers"),
        ("fraction = max(w.managed_bytes / w.host_memory_limit for w in memory.workers)", "(max(...) of per-worker ratios)"),
        ("fraction = (x.nbytes / len(limits)) / limits[0]", "(limits[0])"),
    ],
)
def test_review_38_06_2_one_workers_own_share_is_refused(code, said, client):
    """Learner review 38: one worker's share of its own limit, read from the `memory` snapshot of the cells above (x
    held, its chunks split evenly over two equal workers), was "Correct"; so was `(x.nbytes / len(limits)) / limits[0]`."""
    scratch = (
        LIMITS_06
        + "import distributed\nfrom gpu_dask_kit.monitor import snapshot\nx_held = x.persist()\n_ = distributed.wait(x_held)\nmemory = snapshot(session.client, mode='cpu', fresh=True)\n"
    )
    assert_refused("06-2", client, LIMITS_06 + code, said, scratch=scratch)


def test_review_38_06_2_two_halves_are_not_said_to_be_the_workers(client):
    """Learner reviews 36-38: `x[:, :25].nbytes * 2` (two column halves) was told "the number of workers is written out"."""
    code = LIMITS_06 + "fraction = x[:, :25].nbytes * 2 / sum(limits)"
    assert_refused("06-2", client, code, "a number written out in your answer cell (2, a multiplier or divisor) equals the number of workers here")


def test_review_38_06_1_sums_asked_in_float32_are_named_as_such(client):
    """Learner reviews 37-38: `x.sum(axis=0, dtype="float32")` was told the sums were "changed after they came back"."""
    code = 'col_sums = x.sum(axis=0)\ncol_sums_persisted = x.sum(axis=0, dtype="float32").persist()\ncol_sums_local = to_host(col_sums_persisted.compute())'
    assert_refused("06-1", client, code, "your answer cell asks the sum for another dtype", not_said="after they came back")


def test_review_40_06_2_a_worker_count_typed_in_a_range_is_refused(client):
    """Learner review 40: `sum(...workers[i].host_memory_limit for i in range(2))` (2 typed) was "Correct"."""
    code = LIMITS_06 + "fraction = x.nbytes / sum(limits[i] for i in range(2))"
    assert_refused("06-2", client, code, "(range(2) counts them by hand)")


def test_review_40_06_2_limits_in_another_unit_are_not_said_typed_in(client):
    """Learner review 40: `x.nbytes / (sum(limits) / 2**20)` was told "the workers' memory limits are typed in"."""
    assert_refused(
        "06-2", client, LIMITS_06 + "fraction = x.nbytes / (sum(limits) / 2**20)", "divides the limits by 2 ** 20 (another unit)", not_said="typed in"
    )


def test_review_40_06_1_sums_persisted_again_are_not_said_summed_in_the_notebook(client):
    """Learner review 40: `to_host(x.sum(axis=0).persist().compute())` was told NumPy summed x's values here."""
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.sum(axis=0).persist().compute())"
    _, verdict = judged_cell("06-1", client, code)
    assert not verdict.correct and "NumPy summed them on one core" not in verdict.message, verdict.message


def test_review_41_06_1_a_persisted_name_set_to_the_recipe_again_is_not_said_to_have_never_run(client):
    """Learner review 41: `col_sums_persisted = col_sums` after a right answer was told "nothing ran yet" (it ran)."""
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())\ncol_sums_persisted = col_sums"
    assert_refused("06-1", client, code, "or the name was set to the recipe again afterwards", not_said="nothing ran yet")


def test_review_44_06_2_floor_division_is_named(client):
    """Learner review 44: `x.nbytes // sum(limits)` (0 by floor division) was told nothing of x is held on the workers."""
    assert_refused("06-2", client, LIMITS_06 + "fraction = x.nbytes // sum(limits)", "divides with // (floor division)", not_said="nothing of x is held")


def test_review_45_06_2_x_persisted_just_to_read_its_size_is_refused(client):
    """Learner review 45: `x.persist().nbytes / sum(limits)` (every task of x run for a size the lazy x knows) was "Correct"."""
    assert_refused("06-2", client, LIMITS_06 + "fraction = x.persist().nbytes / sum(limits)", "runs x's tasks on the cluster (a persist or compute of x)")


def test_review_48_06_2_limits_typed_in_gb_are_not_said_to_be_the_worker_count(client):
    """Learner reviews 46-48: `x.nbytes / (len(limits) * 2 * 10**9)` (2 GB typed per worker; the notebook's limits are
    2 GiB each) was told the 2 "equals the number of workers"; the unit check names the GB/GiB mix instead. The judge's
    cluster here has 1 GiB workers: the typed-number check is run with the notebook's limits, the judge with these."""
    from gpu_dask_kit.exercises.typed import numbers_read

    numbers_read(LIMITS_06 + "fraction = x.nbytes / (len(limits) * 2 * 10**9)", 80 * 10**6, [2 * 2**30, 2 * 2**30])  # no Hint
    code = LIMITS_06 + "fraction = x.nbytes / (len(limits) * 1 * 10**9)"
    assert_refused("06-2", client, code, "sizes mixed between", not_said="number of workers here")


@pytest.mark.parametrize("spec", [".1f", ".4f"])
def test_review_53_06_2_a_percent_string_without_the_times_100_is_named(spec, client):
    """Learner review 53: `f"{x.nbytes / sum(lim):.1f}%"` ("0.0%") was told "counts none of x, because nothing of x is
    held on the workers"."""
    code = LIMITS_06 + f"fraction = f'{{x.nbytes / sum(limits):{spec}}}%'"
    assert_refused("06-2", client, code, "the fraction written with a '%' sign (and rounded", not_said="held on the workers")


def test_review_54_06_2_a_percent_string_without_a_format_is_not_said_to_be_rounded(client):
    """Learner review 54: `f"{x.nbytes / sum(limits)}%"` was told "(and rounded to the format's digits)"."""
    code = LIMITS_06 + "fraction = f'{x.nbytes / sum(limits)}%'"
    assert_refused("06-2", client, code, "the fraction written with a '%' sign, which makes it", not_said="rounded")


def test_review_57_06_2_a_share_divided_by_the_target_is_named_as_a_share_of_the_spill_threshold(client):
    """Learner review 57: `x.nbytes / (0.6 * sum(limits))` was told "x's share of the limits times the target fraction"
    (the code divides by it)."""
    code = f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / (0.6 * sum(limits))"
    assert_refused("06-2", client, code, "x's share of the spill threshold (the limits times the target fraction", not_said="share of the limits times")
