# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 7 (notebooks 00-04): each false accept the reviewer found, with the reviewer's answer cell.

The expected numbers are worked out from the corpus' namespace (never typed here), then written into the answer cell
the way the reviewer typed them.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import LIMITS, RIGHT
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


# Item 5: 00-2 asks to read each worker's limit from the cluster (as 06-2 does): a size typed in is not accepted.
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
    (f"cluster_memory = next(iter({LIMITS}))['memory_limit'] * 2", "the number of workers is written out"),
]


@pytest.mark.parametrize(("code", "said"), TYPED_00_2)
def test_00_2_a_typed_size_or_worker_count_is_not_accepted(code, said, client):
    """Before: each was "Correct"."""
    verdict = _judged("00-2", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message


READ_00_2 = [
    f"cluster_memory = f\"{{{{sum(w['memory_limit'] for w in {LIMITS}) / 2**30:.0f}}}} GiB\"",
    f"cluster_memory = str(sum(w['memory_limit'] for w in {LIMITS}) // 2**20) + 'MiB'",
]


@pytest.mark.parametrize("code", READ_00_2)
def test_00_2_a_sum_read_from_the_cluster_in_another_unit_is_accepted(code, client):
    verdict = _judged("00-2", client, code)
    assert verdict.correct, verdict.message


# Item 6: hints that said something else than what happened (each "before" was the message the reviewer got).
ERROR = "rank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())"
HONEST = [
    ("02-1", "approx = (u[:, :10] * s[:10]) @ v[:, :10].T\n" + ERROR, "approx is not close to x", "divide norm(x - approx) by norm(x)"),
    ("02-1", "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n" + ERROR + "\nrank10_error = round(rank10_error, 2)", "rounded to 2 decimals", "check the slices"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().round(4)", "rounded to 4 decimals", "which column and which aggregation"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute().round(3)", "rounded to 3 decimals", "check the column"),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.map_partitions(lambda d: d.groupby('name').x.mean()).compute().groupby(level=0).mean()",
        "means of the partitions' means",
        "combined here, in this notebook, by hand",
    ),
    ("04-2", "rows_in_partition_2 = ddf.partitions[2].compute().size", ".size counts every cell", "select that one partition"),
    (
        "02-1",
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n" + ERROR + "\ndef kill():\n    pass\n\nkill()",
        "Could not be checked (02-1): the check runs",
        "Not yet",
    ),
]


@pytest.mark.parametrize(("key", "code", "said", "before"), HONEST, ids=[f"{k}-{s[:20]}" for k, _, s, _ in HONEST])
def test_hints_say_what_happened(key, code, said, before, client):
    verdict = _judged(key, client, code)  # (kill: a call the check does not run twice; this one does nothing)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and before not in verdict.message, verdict.message


def test_01_2_a_percent_string_is_called_a_percentage(client):
    """Item 8: `spill_at = "60%"` was told "a str is neither"."""
    verdict = _judged("01-2", client, "spill_at = '60%'")
    assert not verdict.correct and "is a percentage" in verdict.message and "a str is neither" not in verdict.message, verdict.message
