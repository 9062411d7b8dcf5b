"""The review's wrong diagnoses, each now named right: the hint says what the answer did, not another mistake."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge
from tests.helpers import cancel_last_made_first
from tests.test_exercises_cases import APPROX, DEMEAN, FITS, FLAGS, LIMITS, SLOT
from tests.test_exercises_corpus import _run, client_kept_its_connection, corpus_client  # noqa: F401  (the `client` fixture, used here)

DIAGNOSES = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum().persist()", "total is persisted", "not built from a"),
    ("00-1", "a = da.arange(N, chunks=10)\ntotal = (a ** 2).sum()", "about 100 MB", "10-100 MB"),
    ("01-1", "workshop_options = kit.ClusterOptions(rmm_pool_size=0.6, rmm_async=False, dashboard_address=':0')", "rmm_pool_size", "device_memory_limit"),
    ("02-2", "spill_threshold = '360MB'", "powers of 1000", "GiB = 2**30"),
    ("03-1", "max_y_by_name = ddf.map_partitions(lambda d: d.groupby('name').y.max()).compute()", "never combined", "Group by the name column"),
    ("04-1", "def demean(df):\n    return df.x - df.x.mean()\n\ndemeaned = ddf.map_partitions(demean)", "it returned a Series", "returned none"),
    ("05-2", FITS + "x0_results = dask.compute(*lazy_fits[:2]) + dask.compute(*lazy_fits[2:])", "the scheduler received 2", "one .compute() after"),
    ("07-1", "rows_per_name = processed.groupby('x').size().compute()", "counts the values of the column 'x'", "raw input"),
    ("09-1", "total_future = session.client.map(square, range(10))", "list of 10 futures", "here in the notebook"),
    ("09-1", "total_future = session.client.submit(lambda n: sum(square(i) for i in range(n)), 10)", "made inside that one function", "came back first"),
    ("09-2", "partition_bytes = '4GB'", "powers of 1000", "in GiB"),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in DIAGNOSES])
def test_the_hint_names_what_the_answer_did(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


def test_00_2_a_typed_size_is_not_accepted(client):
    """Review 7, item 5: 00-2 asks to read the limits from the cluster (as 06-2 does); before, a typed size was accepted."""
    verdict = judge("00-2", _run("cluster_memory = '2GiB'", "00-2", client))
    assert not verdict.correct and "a memory size is written out" in verdict.message, verdict.message


def test_a_pair_of_x0_with_itself_that_broke_the_answer_cell_gets_a_hint(client):
    """In the notebook the answer cell raises (a DuplicateError) and x0_results stays ...: the check says why."""
    ns = _run("lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features]\nx0_results = ...", "05-2", client)
    verdict = judge("05-2", ns)
    assert verdict.answered and not verdict.correct and "pairs x0 with itself" in verdict.message, verdict.message
    assert "compute(*" not in verdict.message


REVIEW2_DIAGNOSES = [
    ("00-1", "a = da.arange(N, chunks=N // 10, dtype='int32')\ntotal = (a ** 2).sum()", "overflow", "square each element"),
    ("01-2", "spill_at = '10GB'", "smaller", "right digits"),
    (
        "04-1",
        "m = ddf.x.mean().compute()\ndef demean(df):\n    return df.assign(x_demeaned=df['x'] - m)\n\ndemeaned = ddf.map_partitions(demean)",
        "THAT partition",
        "wrong column",
    ),
    (
        "05-2",
        "lazy_fits = session.client.compute([fit_ols(data_future, ('x0', f)) for f in features[1:]])\nx0_results = session.client.gather(lazy_fits)",
        "holds Futures",
        "should be a list of delayed",
    ),
    ("07-1", "rows_per_name = processed.map_partitions(lambda d: d['name'].value_counts()).compute()", "never combined", "Group by the name"),
    ("09-1", "total_future = session.client.submit(sum, session.client.map(square, range(1, 11)))", "another range", "use sum"),
    ("03-1", "max_y_by_name = ddf.set_index('id').compute().groupby('name').y.max()", "computed in this notebook", "Correct"),
    ("03-2", "ddf_fast = raw.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()", "raw, the source frame", "Correct"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf.groupby('name').x.mean().compute()", "recipe again", "Correct"),
    (
        "06-1",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.compute()).sum(axis=0)",
        "added up in this notebook",
        "Correct",
    ),
]


def _then(ns, code, key):
    """The learner runs another cell (``code``) in the same kernel, then the check: IPython's In grows by both."""
    exec(compile(code, "<a later cell>", "exec"), ns)
    ns["In"] += [code, f'exercises.check("{key}", globals())']
    return judge(key, ns)


