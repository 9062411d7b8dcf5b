"""Learner review 4 (notebooks 03 and 06): each hint says what the answer cell did, and data that is gone is not a closed cluster."""

from __future__ import annotations

import pytest
from distributed import Client, LocalCluster, wait
from IPython.core.inputtransformer2 import TransformerManager

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import LIMITS
from tests.test_exercises_corpus import _run, corpus_client  # noqa: F401  (the `client` fixture, used here)

SUMS = "col_sums = x.sum(axis=0)\n"

REVIEW4_DIAGNOSES = [
    # 03-1: a shuffle then a per-partition max ran on the workers: not "in this notebook"
    ("03-1", "max_y_by_name = ddf.shuffle('name').map_partitions(lambda d: d.groupby('name').y.max()).compute()", "the workers made", "in this notebook"),
    ("03-1", 'max_y_by_name = ddf.sort_values("y").groupby("name").y.last().compute()', "sorted every row", "in this notebook"),
    (
        "03-2",
        "import dask.dataframe as dd\nddf_fast = dd.from_pandas(ddf.compute(), npartitions=ddf.npartitions).persist()\n"
        "mean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "went through this notebook",
        "other data",
    ),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()\nsession.client.cancel(ddf_fast)",
        "cancelled or lost",
        "closed",
    ),
    # 06-1 is about an array: no "frame" or "partitions" in the Future hint
    ("06-1", SUMS + "col_sums_persisted = session.client.compute(col_sums)\ncol_sums_local = to_host(col_sums.compute())", "is a Future", "frame as one"),
    ("06-1", SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = None", "assigned None", "NoneType"),
    ("06-1", SUMS + "col_sums_persisted = None\ncol_sums_local = to_host(col_sums.compute())", "assigned None", "came back to this notebook"),
    ("06-2", "fraction = x.nbytes / (4 * 10**9)", "10**9 bytes", "that is not it"),
    ("06-2", f"fraction = x.nbytes / (0.6 * sum(w['memory_limit'] for w in {LIMITS}))", "target fraction", "that is not it"),
    ("06-2", f"fraction = x.compute().nbytes / sum(w['memory_limit'] for w in {LIMITS})", "computed x", "typed"),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), REVIEW4_DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in REVIEW4_DIAGNOSES])
def test_review4_hint_names_what_the_answer_did(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert verdict.answered and not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


@pytest.mark.parametrize("magic", ["%%time\n", "%time "])
def test_an_answer_cell_timed_with_a_magic_is_judged_by_its_code(magic, client):
    """Review 4 (03-1): a right answer in a %%time cell was called "typed" (IPython's In holds it as a magic call)."""
    code = "max_y_by_name = ddf.groupby('name').y.max().compute()"
    ns = _run(code, "03-1", client)
    ns["In"] = ["", "max_y_by_name = ...", TransformerManager().transform_cell(magic + code + "\n"), 'exercises.check("03-1", globals())']
    verdict = judge("03-1", ns)
    assert verdict.correct and "typed" not in verdict.message, verdict.message


def test_a_value_made_outside_the_answer_cell_is_not_called_typed(client):
    """The latest cell assigning the name is the unanswered one (`...`): the check says it cannot find the cell, not "typed"."""
    ns = _run("max_y_by_name = ddf.groupby('name').y.max().compute()", "03-1", client)
    ns["In"] = ["", "max_y_by_name = ...", 'exercises.check("03-1", globals())']
    verdict = judge("03-1", ns)
    assert not verdict.correct and "unanswered cell" in verdict.message and "typed" not in verdict.message, verdict.message


def test_an_answer_made_on_a_cluster_closed_since_is_not_called_a_closed_cluster(client):
    """Review 4 (03 cell 30): after a new cluster was started the check said "the cluster is closed: re-run the set-up"."""
    ns = _run("", "03-2", client)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as other, Client(other, set_as_default=False) as old:
        ns["ddf_fast"] = old.persist(ns["ddf"])
        wait(ns["ddf_fast"])
    ns["mean_x_by_name"] = ns["ddf"].groupby("name").x.mean().compute()
    verdict = judge("03-2", ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "closed since your answer cell ran" in verdict.message and "set-up cell" not in verdict.message, verdict.message


def test_right_answers_of_06_1_from_a_lazy_x_pass(client):
    """In notebook 06, x is lazy: Dask fuses making x's chunks into the sum (random-sum-...), and that still counts as from x."""
    from gpu_dask_kit.compute import random_array

    ns = _run("", "06-1", client)
    ns["x"] = random_array((40_000, 10), chunks=(10_000, 10), seed=6)
    exec(compile(SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())", "<answer>", "exec"), ns)
    ns["In"] = ["", SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())"]
    verdict = judge("06-1", ns)
    assert verdict.correct, verdict.message
