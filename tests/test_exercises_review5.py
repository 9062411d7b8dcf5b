# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 5: each false accept / false reject the reviewer found, with the reviewer's exact answer cell."""

from __future__ import annotations

import pytest
from distributed import Future, wait
from IPython.core.inputtransformer2 import TransformerManager

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import DEMEAN, FITS, FITS1, INPLACE, LIMITS, RIGHT
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


def _inc(i):
    return i + 1


# Review 5, item 8: a right answer, then more than 1000 other tasks (the scheduler's transition log rolls over).
LATER_TASKS = [("09-1", RIGHT["09-1"][1]), ("08-2", RIGHT["08-2"][0])]


@pytest.mark.parametrize(("key", "code"), LATER_TASKS, ids=[k for k, _ in LATER_TASKS])
def test_a_right_answer_stays_correct_after_many_more_tasks(key, code, client):
    """Before: 09-1 "the squares and their sum went to the cluster as one graph", 08-2 "names never came from the cluster"."""
    ns = _run(code, key, client)
    assert judge(key, ns).correct, judge(key, ns).message
    later = client.map(_inc, range(1500), pure=False)  # 1500 tasks: 4500+ transitions, the log keeps 1000
    assert sum(client.gather(later)) == sum(range(1, 1501))
    del later
    verdict = judge(key, ns)
    assert verdict.correct, verdict.message


def _forget_submissions(dask_scheduler):
    """What a rolled-over log leaves: no record of any submission (the ledger's too)."""
    dask_scheduler.transition_log.clear()
    ledger = dask_scheduler.plugins.get("gpu-dask-kit-submissions")
    if ledger is not None:
        ledger.log.clear()


