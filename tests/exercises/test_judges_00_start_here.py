# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 00's exercise judges: 00-1 (``total``, the sum of squares built from ``a``) and 00-2 (``cluster_memory``,
read from the cluster), each with answer cells learners wrote in review."""

from __future__ import annotations

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import LIMITS, RIGHT
from ..test_exercises_corpus import _run
from .helpers import assert_refused, judged, judged_cell, not_yet, run_without


def test_a_timed_answer_cell_that_does_not_parse_is_never_correct(client):
    right = RIGHT["00-1"][0]
    ns = _run(right, "00-1", client)
    ns["In"] = ["", right, TransformerManager().transform_cell("%%time\ntotal = (a**2).sum(\n"), 'exercises.check("00-1", globals())']
    verdict = judge("00-1", ns)
    assert not verdict.correct and "SyntaxError" in verdict.message, verdict.message


def test_a_parsable_answer_cell_after_a_broken_one_is_judged(client):
    right = RIGHT["00-1"][0]
    ns = _run(right, "00-1", client)
    ns["In"] = ["", "total = (a**2).sum(", right, 'exercises.check("00-1", globals())']
    assert judge("00-1", ns).correct, judge("00-1", ns).message


# Review 5, item 3: right lazy answers of 00-1 whose task names change on every run (a function or lambda made in the cell).
LAZY_FROM_A = [
    "import numpy as np\ndef block_sum(b):\n    return np.array([b.sum()])\n\na = da.arange(N, chunks=N // 10)\ntotal = (a**2).map_blocks(block_sum, chunks=(1,)).sum()",
    "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).map_blocks(lambda b: np.array([b.sum()]), chunks=(1,)).sum()",
    "a = da.arange(N, chunks=N // 10)\ntotal = da.reduction(a, lambda x, axis, keepdims: (x**2).sum(axis=axis, keepdims=keepdims), lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims), dtype=a.dtype)",
]


@pytest.mark.parametrize("code", LAZY_FROM_A)
def test_00_1_lazy_answers_with_functions_made_in_the_cell_are_not_called_stale(code, client):
    verdict = judge("00-1", _run(code, "00-1", client))
    assert "left from an earlier run" not in verdict.message, verdict.message
    assert verdict.correct, verdict.message


@pytest.mark.parametrize("pure", ["", ", pure=True"])
def test_00_1_a_delayed_sum_of_python_squares_is_not_built_from_a(pure, client):
    code = f"a = da.arange(N, chunks=N // 10)\ntotal = dask.delayed(sum{pure})([i*i for i in range(N)])"
    verdict = judge("00-1", _run(code, "00-1", client))
    assert not verdict.correct and "not built from a" in verdict.message, verdict.message


def test_a_kernel_with_no_cluster_is_told_none_was_started(monkeypatch):
    """Review 5, item 5: a kernel with no cluster is not "closed"."""
    from gpu_dask_kit.exercises import stale

    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(stale, "get_client", no_client)
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()"
    ns = {"a": 1, "total": 2, "In": ["", "import gpu_dask_kit as kit\nsession = kit.start_cluster()", code, 'exercises.check("00-1", globals())']}
    verdict = judge("00-1", ns)
    assert "no cluster was started yet" in verdict.message and "closed" not in verdict.message and "In [1]" in verdict.message, verdict.message


def test_00_1_a_total_that_merges_as_chunks_is_not_accepted(client):
    """Review 6, item 5: `(a.rechunk(N)**2).sum()` was "Correct" (built from a, but the work ran as one task)."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a.rechunk(N) ** 2).sum()"
    verdict = judge("00-1", run_without(code, "00-1", client))
    assert verdict.answered and not verdict.correct and "rechunk" in verdict.message, verdict.message


