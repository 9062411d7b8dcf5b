# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 8 (notebooks 00-04): each false accept the reviewer found, with the reviewer's answer cell, plus
variants of the same pattern; each must be rejected with a hint that diagnoses it and hides the answer, while right
answers in two styles still pass.

The expected numbers are worked out from the corpus' namespace (never typed here), then written into the answer cell
the way the reviewer typed them.
"""

from __future__ import annotations

import ast

import pytest

from gpu_dask_kit.exercises import judge
from gpu_dask_kit.exercises.zeroed import zeroing
from tests.test_exercises_cases import REVEALS, RIGHT
from tests.test_exercises_corpus import corpus_client, namespace  # noqa: F401  (the `client` fixture, used here)

ERROR = "da.linalg.norm(x - approx) / da.linalg.norm(x)"
APPROX = "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\n"
NOTHING = "the Dask part of your answer contributes nothing"


def _judged(key, client, code):
    """(verdict, namespace) for ``code`` run as the answer cell of ``key`` (``{rows}`` etc. filled from the namespace)."""
    ns = namespace(key, client)
    rows = len(ns["ddf"].partitions[2]) if key.startswith("04") else 0
    values = {"rows": rows, "rows_less_1": rows - 1, "rows_plus_1000": rows + 1000}
    code = code.format(**values)
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return judge(key, ns), ns


def _rejected(key, client, code, words):
    verdict, ns = _judged(key, client, code)
    assert verdict.answered and not verdict.correct, (code, verdict.message)
    assert verdict.message.startswith(f"Not yet ({key}): "), verdict.message
    assert words in verdict.message, (code, verdict.message)
    for secret in REVEALS[key](ns):
        assert secret.lower() not in verdict.message.lower(), (secret, verdict.message)
    return verdict


# The PATTERN: a right Dask expression times 0 (or cancelled), plus a value worked out in the notebook.
ZEROED = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + (N-1)*N*(2*N-1)//6"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + sum(i*i for i in range(N))"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = 0 * (a**2).sum() + sum(i*i for i in range(N))"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = - (a**2).sum() + (a**2).sum() + (N-1)*N*(2*N-1)//6"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\nzero = 0\ntotal = (a**2).sum() * zero + (N-1)*N*(2*N-1)//6"),
    (
        "02-1",
        APPROX + f"rank10_error = float(({ERROR}).compute()) * 0 + float(np.sqrt((s_host[10:]**2).sum() / (s_host**2).sum()))",
    ),
    ("02-1", APPROX + "rank10_error = float((da.linalg.norm(x - approx) * 0).compute()) + float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))"),
    ("02-1", APPROX + f"rank10_error = float(({ERROR}).compute()) * 0.0 + float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute() * 0 + ddf.compute().groupby('name').y.max()"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute() * 0 + raw.compute().groupby('name').y.max()"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().mul(0) + ddf.compute().groupby('name').y.max()"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute() * 0 + ddf.groupby('name').x.mean().compute()"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 0 + {rows_less_1} + 1"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 0 + {rows_plus_1000} - 1000"),
    ("04-2", "rows_in_partition_2 = 0 * len(ddf.partitions[2]) + {rows_less_1} + 1"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) - len(ddf.partitions[2]) + {rows_less_1} + 1"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * (1 - 1) + {rows_less_1} + 1"),
]


@pytest.mark.parametrize(("key", "code"), ZEROED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(ZEROED)])
def test_a_dask_part_that_contributes_nothing_is_rejected(key, code, client):
    """Before: each was "Correct" (the value came from the notebook-side part)."""
    _rejected(key, client, code, NOTHING)


RIGHT_STYLES = [  # right answers that hold arithmetic with numbers, or the same part twice, and must still pass
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 1 + 0"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\nsquares = a * a\ntotal = squares.sum()"),
    ("02-1", APPROX + "num = da.linalg.norm(x - approx)\nrank10_error = float((num / da.linalg.norm(x)).compute())"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute() + 0"),
    ("03-2", RIGHT["03-2"][0]),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute()) + 0"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 1"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_STYLES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(RIGHT_STYLES)])
def test_right_answers_with_harmless_arithmetic_pass(key, code, client):
    verdict, _ = _judged(key, client, code)
    assert verdict.correct, (code, verdict.message)


def test_zeroing_reads_the_forms_a_learner_writes():
    forms = {
        "t = y * 0 + 3": True,
        "t = float(y.compute()) * 0.0 + 3": True,
        "t = y * False + 3": True,
        "t = y.mul(0) + 3": True,
        "t = y ** 0 * 3": True,
        "t = float(n.compute()) - float(n) + 3": True,
        "t = y * (q - q) + 1": True,
        "t = x - approx": False,
        "t = (a ** 2).sum() * 1 + 0": False,
        "t = x - x.mean()": False,
        "t = 0 * 5 + y": False,
    }
    for code, zeroed in forms.items():
        assert (zeroing(ast.parse(code), "t") is not None) is zeroed, code


# 00-2: a size typed in, spelled as a string; one limit times the worker count.
SPELLED = [
    "cluster_memory = f'{{2*2}}GiB'",
    "cluster_memory = str(2 + 2) + 'GiB'",
    "cluster_memory = '{{}}GiB'.format(2 * 2)",
    "cluster_memory = '%dGiB' % 4",
]


@pytest.mark.parametrize("code", SPELLED)
def test_00_2_a_size_spelled_from_numbers_written_out_is_typed(code, client):
    _rejected("00-2", client, code, "spelled as a string")


def test_00_2_one_limit_times_the_worker_count_is_not_the_sum(client):
    code = "limit = min(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())\ncluster_memory = limit * len(session.client.scheduler_info(n_workers=-1)['workers'])"
    _rejected("00-2", client, code, "multiplies ONE worker's limit")


# 01-1: CPU workers on a GPU node; the percent note only for the option it was given to.
def test_01_1_cpu_workers_on_the_gpu_node_are_rejected(client):
    code = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0', device='cpu')"
    _rejected("01-1", client, code, "CPU workers (device='cpu')")


def test_01_1_the_percent_note_names_the_option_that_had_it(client):
    host = "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0', memory_limit='60%')"
    verdict, _ = _judged("01-1", client, host)
    assert verdict.correct and "percent string" not in verdict.message, verdict.message
    device = "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':0')"
    verdict, _ = _judged("01-1", client, device)
    assert verdict.correct and "percent string" in verdict.message, verdict.message


def test_01_2_decimal_units_are_named_without_confirming_the_digits(client):
    verdict = _rejected("01-2", client, "spill_at = '9.6GB'", "decimal unit")
    assert "right digits" not in verdict.message and "Any unit is fine" not in verdict.message, verdict.message


def test_right_answers_of_the_corpus_still_pass(client):
    for key in ("00-1", "00-2", "01-1", "02-1", "03-1", "04-2"):
        for code in RIGHT[key]:
            verdict, _ = _judged(key, client, code.replace("{", "{{").replace("}", "}}"))
            assert verdict.correct, (key, code, verdict.message)


def test_04_1_ddf_made_again_after_a_right_answer_cannot_be_checked(client):
    """Review 8: after a right answer, re-running the cell that makes ddf labelled it "Not yet"."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    ns["ddf"] = ns["ddf"].map_partitions(lambda d: d).persist()  # ddf made again, after the answer
    ns["In"] = ["", code, "ddf = ddf.map_partitions(lambda d: d).persist()", 'exercises.check("04-1", globals())']
    verdict = judge("04-1", ns)
    assert verdict.message.startswith("Could not be checked (04-1): ddf was made again"), verdict.message
