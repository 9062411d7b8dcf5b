# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 09's exercise judges: 09-1 (``total_future``, the sum submitted on the squares' futures) and 09-2
(``partition_bytes``, a share of the GPU worker's memory), each with answer cells learners wrote in review."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..test_exercises_corpus import _run
from .helpers import assert_refused, assert_rejected, cells_in_shell, judge_answer_with_ns, judged_cell


def test_a_tree_of_sums_is_told_it_adds_partial_sums(client):
    """Review 5, item 15: before, "inputs were not made by square (scattered ...)"."""
    code = "futs = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, [session.client.submit(sum, futs[:5]), session.client.submit(sum, futs[5:])])"
    verdict = judge("09-1", _run(code, "09-1", client))
    assert not verdict.correct and "partial sums" in verdict.message and "scattered" not in verdict.message, verdict.message


def test_09_2_the_examples_tenth_is_told_it_is_the_examples_setting(client):
    ns, verdict = judge_answer_with_ns("09-2", "partition_bytes = int(32 * 2**30 * 0.1)", client)
    assert_rejected("09-2", ns, verdict, "the part_mem_fraction NVTabular's example sets", "smaller than it should be")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("total_future = session.client.submit(lambda fs: {total}, session.client.map(square, range(10)))", "does not add up what it is given"),
        (
            "sq = session.client.map(square, range(10))\ntotal_future = session.client.submit(lambda xs, local: local, sq, sum(i * i for i in range(10)))",
            "a value made in this notebook beside the squares' futures",
        ),
    ],
)
def test_09_1_a_summing_task_that_does_not_sum_its_inputs_is_rejected(code, said, client):
    """Learner review 11: a task that ignores the squares' futures and returns a typed (or notebook-made) sum was Correct."""
    total = sum(i * i for i in range(10))
    ns, verdict = judge_answer_with_ns("09-1", code.replace("{total}", str(total)), client)
    assert_rejected("09-1", ns, verdict, said)


def test_09_1_a_reduce_with_an_operator_is_still_accepted(client):
    code = "import functools, operator\ntotal_future = session.client.submit(functools.reduce, operator.add, session.client.map(square, range(10)), pure=False)"
    _, verdict = judge_answer_with_ns("09-1", code, client)
    assert verdict.correct, verdict.message


SQUARES_MAPPED = "squares = session.client.map(square, range(10), pure=False)\n"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (SQUARES_MAPPED + "total_future = session.client.submit(lambda xs: sum(x for x in xs if x < 81), squares, pure=False)", "the squares are right"),
        (SQUARES_MAPPED + "total_future = session.client.submit(sum, squares, pure=False)\nprint(total_future.result())", "calls total_future.result()"),
    ],
)
def test_review_24_09_1_hints_name_what_the_cell_did(code, said, client):
    assert_refused("09-1", client, code, said)


@pytest.mark.parametrize(
    ("code", "said", "not_said"),
    [
        (
            "import dask\ntotal_future = dask.delayed(sum)([dask.delayed(square)(i) for i in range(10)]).persist()",
            "a persisted Dask object",
            "nothing was submitted",
        ),
        ("sq = session.client.map(square, range(10))\ntotal_future = sq[-1]", "the future of one square", "takes no futures as input"),
    ],
)
def test_review_29_09_1_what_total_future_is_is_named(code, said, not_said, client):
    assert_refused("09-1", client, code, said, not_said=not_said)


def test_review_32_09_1_a_typed_total_in_a_task_is_named_as_a_value_from_this_notebook(client):
    """`submit(lambda: 285)` was told its inputs were "squares that came back here first" (the value was typed)."""
    assert_refused("09-1", client, "total_future = session.client.submit(lambda: 285)", "plain values from this notebook (typed in,")


@pytest.mark.parametrize(
    "code",
    [
        "sq = session.client.map(lambda i: square(i), range(10), pure=False)\ntotal_future = session.client.submit(lambda xs: sum(xs), sq, pure=False)",
        "sq = session.client.map(lambda i: square(i), range(10), pure=False)\ntotal_future = session.client.submit(sum, sq, pure=False)",
    ],
)
def test_review_35_09_1_squares_made_by_a_lambda_are_named_as_such(code, client):
    """Told "that task adds partial sums" (both tasks are named `lambda`) or "not made by square on the cluster"."""
    assert_refused("09-1", client, code, "inputs come from tasks that run a lambda", not_said="partial sums")


@pytest.mark.parametrize("add", ["lambda xs: int(sum(xs))", "lambda xs: int(np.sum(xs))"])
def test_review_36_09_1_a_sum_turned_into_an_int_passes(add, client):
    """`lambda xs: int(sum(xs))` was told the function "does not add up what it is given" (tried on a list with 5.5)."""
    from .helpers import judged_cell

    code = f"sq = session.client.map(square, range(10), pure=False)\ntotal_future = session.client.submit({add}, sq, pure=False)"
    _, verdict = judged_cell("09-1", client, code)
    assert verdict.correct, verdict.message


def test_review_37_09_1_a_number_mapped_twice_is_refused_with_pure_true_too(client):
    """`map(square, [0, ..., 9, 0])` (pure=True: two calls, one key) was Correct; with pure=False it was refused."""
    code = "sq = session.client.map(square, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0])\ntotal_future = session.client.submit(sum, sq)"
    assert_refused("09-1", client, code, "square is started for 11 numbers")


