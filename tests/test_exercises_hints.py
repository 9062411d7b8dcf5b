"""The review's wrong diagnoses, each now named right: the hint says what the answer did, not another mistake."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import FITS
from tests.test_exercises_corpus import _run, corpus_client  # noqa: F401  (the `client` fixture, used here)

DIAGNOSES = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum().persist()", "total is persisted", "not built from a"),
    ("00-1", "a = da.arange(N, chunks=10)\ntotal = (a ** 2).sum()", "about 100 MB", "10-100 MB"),
    ("01-1", "workshop_options = kit.ClusterOptions(rmm_pool_size=0.6, rmm_async=False, dashboard_address=':0')", "rmm_pool_size", "device_memory_limit"),
    ("02-2", "spill_threshold = '360MB'", "powers of 1000", "GiB = 2**30"),
    ("03-1", "max_y_by_name = ddf.map_partitions(lambda d: d.groupby('name').y.max()).compute()", "never combined", "Group by the name column"),
    ("04-1", "def demean(df):\n    return df.x - df.x.mean()\n\ndemeaned = ddf.map_partitions(demean)", "it returned a Series", "returned none"),
    ("05-2", FITS + "x0_results = dask.compute(*lazy_fits[:2]) + dask.compute(*lazy_fits[2:])", "2 separate submissions", "one .compute() after"),
    ("07-1", "rows_per_name = processed.groupby('x').size().compute()", "grouped by another column", "raw input"),
    ("09-1", "total_future = session.client.map(square, range(10))", "list of 10 futures", "here in the notebook"),
    ("09-1", "total_future = session.client.submit(lambda n: sum(square(i) for i in range(n)), 10)", "inside one function", "came back first"),
    ("09-2", "partition_bytes = '4GB'", "powers of 1000", "in GiB"),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in DIAGNOSES])
def test_the_hint_names_what_the_answer_did(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


def test_a_typed_value_where_the_value_is_the_idea_is_not_called_evidence(client):
    """00-2 accepts a typed size (the value is the idea) but its Correct text claims nothing it did not see."""
    verdict = judge("00-2", _run("cluster_memory = '2GiB'", "00-2", client))
    assert verdict.correct and "read from the scheduler" not in verdict.message, verdict.message


def test_a_pair_of_x0_with_itself_that_broke_the_answer_cell_gets_a_hint(client):
    """In the notebook the answer cell raises (a DuplicateError) and x0_results stays ...: the check says why."""
    ns = _run("lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features]\nx0_results = ...", "05-2", client)
    verdict = judge("05-2", ns)
    assert verdict.answered and not verdict.correct and "pairs x0 with itself" in verdict.message, verdict.message
    assert "compute(*" not in verdict.message
