"""Learner review 7b (notebooks 05-09): each false accept / false reject the reviewer found, with the reviewer's answer
cell, run in the corpus' notebook-like namespace on its in-process cluster (see tests/test_exercises_corpus.py)."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import RIGHT
from tests.test_exercises_corpus import corpus_client, namespace  # noqa: F401  (the `client` fixture, used here)


def _ns(key, client):
    """The corpus namespace, as the notebooks have it: 06's x lazy; 07's raw Parquet (names as text) and cell 20's table."""
    ns = namespace(key, client)
    if key.startswith("06"):  # as notebook 06: x is lazy (x_persisted is another name)
        ns["x"] = ns["da"].random.default_rng(6).random((250_000, 10), chunks=(62_500, 10))
    if key.startswith("07"):
        raw = os.path.join(os.path.dirname(ns["PROCESSED"]), "raw")
        if not os.path.exists(raw):
            ns["raw"].to_parquet(raw, write_index=False)
        medians = ns["medians"] = {1: 3.13472, 2: 1.92618}  # unrounded, as statistics.median of measured times
        n_max = max(medians)
        speed_ups = {n: medians[1] / t for n, t in medians.items()}
        ours = pd.DataFrame({"workers": list(medians), "median s": [round(t, 2) for t in medians.values()]})
        ours["speed-up"] = [round(speed_ups[n], 2) for n in medians]
        ns.update(os=os, RAW=raw, WORKDIR=os.path.dirname(ns["PROCESSED"]), N_MAX=n_max, speed_ups=speed_ups, ours=ours)
    return ns


def _judge(key, code, client, ns=None):
    ns = ns if ns is not None else _ns(key, client)
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return judge(key, ns)


# items 2-4: false accepts (06-1, 07-1) and borderline accepts (07-2), each with what the hint must say happened
WRONG = [
    (
        "06-1",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute(scheduler='threads'))",
        "this notebook's threads",
    ),
    (
        "06-1",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute(scheduler='sync'))",
        "this notebook's threads",
    ),
    ("07-1", 'rows_per_name = dd.read_parquet(RAW).name.map(lookups["name"]).value_counts().compute()', "the raw input"),
    ("07-1", 'frame = dd.read_parquet(RAW)\nrows_per_name = frame.name.map(lookups["name"]).value_counts().compute()', "the raw input"),
    ("07-1", 'rows_per_name = raw.name.map(lookups["name"]).value_counts().compute()', "did not read the processed Parquet"),
    ("07-2", "speed_up = max(medians.values()) / min(medians.values())", "slowest"),
    ("07-2", 'speed_up = ours["median s"].iloc[0] / ours["median s"].iloc[-1]', "rounded"),
]


@pytest.mark.parametrize(("key", "code", "said"), WRONG)
def test_review_7b_wrong_answers_are_rejected_saying_what_happened(key, code, said, client):
    verdict = _judge(key, code, client)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message


# 06-1's right answers with x lazy (as in the notebook); 07-1 read back in three styles; item 4: 07-2 from cell 20's results
RIGHT_7B = [
    *[("06-1", code) for code in RIGHT["06-1"]],
    ("07-1", "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()"),
    ("07-1", "out = dd.read_parquet(PROCESSED)\nrows_per_name = out.name.value_counts().compute()"),
    ("07-1", "rows_per_name = dd.read_parquet(os.path.join(WORKDIR, 'processed')).name.value_counts().compute()"),
    ("07-2", "speed_up = speed_ups[N_MAX]"),
    ("07-2", 'speed_up = ours["speed-up"].iloc[-1]'),
    ("07-2", "speed_up = speed_ups[max(speed_ups)]"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_7B)
def test_review_7b_right_answers_are_accepted(key, code, client):
    verdict = _judge(key, code, client)
    assert verdict.correct, verdict.message