def test_a_value_typed_in_after_one_correct_run_is_not_accepted(client):
    """Leftover evidence (review 2, 02-1 and 04-2): the scheduler saw a correct run once; the answer cell now holds a number."""
    ns = _run(
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())", "02-1", client
    )
    assert judge("02-1", ns).correct
    verdict = _then(ns, f"rank10_error = {ns['rank10_error']!r}", "02-1")
    assert not verdict.correct and "typed into the answer cell" in verdict.message, verdict.message
    ns = _run("rows_in_partition_2 = len(ddf.partitions[2].compute())", "04-2", client)
    assert judge("04-2", ns).correct
    verdict = _then(ns, f"rows_in_partition_2 = {ns['rows_in_partition_2']}", "04-2")
    assert not verdict.correct and "typed into the answer cell" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("key", "code", "later"),
    [
        ("07-1", "rows_per_name = processed.groupby('name').size().compute()", "m = processed.x.mean().compute()"),
        ("05-2", FITS + "x0_results = dask.compute(*lazy_fits)", "again = dask.compute(fit_ols(data_future, ('x1', 'x2')))"),
        ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute()", "n = len(ddf)"),
        (
            "02-1",
            "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())",
            "t = x.sum().compute()",
        ),
    ],
)
def test_an_unrelated_cell_after_a_right_answer_changes_nothing(key, code, later, client):
    """Review 2 (05/07): the "latest submission" rule rejected a right answer once another cell had computed something."""
    ns = _run(code, key, client)
    assert judge(key, ns).correct, judge(key, ns).message
    verdict = _then(ns, later, key)
    assert verdict.correct, verdict.message


def test_the_reference_answer_of_03_1_passes_with_ddf_persisted_and_lazy(client):
    """Review 2: after Run All ddf is the lazy recipe again and its tasks run under fused keys; both states must pass."""
    from gpu_dask_kit.exercises import EXERCISES

    ns = _run(EXERCISES["03-1"].solution, "03-1", client)
    assert judge("03-1", ns).correct, judge("03-1", ns).message  # lazy (the corpus' 03 set-up)
    ns = _run("ddf = ddf.persist()\n" + EXERCISES["03-1"].solution, "03-1", client)
    assert judge("03-1", ns).correct, judge("03-1", ns).message
    ns = _run(EXERCISES["03-1"].solution, "03-1", client, history=False)  # outside IPython: the scheduler's record
    assert judge("03-1", ns).correct, judge("03-1", ns).message


def test_after_the_cluster_is_closed_the_check_says_so_plainly(client):
    from distributed import Client

    from tests.test_exercises_corpus import Session

    closed = Client(client.scheduler.address)
    closed.close()
    for key, code in [("00-2", "cluster_memory = '2GiB'"), ("03-1", "max_y_by_name = 1"), ("09-1", "total_future = 285")]:
        ns = {**_run(code, key, client), "session": Session(closed)}
        verdict = judge(key, ns)
        assert not verdict.correct and "the cluster is closed: re-run the set-up cell" in verdict.message, verdict.message
        assert "IOLoop" not in verdict.message and "No clients found" not in verdict.message
    ns = {**_run("spill_at = '9.6GiB'", "01-2", client), "session": Session(closed)}
    assert judge("01-2", ns).correct  # no cluster needed: judged as usual