@pytest.mark.parametrize(("key", "code"), LATER_TASKS, ids=[k for k, _ in LATER_TASKS])
def test_a_right_answer_whose_record_is_gone_is_not_accused(key, code, client):
    ns = _run(code, key, client)
    wait([v for v in ns.values() if isinstance(v, Future)] + [f for v in ns.values() if isinstance(v, list) for f in v if isinstance(f, Future)])
    client.run_on_scheduler(_forget_submissions)
    verdict = judge(key, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert (
        verdict.message.startswith(f"Could not be checked ({key}): the scheduler's record")
        and "typed" not in verdict.message
        and "one graph" not in verdict.message
    ), verdict.message


def test_a_tree_of_sums_is_told_it_adds_partial_sums(client):
    """Review 5, item 15: before, "inputs were not made by square (scattered ...)"."""
    code = "futs = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, [session.client.submit(sum, futs[:5]), session.client.submit(sum, futs[5:])])"
    verdict = judge("09-1", _run(code, "09-1", client))
    assert not verdict.correct and "partial sums" in verdict.message and "scattered" not in verdict.message, verdict.message


# Review 5, item 2: 04-2 answers that read every partition and keep one count (two were "Correct"; be consistent).
EVERY_PARTITION = [
    "rows_in_partition_2 = [len(p) for p in ddf.partitions][2]",
    "rows_in_partition_2 = dask.compute(*[p.shape[0] for p in ddf.partitions])[2]",
    "rows_in_partition_2 = int(ddf.map_partitions(len).compute().iloc[2])",
]


@pytest.mark.parametrize("code", EVERY_PARTITION)
def test_04_2_counting_every_partition_is_rejected(code, client):
    verdict = judge("04-2", _run(code, "04-2", client))
    assert verdict.answered and not verdict.correct, verdict.message


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


# Review 5, items 9-12 (notebook 07).
def test_07_1_pandas_read_in_one_delayed_task_is_rejected(client):
    verdict = judge("07-1", _run("rows_per_name = dask.delayed(pd.read_parquet)(PROCESSED).name.value_counts().compute()", "07-1", client))
    assert not verdict.correct and "ONE task" in verdict.message, verdict.message


def test_07_1_per_partition_counts_combined_here_are_not_called_counted_here(client):
    code = "parts = [dask.delayed(lambda d: d.name.value_counts())(p) for p in processed.to_delayed()]\nrows_per_name = pd.concat(dask.compute(*parts)).groupby(level=0).sum()"
    verdict = judge("07-1", _run(code, "07-1", client))
    assert not verdict.correct and "on one core" not in verdict.message and "combined here" in verdict.message, verdict.message


def test_07_1_one_partition_is_named_as_one_partition(client):
    verdict = judge("07-1", _run("rows_per_name = processed.partitions[0].name.value_counts().compute()", "07-1", client))
    assert not verdict.correct and "ONE partition" in verdict.message and "distinct values" not in verdict.message, verdict.message


def test_07_2_the_last_run_is_rejected_even_when_it_equals_the_median(client):
    """Review 5 item 10: accepted by chance when the last run was the median."""
    ns = _run("", "07-2", client)
    ns["all_times"] = {1: [3.5, 3.0, 3.13], 2: [2.1, 1.8, 1.93]}
    ns["N_MAX"] = 2
    code = "speed_up = all_times[1][-1] / all_times[N_MAX][-1]"
    exec(code, ns)
    ns["In"] = ["", code, 'exercises.check("07-2", globals())']
    verdict = judge("07-2", ns)
    assert not verdict.correct and "median" in verdict.message, verdict.message


@pytest.mark.parametrize("code", ["speed_up = round(medians[1]/medians[N_MAX], 2)", 'speed_up = float(f"{medians[1]/medians[N_MAX]:.3f}")'])
def test_07_2_a_computed_ratio_rounded_to_shown_digits_passes(code, client):
    """Review 5 item 11: rejected as "typed or rounded" while 06-2 accepts computed values rounded to >= 2 digits."""
    ns = _run("N_MAX = 2\n" + code, "07-2", client)
    ns["In"] = ["", code, 'exercises.check("07-2", globals())']
    verdict = judge("07-2", ns)
    assert verdict.correct, verdict.message


@pytest.mark.parametrize("how", ["min", "np.mean"])
def test_07_2_other_statistics_are_told_to_use_the_medians(how, client):
    ns = _run("", "07-2", client)
    ns["all_times"] = {1: [3.5, 3.0, 3.13], 2: [2.1, 1.8, 1.93]}
    code = f"speed_up = {how}(all_times[min(all_times)]) / {how}(all_times[max(all_times)])"  # sizes read, not typed (07-2 refuses a typed 2)
    exec(code, ns)
    ns["In"] = ["", code, 'exercises.check("07-2", globals())']
    verdict = judge("07-2", ns)
    assert not verdict.correct and "Use the median times" in verdict.message and "typed or rounded" not in verdict.message, verdict.message


# Review 5, item 6: answers judged inconsistently, and hints that misdiagnose.
def test_02_1_the_theory_computed_on_the_workers_is_rejected_like_the_numpy_one(client):
    """Before: "Correct ... as theory predicts" (the NumPy version got the "build approx" hint)."""
    for code in [
        "rank10_error = float(da.sqrt((s[10:]**2).sum()/(s**2).sum()).compute())",
        "rank10_error = float(np.sqrt((s_host[10:] ** 2).sum() / (s_host ** 2).sum()))",
    ]:
        verdict = judge("02-1", _run(code, "02-1", client))
        assert not verdict.correct and "theory's shortcut" in verdict.message, verdict.message


def test_02_1_svd_compressed_is_named_as_an_approximate_svd(client):
    code = "u2, s2, v2 = da.linalg.svd_compressed(x, k=10)\napprox = (u2 * s2) @ v2\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())"
    verdict = judge("02-1", _run(code, "02-1", client))
    assert not verdict.correct and "randomized" in verdict.message and "typed" not in verdict.message, verdict.message


def test_05_2_the_list_as_one_argument_is_rejected(client):
    """Before: "Correct: 11 models" for a 1-tuple holding the list."""
    verdict = judge("05-2", _run(FITS + "x0_results = dask.compute(lazy_fits)", "05-2", client))
    assert not verdict.correct and "ONE item" in verdict.message, verdict.message


REVIEW5_DIAGNOSES = [
    ("04-1", DEMEAN + "demeaned = ddf.map_partitions(demean, meta={'x_demeaned': 'float64'})", "meta must describe", "could not be checked"),
    ("04-1", DEMEAN + "demeaned = ddf.map_partitions(demean, meta=ddf._meta)", "non-empty", "empty frame)"),
    ("00-1", "a = da.arange(N, chunks=N)\ntotal = (a ** 2).sum()", "a has 1 chunk;", "1 chunks"),
    ("01-1", "workshop_options = kit.ClusterOptions(memory_limit=0.6, rmm_async=True, dashboard_address=':0')", "HOST", "device_memory_limit should be"),
    ("01-2", "spill_at = 0.6 * 16e9", "decimal units", "Dask reads"),
    ("01-2", "spill_at = 0.6 * 16 * 2**29", "share of each GPU", "2**30"),
    (
        "05-1",
        "single_fits = [fit_ols(data_future, (f,)) for f in df.columns]\nsingle = dask.compute(*single_fits)\nbest_single_feature = max(single, key=lambda r: r[3])[0][0]",
        "target",
        "ONE feature",
    ),
    (
        "08-1",
        "import argparse\nargs = argparse.Namespace(n_workers=4, memory_limit='8GiB', rmm_pool_size=0.5, scheduler_file='/shared/scheduler.json')\nscript_options = options_from_args(args)",
        "made by hand",
        "vars(args)",
    ),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), REVIEW5_DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in REVIEW5_DIAGNOSES])