def test_review_36_09_1_futures_added_up_in_the_notebook_are_explained(shell, client):
    """Learner reviews 36-37: `total_future = sum(sq)` raised `TypeError: unsupported operand type(s) for +: 'int' and
    'Future'`, and the check said only "failed when it last ran"."""
    code = "sq = session.client.map(square, range(10))\ntotal_future = sum(sq)"
    verdict = judge("09-1", cells_in_shell(shell, "09-1", client, code))
    assert verdict.message.startswith("Could not be checked (09-1): Python did arithmetic here, in the notebook, on futures"), verdict.message
    assert "client.submit(sum" not in verdict.message, verdict.message


def test_review_42_09_1_futures_handed_twice_and_one_number_mapped_ten_times_are_named(client):
    """Learner review 42: the squares' futures handed over twice (`map(...) * 2`) were told to check the function;
    `map(square, [3] * 10)` was told "the sum adds 1 squares"."""
    code = "total_future = session.client.submit(sum, session.client.map(square, range(10), pure=False) * 2, pure=False)"
    assert_refused("09-1", client, code, "a list of futures repeated or joined, so it adds some squares more than once")
    code = "squares = session.client.map(square, [3] * 10)\ntotal_future = session.client.submit(sum, squares, pure=False)"
    assert_refused("09-1", client, code, "square is started for 10 numbers, only 1 of them distinct", not_said="1 squares")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        # a 0 written out beside the futures (same sum): was "Correct"
        ("total_future = session.client.submit(sum, session.client.map(square, range(10)) + [0])", "the squares' futures joined with something else"),
        # a dask.bag summed and computed: was told its inputs were not made by square
        (
            "import dask.bag as db\ntotal_future = session.client.compute(db.from_sequence(range(10)).map(square).sum())",
            "a Dask collection (from_sequence(...), computed at once)",
        ),
    ],
)
def test_review_43_09_1_a_value_joined_to_the_futures_and_a_bag_are_named(code, said, client):
    """Learner review 43: 09-1 answers refused for what they are."""
    assert_refused("09-1", client, code, said, not_said="not made by square")


def test_review_44_09_1_futures_times_one_pass_and_a_range_without_0_is_named(client):
    """Learner review 44: `map(...) * 1` was refused as joined with something else; `range(1, 10)` was told "only 9 of
    them distinct"."""
    _, verdict = judged_cell("09-1", client, "total_future = session.client.submit(sum, session.client.map(square, range(10), pure=False) * 1, pure=False)")
    assert verdict.correct, verdict.message
    code = "squares = session.client.map(square, range(1, 10))\ntotal_future = session.client.submit(sum, squares, pure=False)"
    assert_refused("09-1", client, code, "numbers of another range, not for those of range(10) (0, 1, ..., 9;", not_said="distinct")


def test_review_45_09_1_the_futures_cut_in_two_and_joined_in_order_pass(client):
    """Learner review 45: `submit(sum, sq[:5] + sq[5:])` (each future once, in order) was refused as joined with something else."""
    code = "sq = session.client.map(square, range(10), pure=False)\ntotal_future = session.client.submit(sum, sq[:5] + sq[5:], pure=False)"
    _, verdict = judged_cell("09-1", client, code)
    assert verdict.correct, verdict.message


def test_review_50_09_1_the_sum_typed_in_an_else_is_refused(client):
    """Learner review 50: `submit(sum, sq) if len(sq) == 10 else submit(int, <the sum>)` was "Correct" (the branch that
    ran is right; the typed answer sits in the other)."""
    total = sum(i * i for i in range(10))
    code = (
        f"sq = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, sq) if len(sq) == 10 else session.client.submit(int, {total})"
    )
    assert_refused("09-1", client, code, "the answer itself is written out in your answer cell (typed, even where that part does not run")


@pytest.mark.parametrize("size", ["4Gib", "4gib", "4096Mib"])
def test_review_50_09_2_a_unit_in_bits_is_refused(size, client):
    """Learner review 50: "4Gib" was "Correct" (Dask reads size strings without regard to case; Gib is gibibits)."""
    assert_refused("09-2", client, f"partition_bytes = {size!r}", "unit ends in a lowercase b, which stands for bits")


def test_review_53_09_1_the_futures_handed_once_in_another_order_pass(client):
    """Learner review 53: `submit(sum, sq[::2] + sq[1::2])` (each future once, reordered) was refused as "joined with
    something else" while `sq[::-1]` passed; `sq[::2] + sq[::2]` stays refused."""
    code = "sq = session.client.map(square, range(10), pure=False)\ntotal_future = session.client.submit(sum, sq[::2] + sq[1::2], pure=False)"
    _, verdict = judged_cell("09-1", client, code)
    assert verdict.correct, verdict.message
    code = "sq = session.client.map(square, range(10), pure=False)\ntotal_future = session.client.submit(sum, sq[::2] + sq[::2], pure=False)"
    assert_refused("09-1", client, code, "the sum adds 5 squares")


def test_review_54_09_1_a_list_of_partial_sums_is_not_called_one_future_per_number(client):
    """Learner review 54: `[submit(sum, sq[:5]), submit(sum, sq[5:])]` was told "a list of 2 futures, one per number"."""
    code = "sq = session.client.map(square, range(10))\ntotal_future = [session.client.submit(sum, sq[:5]), session.client.submit(sum, sq[5:])]"
    assert_refused("09-1", client, code, "total_future is a list of 2 futures: ", not_said="one per number")


def test_review_55_09_2_4096MB_is_said_to_count_in_MiB_not_to_start_from_MiB(client):
    """Learner review 55: "4096MB" for 4 GiB was told "the size you started from is in binary units (MiB)"; the question
    gives GiB, and 4096 is that size counted in MiB."""
    assert_refused("09-2", client, 'partition_bytes = "4096MB"', "your number counts the size in binary units (MiB", not_said="the size you started from")
