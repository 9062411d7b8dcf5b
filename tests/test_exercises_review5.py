# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 5: each false accept / false reject the reviewer found, with the reviewer's exact answer cell."""

from __future__ import annotations

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import FITS, FITS1, INPLACE, LIMITS, RIGHT
from tests.test_exercises_corpus import _run, corpus_client  # noqa: F401  (the `client` fixture, used here)

# Review 5, item 1: a right answer, then the answer cell edited so that it does not parse: the old value stays.
UNPARSABLE = [
    ("00-1", "total = (a**2).sum("),
    ("00-2", f"cluster_memory = sum(w['memory_limit'] for w in {LIMITS}"),
    ("01-1", "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=\":0\""),
    ("02-1", "rank10_error = float(np.linalg.norm(x.compute() - approx.compute()) / np.linalg.norm(x.compute())"),
    ("04-1", INPLACE + "demeaned = ddf.map_partitions(demean"),
    ("04-2", "rows_in_partition_2 = len(ddf.compute().partitions[2]"),
    ("05-1", FITS1 + "best_single_feature = max([f.compute() for f in single_fits], key=lambda r: r[3])[0][0"),
    ("05-2", FITS + "x0_results = [dask.compute(fit)[0] for fit in lazy_fits"),
]


@pytest.mark.parametrize(("key", "broken"), UNPARSABLE, ids=[k for k, _ in UNPARSABLE])
def test_an_answer_cell_that_does_not_parse_is_never_correct(key, broken, client):
    """Before: "Correct" (the check found the earlier, parsable cell and judged the old value)."""
    right = RIGHT[key][-1] if key != "00-1" else RIGHT[key][0]
    ns = _run(right, key, client)
    assert judge(key, ns).correct, judge(key, ns).message
    ns["In"] = ["", right, f'exercises.check("{key}", globals())', broken, f'exercises.check("{key}", globals())']
    verdict = judge(key, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "SyntaxError" in verdict.message and "does not run" in verdict.message, verdict.message


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