def test_00_1_a_delayed_sum_of_a_python_list_is_told_it_is_not_built_from_a(client):
    """Review 6, item 6: before, "left from an earlier run" (comparing its one-task graph with the re-run's timed out)."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = dask.delayed(sum)([i ** 2 for i in range(N)])"
    verdict = judge("00-1", run_without(code, "00-1", client))
    assert not verdict.correct and "not built from a" in verdict.message and "earlier run" not in verdict.message, verdict.message


# Review 7, item 5: 00-2 asks to read each worker's limit from the cluster (as 06-2 does): a size typed in is not accepted.
# (The corpus' cluster: two workers of 1 GiB; the reviewer's cells, on notebook 00's 2 x 2 GiB, scaled to it.)
TYPED_00_2 = [
    ("cluster_memory = '2GiB'", "a memory size is written out"),
    ("cluster_memory = 2 * 1 * 2**30", "a memory size is written out"),
    (f"cluster_memory = len(list({LIMITS})) * 1 * 1024**3", "a memory size is written out"),
    (f"cluster_memory = len(list({LIMITS})) * 2**30", "a memory size is written out"),
    (
        "from dask.utils import parse_bytes\nCPU_CLUSTER = {{'n_workers': 2, 'memory_limit': '1GiB'}}\ncluster_memory = CPU_CLUSTER['n_workers'] * parse_bytes(CPU_CLUSTER['memory_limit'])",
        "cluster request",
    ),
    (f"cluster_memory = next(iter({LIMITS}))['memory_limit'] * 2", "equals the number of workers here"),
]


@pytest.mark.parametrize(("code", "said"), TYPED_00_2)
def test_00_2_a_typed_size_or_worker_count_is_not_accepted(code, said, client):
    """Before: each was "Correct"."""
    verdict = judged("00-2", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message


READ_00_2 = [
    f"cluster_memory = f\"{{{{sum(w['memory_limit'] for w in {LIMITS}) / 2**30:.0f}}}} GiB\"",
    f"cluster_memory = str(sum(w['memory_limit'] for w in {LIMITS}) // 2**20) + 'MiB'",
]


@pytest.mark.parametrize("code", READ_00_2)
def test_00_2_a_sum_read_from_the_cluster_in_another_unit_is_accepted(code, client):
    verdict = judged("00-2", client, code)
    assert verdict.correct, verdict.message


# Review 8: a size typed in, spelled as a string; one limit times the worker count.
SPELLED = [
    "cluster_memory = f'{{2*2}}GiB'",
    "cluster_memory = str(2 + 2) + 'GiB'",
    "cluster_memory = '{{}}GiB'.format(2 * 2)",
    "cluster_memory = '%dGiB' % 4",
]


@pytest.mark.parametrize("code", SPELLED)
def test_00_2_a_size_spelled_from_numbers_written_out_is_typed(code, client):
    not_yet("00-2", client, code, "spelled as a string")


def test_00_2_one_limit_times_the_worker_count_is_not_the_sum(client):
    code = "limit = min(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())\ncluster_memory = limit * len(session.client.scheduler_info(n_workers=-1)['workers'])"
    not_yet("00-2", client, code, "multiplies ONE worker's limit")


def test_00_2_the_machines_memory_counted_per_worker_is_named(client):
    """Learner review 11: the machine's memory summed over the workers was only "larger than it should be"."""
    from .helpers import judged

    if len(client.scheduler_info(n_workers=-1)["workers"]) < 2:
        pytest.skip("needs a cluster of 2 workers or more")
    code = "import psutil\ncluster_memory = sum(session.client.run(lambda: psutil.virtual_memory().total).values())"
    verdict = judged("00-2", client, code)
    assert not verdict.correct and "counted once per worker (as if each worker could use all of it)" in verdict.message, verdict.message


def test_00_2_a_typed_worker_count_in_a_factor_of_one_is_rejected(client):
    """Learner review 12: `sum(...) * (len(info) // 2)` (a typed worker count hidden in a factor of 1) was Correct."""
    from .helpers import judged

    n = len(client.scheduler_info(n_workers=-1)["workers"])
    code = f"info = session.client.scheduler_info(n_workers=-1)['workers']\ncluster_memory = sum(w['memory_limit'] for w in info.values()) * (len(info) // {n})"
    verdict = judged("00-2", client, code.replace("{", "{{").replace("}", "}}"))
    assert not verdict.correct and "a factor that is 1 here" in verdict.message, verdict.message


@pytest.mark.parametrize("total", ["(a**2).sum(dtype=float)", "da.sum(a * a, dtype='float64')"])
def test_00_1_a_float_sum_is_not_exact_like_a_float_a(total, client):
    """Learner review 13: a float a was refused ("floats cannot add up this sum exactly") but a float sum of the
    integer a was Correct."""
    from .helpers import judged

    verdict = judged("00-1", client, f"a = da.arange(N, chunks=N // 10)\ntotal = {total}")
    assert not verdict.correct and "float sum is not exact" in verdict.message, verdict.message


def test_00_1_a_closed_form_that_also_scales_by_four_is_refused(client):
    """Learner review 23: sum(a) * (2 max(a) + a[1]) // 3 quadruples when a is doubled, as a sum of squares does; with
    every number one larger it is not the sum of their squares."""
    assert_refused("00-1", client, "a = da.arange(N, chunks=N // 10)\ntotal = a.sum() * (2 * a.max() + a[1]) // 3", "then with every number one larger")


