# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 7 (notebooks 00-04): each false accept the reviewer found, with the reviewer's answer cell.

The expected numbers are worked out from the corpus' namespace (never typed here), then written into the answer cell
the way the reviewer typed them.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import RIGHT
from tests.test_exercises_corpus import corpus_client, namespace  # noqa: F401  (the `client` fixture, used here)


def _judged(key, client, code, **extra):
    """The verdict on ``code`` run as the answer cell of ``key`` (``{rows}`` etc. filled from the namespace first)."""
    ns = namespace(key, client)
    ns.update(extra)
    values = {
        "total": (ns["N"] - 1) * ns["N"] * (2 * ns["N"] - 1) // 6 if "N" in ns else None,
        "rows": len(ns["ddf"].partitions[2]) if key.startswith("04") else None,
        "error": float(np.sqrt((ns["s_host"][10:] ** 2).sum() / (ns["s_host"] ** 2).sum())) if "s_host" in ns else None,
    }
    code = code.format(**values)
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return judge(key, ns)


# Item 1: the answer typed in, behind a Dask expression times zero.
HIDDEN = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + {total}"),
    ("02-1", "rank10_error = float((da.linalg.norm(x) * 0).compute()) + {error!r}"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 0 + {rows}"),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute() * 0) + {rows}"),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute() * 0) + int('{rows}')"),
]


@pytest.mark.parametrize(("key", "code"), HIDDEN, ids=[f"{k}-{i}" for i, (k, _) in enumerate(HIDDEN)])
def test_a_typed_answer_hidden_in_an_expression_is_not_accepted(key, code, client):
    """Before: each was "Correct" (only a bare literal was seen as typed)."""
    verdict = _judged(key, client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "also written out in your answer cell" in verdict.message, verdict.message


UNRELATED = [  # right answers with numbers written out that are not the answer
    ("00-1", "a = da.arange(N, chunks=100_000)\ntotal = (a ** 2).sum() * 1"),
    (
        "02-1",
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx, ord='fro') / da.linalg.norm(x)).compute()) * 1.0",
    ),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute()) + 0"),
    ("04-2", "part = 2\nrows_in_partition_2 = len(ddf.get_partition(part))"),
]


@pytest.mark.parametrize(("key", "code"), UNRELATED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(UNRELATED)])
def test_other_numbers_written_out_in_a_right_answer_are_fine(key, code, client):
    verdict = _judged(key, client, code)
    assert verdict.correct, verdict.message


def test_03_1_one_filtered_reduction_per_name_is_not_a_groupby(client):
    """Item 2: before, "Correct" (26 filtered maxima handed to dask.compute at once; no groupby)."""
    code = (
        "names = sorted(ddf.name.unique().compute())\nmax_y_by_name = pd.Series(dict(zip(names, dask.compute(*[ddf[ddf.name == n].y.max() for n in names]))))"
    )
    verdict = _judged("03-1", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "separate reductions of ddf" in verdict.message, verdict.message
    assert _judged("03-1", client, RIGHT["03-1"][0]).correct


def test_04_1_meta_with_another_dtype_than_the_partitions_hold_is_not_accepted(client):
    """Item 3: before, "Correct" (meta said int64, the partitions hold float64)."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean, meta=dict(ddf.dtypes.to_dict(), x_demeaned='int64'))"
    verdict = _judged("04-1", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "declares x_demeaned as int64" in verdict.message and "float64" in verdict.message, verdict.message
    right = code.replace("x_demeaned='int64'", "x_demeaned='float64'")
    assert _judged("04-1", client, right).correct


def test_03_2_with_ddf_still_persisted_ddf_itself_is_not_a_persisted_copy(client):
    """Item 4: cell 27 skipped, so ddf is still the frame persisted in cell 18; before, `ddf_fast = ddf` was "Correct"."""
    from distributed import wait

    ddf = namespace("03-2", client)["ddf"].persist()
    wait(ddf)
    code = "ddf_fast = ddf\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"
    verdict = _judged("03-2", client, code, ddf=ddf)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "did not persist anything" in verdict.message, verdict.message
    assert _judged("03-2", client, RIGHT["03-2"][0]).correct  # ddf lazy (cell 27 run): judged as before