def test_the_check_does_not_run_again_a_cell_that_closes_or_writes(client, tmp_path):
    """The check re-runs the answer cell; a cell that also closes the cluster or writes a file is not run twice,
    and the learner is told so (never "Correct" from the scheduler's older record)."""
    target = tmp_path / "out.txt"
    code = f"rows_per_name = processed.groupby('name').size().compute()\nopen({str(target)!r}, 'a').write('x')"
    ns = _run(code, "07-1", client)
    verdict = judge("07-1", ns)
    assert not verdict.correct and "open(...), which the check does not run a second time" in verdict.message, verdict.message
    assert target.read_text() == "x"  # written once, by the learner's own run


def test_a_re_run_that_takes_too_long_is_stopped_and_said(client, monkeypatch):
    from gpu_dask_kit.exercises import replay

    monkeypatch.setattr(replay, "LIMIT", 1.0)
    ns = _run("import time\nrows_per_name = processed.groupby('name').size().compute()", "07-1", client)
    ns["In"][-2] = "time.sleep(5)\n" + ns["In"][-2]
    verdict = judge("07-1", ns)
    assert not verdict.correct and "took longer than 1 s" in verdict.message, verdict.message


STALE = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum(axis=5)"),
    (
        "01-1",
        "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':0')",
        "workshop_options = kit.ClusterOptions(device_memory_limt='60%', rmm_async=True, dashboard_address=':0')",
    ),
    ("01-2", "spill_at = '9.6GiB'", "spill_at = 0.6*16*GiB"),
]


@pytest.mark.parametrize(("key", "right", "broken"), STALE, ids=[s[0] for s in STALE])
def test_a_right_value_left_from_before_a_failing_answer_cell_is_not_correct(key, right, broken, client):
    """Review 3: the right answer ran, then the answer cell was changed and raised: the names still hold the old value."""
    ns = _run(right, key, client)
    assert judge(key, ns).correct, judge(key, ns).message
    ns["In"] += [broken]
    verdict = judge(key, ns)
    assert not verdict.correct and "raised" in verdict.message, verdict.message
    # the old value is not judged: said either as "left from an earlier run", or, for a NameError (01-2's GiB, which no
    # cell makes), as the name the kernel lacks, without claiming a cell above makes it (it said so before review 9)
    assert "earlier run" in verdict.message or "which this kernel does not have" in verdict.message, verdict.message


def test_a_changed_answer_cell_that_gives_another_value_is_not_judged_by_the_old_value(client):
    ns = _run("spill_at = '9.6GiB'", "01-2", client)
    ns["In"] += ["spill_at = '9GiB'"]
    verdict = judge("01-2", ns)
    assert not verdict.correct and "not what your answer cell gives now" in verdict.message, verdict.message


def test_the_rerun_appends_to_a_copy_of_the_learners_list(client):
    """Review 3: the check runs the answer cell again; a list the cell appends to is not changed a second time."""
    ns = _run("log = []\n", "01-2", client)
    code = "log.append(len(log) + 1)\nspill_at = '9.6GiB'"
    exec(code, ns)
    ns["In"] += [code]
    assert judge("01-2", ns).correct
    assert ns["log"] == [1], ns["log"]


def _forget(dask_scheduler):
    """What a heavy cell run after the answer does: the scheduler's log (a bounded deque) no longer holds the answer's record."""
    dask_scheduler.transition_log.clear()


@pytest.mark.parametrize("key", ["05-1", "05-2"])
def test_a_right_answer_whose_record_fell_out_of_the_log_is_still_correct(key, client):
    """Review 3: correct answer, then notebook 05's timing cell re-run: the check replays the answer cell, never accuses."""
    from gpu_dask_kit.exercises import EXERCISES

    ns = _run(EXERCISES[key].solution, key, client)
    client.run_on_scheduler(_forget)
    verdict = judge(key, ns)
    assert verdict.correct, verdict.message