def test_review5_hint_names_what_the_answer_did(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert verdict.answered and not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


def test_05_1_a_feature_passed_as_a_str_is_named(client):
    """The reviewer's cell raises KeyError at dask.compute; single_fits is set, best_single_feature holds an earlier value."""
    code = "single_fits = [fit_ols(data_future, f) for f in features]\nsingle = dask.compute(*single_fits)\nbest_single_feature = max(single, key=lambda r: r[3])[0][0]"
    ns = _run(code.split("\n")[0], "05-1", client)
    ns["best_single_feature"] = "x1"
    ns["In"] = ["", code, 'exercises.check("05-1", globals())']
    verdict = judge("05-1", ns)
    assert not verdict.correct and "TUPLE" in verdict.message and "KeyError" not in verdict.message, verdict.message


# Review 5, item 5: data that is gone is named with the cells that make it; a kernel with no cluster is not "closed".
def test_02_1_after_a_restart_names_the_data_that_is_gone_and_its_cells(client):
    right = RIGHT["02-1"][1]
    ns = _run(right, "02-1", client)
    setup = "x = da.random.default_rng(12).random((400, 30), chunks=(100, 30)).persist()\nu, s, v = dask.persist(*da.linalg.svd(x))"
    ns["In"] = ["", setup, right, 'exercises.check("02-1", globals())']
    client.cancel([ns["x"], ns["u"], ns["s"], ns["v"]])
    verdict = judge("02-1", ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "`x` (In [1])" in verdict.message and "`s` (In [1])" in verdict.message, verdict.message
    assert "closed:" not in verdict.message and "raised" not in verdict.message, verdict.message


def test_a_kernel_with_no_cluster_is_told_none_was_started(monkeypatch):
    from gpu_dask_kit.exercises import stale

    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(stale, "get_client", no_client)
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()"
    ns = {"a": 1, "total": 2, "In": ["", "import gpu_dask_kit as kit\nsession = kit.start_cluster()", code, 'exercises.check("00-1", globals())']}
    verdict = judge("00-1", ns)
    assert "no cluster was started yet" in verdict.message and "closed" not in verdict.message and "In [1]" in verdict.message, verdict.message


# Review 5, item 14: 08-2 minor false accepts.
@pytest.mark.parametrize(
    "code",
    [
        "slot_futures = session.client.map(where_am_i, range(1, 5), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(slot_futures)",
        "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(restricted[:4])",
    ],
)
def test_08_2_other_numbers_or_other_futures_are_rejected(code, client):
    ns = _run(code, "08-2", client)
    verdict = judge("08-2", ns)
    assert verdict.answered and not verdict.correct, verdict.message