def test_00_1_a_term_emptied_to_zero_beside_the_sum_of_squares_is_called_padding(client):
    """Learner review 23: `+ a[:0].sum()` was told the value was "worked out in this notebook"."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum() + a[:0].sum()"
    assert_refused("00-1", client, code, "the rest of the expression computes on the workers", not_said="worked out in this notebook")


def test_00_2_the_schedulers_own_total_passes(client):
    _, verdict = judged_cell("00-2", client, 'cluster_memory = session.client.scheduler_info()["total_memory"]')
    assert verdict.correct, verdict.message


def test_00_1_a_zeroed_part_beside_the_workers_computation_is_named_as_padding(client):
    """Learner reviews 25-26: `+ 0 * a.sum() + 1 - 1` was told the value is "worked out in this notebook" (it comes
    from the workers' part)."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum() + 0 * a.sum() + 1 - 1"
    assert_refused("00-1", client, code, "the rest of the expression computes on the workers", not_said="worked out in this notebook")


def test_00_1_a_delayed_total_is_named_as_one(client):
    """Learner review 29: a Delayed total made the check itself fail ("could not be checked (TypeError: Truth of
    Delayed objects is not supported)")."""
    code = "import dask\na = da.arange(N, chunks=N // 10)\ntotal = dask.delayed(lambda v: (v ** 2).sum())(a)"
    assert_refused("00-1", client, code, "Delayed", not_said="could not be checked")


def test_00_2_a_zeroed_term_added_to_the_sum_is_not_called_one_limit_times_the_workers(client):
    code = 'ws = session.client.scheduler_info(n_workers=-1)["workers"]\ncluster_memory = sum(w["memory_limit"] for w in ws.values())\ncluster_memory += 0 * len(ws)'
    assert_refused("00-2", client, code, "by 0", not_said="ONE worker's limit")


@pytest.mark.parametrize(
    "mean",
    ["import statistics\ncluster_memory = statistics.mean(limits) * len(limits)", "import numpy as np\ncluster_memory = len(limits) * np.mean(limits)"],
)
def test_00_2_the_mean_limit_times_the_number_of_workers_passes(mean, client):
    """Learner reviews 25-26: the mean of the limits times their number (their sum, equal limits or not) was refused as
    "multiplies ONE worker's limit by the number of workers"."""
    code = 'limits = [w["memory_limit"] for w in session.client.scheduler_info(n_workers=-1)["workers"].values()]\n' + mean
    _, verdict = judged_cell("00-2", client, code)
    assert verdict.correct, verdict.message


def test_00_2_one_limit_times_the_number_of_workers_is_still_refused(client):
    code = 'ws = list(session.client.scheduler_info(n_workers=-1)["workers"].values())\ncluster_memory = ws[0]["memory_limit"] * len(ws)'
    assert_refused("00-2", client, code, "multiplies ONE worker's limit")


def test_00_2_the_largest_plus_the_smallest_limit_is_refused(client):
    """Learner reviews 22-23: with two workers, max + min is their sum; the re-run reports three unequal limits."""
    code = 'ws = session.client.scheduler_info(n_workers=-1)["workers"].values()\ncluster_memory = max(w["memory_limit"] for w in ws) + min(w["memory_limit"] for w in ws)'
    assert_refused("00-2", client, code, "three workers with unequal limits, and it did not give their sum")


def test_review_30_00_2_the_sum_times_the_workers_is_named(client):
    code = 'ws = session.client.scheduler_info(n_workers=-1)["workers"]\ncluster_memory = sum(w["memory_limit"] for w in ws.values()) * len(ws)'
    assert_refused("00-2", client, code, "multiplies a sum by the number of workers", not_said="ONE worker's limit")


def test_review_30_00_2_the_workers_dict_is_named(client):
    assert_refused("00-2", client, 'cluster_memory = session.client.scheduler_info(n_workers=-1)["workers"]', "dict", not_said="changes from one run")


def test_review_30_00_1_a_holding_the_squares_is_named(client):
    assert_refused("00-1", client, "a = da.arange(N, chunks=N // 10) ** 2\ntotal = a.sum()", "a holds the squares already", not_said="Square every element")


def test_review_33_00_1_to_delayed_is_named_as_delayed_pieces_not_as_computed(client):
    assert_refused(
        "00-1", client, "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum().to_delayed()", "a NumPy array of Delayed objects", "already computed"
    )


def test_review_39_00_2_a_typed_worker_count_speaks_of_no_x(client):
    """Learner review 39: `lims[0] * 2` in 00-2 was told about "x has this shape" and "x's own size" (00-2 has no x)."""
    code = f"lims = [w['memory_limit'] for w in {LIMITS}]\ncluster_memory = lims[0] * 2"
    assert_refused("00-2", client, code, "equals the number of workers here", not_said="x's own size")


def test_review_41_00_1_n_set_in_the_answer_cell_is_refused(client):
    """Learner review 41: `N = 1000` in the answer cell, then a and total of that N, was "Correct" (the check read the N
    the answer cell had just set)."""
    code = "N = 1000\na = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()"
    assert_refused("00-1", client, code, "your answer cell sets N itself (`N = 1000`)")


def test_review_42_00_1_the_lessons_n_written_again_passes_and_a_handed_whole_to_delayed_is_named(client):
    """Learner review 42: `N = 1_000_000` (the lesson's own N) written again in a right answer was refused; a handed
    whole to a delayed function was told "does not behave as a sum of squares" (it is one, made in one task)."""
    from gpu_dask_kit.exercises import judge

    from ..test_exercises_corpus import namespace
    from .helpers import answer

    code = "N = 1_000_000\na = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()"
    ns = answer(namespace("00-1", client), "00-1", code)
    ns["In"] = ["", "N = 1_000_000   # length of the array in the exercise", code, 'exercises.check("00-1", globals())']
    verdict = judge("00-1", ns)
    assert verdict.correct, verdict.message
    code = "a = da.arange(N, chunks=N // 10)\ntotal = da.from_delayed(dask.delayed(lambda v: (v ** 2).sum())(a), shape=(), dtype='int64')"
    assert_refused("00-1", client, code, "total hands a whole to another call", not_said="does not behave as a sum of squares")


def test_review_43_00_a_worker_count_tested_in_a_product_and_terms_that_cancel_are_worded(client):
    """Learner review 43: `sum(...) * (session.n_workers == 2)` (a worker count written out) was "Correct"; `(a ** 2).sum()
    + a.sum() - a.sum()` was said to be "worked out in this notebook" (the rest is the Dask sum of squares)."""
    code = 'cluster_memory = sum(w["memory_limit"] for w in session.client.scheduler_info(n_workers=-1)["workers"].values()) * (session.n_workers == 2)'
    scratch = "session.n_workers = 2  # as the kit's session has it"
    assert_refused("00-2", client, code, "multiplies by a test with a number written out (session.n_workers == 2", scratch=scratch)
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum() + a.sum() - a.sum()"
    assert_refused("00-1", client, code, "subtracts it again", not_said="worked out in this notebook")
    guarded = 'cluster_memory = sum(w["memory_limit"] for w in session.client.scheduler_info(n_workers=-1)["workers"].values()) * (session.n_workers > 1)'
    assert_refused("00-2", client, guarded, "multiplies by a test with a number written out (session.n_workers > 1", scratch=scratch)  # (review 44)


def test_review_44_00_1_a_zeroed_part_that_is_no_dask_part_is_not_called_the_dask_part(client):
    """Learner review 44: `(a ** 2).sum() + 0 * N` was told "the Dask part of your answer contributes nothing"."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum() + 0 * N"
    assert_refused("00-1", client, code, "multiplies part of the expression by 0", not_said="the Dask part of your answer contributes nothing")


def test_review_51_00_1_a_comprehension_variable_is_not_named_as_the_data_the_rest_computes_from(client):
    """Learner review 51: `(a ** 2).sum() * 0 + sum(x * x for x in range(N))` was told the rest "computes from `x`" (the
    loop variable, not a Dask array of the notebook)."""
    code = "a = da.arange(N, chunks=N // 10)\nx = a\ntotal = (a ** 2).sum() * 0 + sum(x * x for x in range(N))"
    assert_refused("00-1", client, code, "worked out in this notebook", not_said="computes from `x`")
    # (learner review 52: then told "the rest of the expression computes on the workers": the same loop variable)
    assert_refused("00-1", client, code, "multiplies part of the expression by 0", not_said="computes on the workers")


@pytest.mark.parametrize(("dtype", "limit"), [("float32", "2**24"), ("float64", "2**53")])
def test_review_53_00_1_a_float_sum_names_the_limit_of_its_own_float_type(dtype, limit, client):
    """Learner review 53: a float32 sum was told "far above 2**53" (float64's limit; float32's is 2**24)."""
    code = f"a = da.arange(N, chunks=N // 10)\ntotal = (a.astype('{dtype}') ** 2).sum()"
    assert_refused("00-1", client, code, f"is far above {limit}, where {dtype} cannot hold every integer")


def test_review_55_00_2_the_total_divided_by_1e9_then_labelled_GiB_is_named(client):
    """Learner review 55: `f"{tot / 1e9}GiB"` was told "larger than it should be ... add them up" (the learner had)."""
    code = 'workers = session.client.scheduler_info(n_workers=-1)["workers"]\ntot = sum(w["memory_limit"] for w in workers.values())\ncluster_memory = f"{tot / 1e9}GiB"'
    assert_refused("00-2", client, code, "the number is the size counted in decimal GB (divided by 1e9", not_said="larger than it should be")


def test_review_57_00_1_a_slice_of_a_is_named(client):
    """Learner reviews 55 and 57: `(a[:-1] ** 2).sum()` was told about formulas and 64-bit overflow."""
    assert_refused("00-1", client, "a = da.arange(N, chunks=N // 10)\ntotal = (a[:-1] ** 2).sum()", "your answer cell uses a[:-1], a part of a")