def test_demean_through_delayed_is_correct_and_told_the_direct_way(client):
    """Review 3 (04-1): from_delayed is accepted; the Correct text names map_partitions as the direct way."""
    code = DEMEAN + "import dask.dataframe as dd\ndemeaned = dd.from_delayed([dask.delayed(demean)(p) for p in ddf.to_delayed()])"
    verdict = judge("04-1", _run(code, "04-1", client))
    assert verdict.correct and "map_partitions(demean) is the direct way" in verdict.message, verdict.message
    verdict = judge("04-1", _run(DEMEAN + "demeaned = ddf.map_partitions(demean)", "04-1", client))
    assert verdict.correct and "direct way" not in verdict.message, verdict.message


REVIEW3_DIAGNOSES = [
    ("00-1", "a = da.arange(1, N + 1, chunks=N // 10)\ntotal = (a ** 2).sum()", "0, 1, ..., N-1", "square each element"),
    ("00-2", f"cluster_memory = f\"{{sum(w['memory_limit'] for w in {LIMITS}) / 2**30}} GB\"", "Any unit is fine", "Which unit does the question ask for"),
    ("03-1", "max_y_by_name = ddf.groupby('name').agg({'y': 'max'}).compute()", "(1 column)", "several columns"),
    ("03-2", "ddf_fast = session.client.compute(ddf)\nmean_x_by_name = ddf.groupby('name').x.mean().compute()", "is a Future", "came back to this notebook"),
    (
        "04-1",
        "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean, meta=ddf._meta)",
        "meta",
        "map demean over ddf",
    ),
    (
        "05-2",
        FITS + "x0_results = session.client.compute(lazy_fits)",
        "Gather them",
        "each result should be a fit of x0",
    ),
    ("06-1", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.compute()\ncol_sums_local = to_host(col_sums.compute())", "is an ndarray", "a ndarray"),
    ("08-1", f"args = parser.parse_args([{FLAGS}])\nscript_options = vars(args)", "vars(args)", "unexpected options"),
    ("08-2", SLOT + "slot_workers = list(set(session.client.gather(slot_futures)))", "set(...) keeps each name once", "it is a list."),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), REVIEW3_DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in REVIEW3_DIAGNOSES])
def test_a_hint_names_what_the_answer_did_and_its_futures_are_cancelled(key, code, said, not_said, client):
    from distributed import Future

    ns = _run(code, key, client)
    verdict = judge(key, ns)
    # the answer's own futures (a list of them too), cancelled and waited for: left running, their tasks (named after
    # what they run) are the next 05-2 test's, and its check counted two submissions
    held = [f for v in ns.values() for f in (v if isinstance(v, (list, tuple)) else [v]) if isinstance(f, Future)]
    if held:
        cancel_last_made_first(client, held)
    assert not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


def test_the_reference_04_2_says_where_the_rows_were_counted(client):
    from gpu_dask_kit.exercises import EXERCISES

    verdict = judge("04-2", _run(EXERCISES["04-2"].solution, "04-2", client))
    assert verdict.correct and "brought here" in verdict.message and "counted by the workers" not in verdict.message, verdict.message


REVIEW3_MORE = [
    ("02-1", APPROX + "rank10_error = float((da.linalg.norm(x - approx, ord=2) / da.linalg.norm(x, ord=2)).compute())", "ord=2", "NumPy did the work"),
    ("02-1", "rank10_error = float(np.sqrt((s_host[10:]**2).sum()/(s_host**2).sum()))", "values already here", "NumPy did the work"),
    ("03-1", "max_y_by_name = ddf.groupby('name').apply(lambda d: d.y.max(), meta=('y', 'f8')).compute()", "shuffle", "on one core"),
    (
        "07-1",
        "rows_per_name = pd.Series(dict(zip(range(1, 6), dask.compute(*[(processed.name == c).sum() for c in range(1, 6)]))))",
        "one code at a time",
        "came back",
    ),
    ("09-2", "partition_bytes = '4096MB'", "powers of 1000", "smaller than"),
]


@pytest.mark.parametrize(
    ("key", "code", "said", "not_said"), REVIEW2_DIAGNOSES + REVIEW3_MORE, ids=[f"{d[0]}-{d[2]}" for d in REVIEW2_DIAGNOSES + REVIEW3_MORE]
)
def test_a_hint_names_the_actual_mistake(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message
