# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 07's exercise judges: 07-1 (``rows_per_name``, counted on the workers from the processed Parquet) and 07-2
(``speed_up``, from the median times of the sizes measured), each with answer cells learners wrote in review, in the
notebook's own namespace."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..test_exercises_corpus import _run
from .helpers import assert_refused, assert_rejected, cells_in_shell, judge_answer_with_ns, judged_cell, notebook_namespace, run_without


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


def _judged_07_2(client, code, before=(), **values):
    """(namespace, verdict): ``code`` run as 07-2's answer cell in the corpus' namespace with ``values`` set, after the
    cells ``before`` in the history."""
    ns = _run("", "07-2", client)
    ns.update(values)
    exec(code, ns)
    ns["In"] = ["", *before, code, 'exercises.check("07-2", globals())']
    return ns, judge("07-2", ns)


RUNS_07_2 = {1: [3.5, 3.0, 3.13], 2: [2.1, 1.8, 1.93]}  # medians: 3.13 and 1.93, as the corpus' medians


def test_07_2_the_last_run_is_rejected_even_when_it_equals_the_median(client):
    """Review 5 item 10: accepted by chance when the last run was the median."""
    _, verdict = _judged_07_2(client, "speed_up = all_times[1][-1] / all_times[N_MAX][-1]", all_times=RUNS_07_2, N_MAX=2)
    assert not verdict.correct and "median" in verdict.message, verdict.message


def _judged_07_2_with_runs(client, code):
    return _judged_07_2(client, code, all_times=RUNS_07_2, N_MAX=2)


@pytest.mark.parametrize(
    "code",
    [
        "speed_up = sorted(all_times[1])[1] / sorted(all_times[max(all_times)])[1]",
        "t1, tn = sorted(all_times[1]), sorted(all_times[N_MAX])\nspeed_up = t1[len(t1) // 2] / tn[len(tn) // 2]",
    ],
)
def test_07_2_the_middle_of_the_sorted_runs_is_a_median(code, client):
    """Learner review 26: the median of 3 runs taken by hand (the middle of the sorted times) was told "speed_up is not
    made from median times"."""
    _, verdict = _judged_07_2_with_runs(client, code)
    assert verdict.correct, verdict.message


def test_07_2_medians_written_into_is_named_and_later_answers_are_not_correct(client):
    """Learner review 29: `medians[N_MAX] = medians[1]` after the ratio was told it "reads something that moves", and the
    next right answer, reading the changed medians (speed-up 1.0), was Correct."""
    ns, verdict = _judged_07_2_with_runs(client, "speed_up = medians[1] / medians[N_MAX]\nmedians[N_MAX] = medians[1]")
    assert_rejected("07-2", ns, verdict, "your answer cell writes into it")
    right = "speed_up = medians[1] / medians[N_MAX]"
    exec(right, ns)
    ns["In"] = [*ns["In"], right, 'exercises.check("07-2", globals())']
    assert_rejected("07-2", ns, judge("07-2", ns), "a cell changed it after the timing cell made it")


def test_07_2_the_fastest_of_the_sorted_runs_is_not_a_median(client):
    ns, verdict = _judged_07_2_with_runs(client, "speed_up = sorted(all_times[1])[0] / sorted(all_times[N_MAX])[0]")
    assert_rejected("07-2", ns, verdict, "not made from median times")


@pytest.mark.parametrize("code", ["speed_up = round(medians[1]/medians[N_MAX], 2)", 'speed_up = float(f"{medians[1]/medians[N_MAX]:.3f}")'])
def test_07_2_a_computed_ratio_rounded_to_shown_digits_passes(code, client):
    """Review 5 item 11: rejected as "typed or rounded" while 06-2 accepts computed values rounded to >= 2 digits."""
    ns = _run("N_MAX = 2\n" + code, "07-2", client)
    ns["In"] = ["", code, 'exercises.check("07-2", globals())']
    verdict = judge("07-2", ns)
    assert verdict.correct, verdict.message


@pytest.mark.parametrize("how", ["min", "np.mean"])
def test_07_2_other_statistics_are_told_to_use_the_medians(how, client):
    code = f"speed_up = {how}(all_times[min(all_times)]) / {how}(all_times[max(all_times)])"  # sizes read, not typed (07-2 refuses a typed 2)
    _, verdict = _judged_07_2(client, code, all_times=RUNS_07_2)
    assert not verdict.correct and "Use the median times" in verdict.message and "typed or rounded" not in verdict.message, verdict.message


# Review 6, item 4: notebook 07 has no `processed` (the corpus' namespace had one): the check read it and raised KeyError.
ONE_PARTITION_07 = [
    ("rows_per_name = dd.read_parquet(PROCESSED).partitions[0].name.value_counts().compute()", "ONE partition"),
    ("rows_per_name = dd.read_parquet(PROCESSED).name.value_counts(normalize=True).compute()", "shares that add up to 1"),
    ("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute() * 2", "do not add up"),
]


@pytest.mark.parametrize(("code", "said"), ONE_PARTITION_07)
def test_07_1_in_the_notebooks_namespace_is_judged_without_a_key_error(code, said, client):
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert verdict.answered and not verdict.correct, verdict.message
    assert "KeyError" not in verdict.message and said in verdict.message, verdict.message


def test_07_1_right_answer_in_the_notebooks_namespace(client):
    verdict = judge("07-1", run_without("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()", "07-1", client, "processed"))
    assert verdict.correct, verdict.message


# Review 8b (what kept 07 below 5): worker counts that match the sizes measured only on this CPU machine
WRONG_07_2 = [
    ("speed_up = medians[1] / medians[len(medians)]", "a count of entries"),
    ("n = len(medians)\nspeed_up = medians[1] / medians[n]", "a count of entries"),
    ('speed_up = medians[1] / medians[CPU_CLUSTER["n_workers"]]', "CPU cluster request"),
    ("speed_up = medians[1] / medians[2]", "a cluster size written out"),
    ("speed_up = all_times[1][0] / all_times[2][0]", "a cluster size written out"),
]


@pytest.mark.parametrize(("code", "said"), WRONG_07_2)
def test_07_2_a_cluster_size_that_matches_only_here_is_rejected(code, said, client):
    ns = notebook_namespace("07-2", client)
    ns.update(
        CPU_CLUSTER={"n_workers": 2, "threads_per_worker": 1, "memory_limit": "2GiB"}, all_times={1: [3.1, 3.13472, 3.2], 2: [1.9, 1.92618, 2.0]}
    )  # medians: as notebook_namespace's
    ns, verdict = judge_answer_with_ns("07-2", code, client, ns)
    assert_rejected("07-2", ns, verdict, said)


@pytest.mark.parametrize(
    "code",
    [
        "speed_up = medians[1] / medians[N_MAX]",
        "speed_up = medians[1] / medians[sorted(medians)[-1]]",
        "speed_up = medians[1] / medians[WORKER_COUNTS[-1]]",
        "largest = max(medians)\nspeed_up = medians[1] / medians[largest]",
    ],
)
def test_07_2_sizes_from_the_measurements_are_accepted(code, client):
    ns = notebook_namespace("07-2", client)
    ns["WORKER_COUNTS"] = sorted(ns["medians"])
    _, verdict = judge_answer_with_ns("07-2", code, client, ns)
    assert verdict.correct, verdict.message


def test_07_2_the_one_worker_time_over_the_fastest_is_told_what_it_takes(client):
    ns, verdict = judge_answer_with_ns("07-2", "speed_up = medians[1] / min(medians.values())", client)
    assert_rejected("07-2", ns, verdict, "the smallest of the median times", "the largest and the smallest")


def test_07_1_after_the_clean_up_cell_the_check_names_the_cells_that_write_the_files(client, tmp_path):
    import shutil

    ns = notebook_namespace("07-1", client)
    processed = shutil.copytree(ns["PROCESSED"], tmp_path / "processed")
    setup = "WORKDIR = tempfile.mkdtemp(prefix='gpu-dask-kit-etl-')\nRAW = os.path.join(WORKDIR, 'raw')\nraw.to_parquet(RAW)"  # cell 4
    making = "PROCESSED = os.path.join(WORKDIR, 'processed')\nlookups = etl(RAW, PROCESSED)"  # cell 7
    code = "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()"
    ns.update(PROCESSED=str(processed), WORKDIR=str(tmp_path), RAW=str(tmp_path / "raw"))
    exec(compile(code, "<answer 07-1>", "exec"), ns)
    shutil.rmtree(tmp_path)  # the clean-up cell
    ns["In"] = ["", setup, making, code, "shutil.rmtree(WORKDIR, ignore_errors=True)", 'exercises.check("07-1", globals())']
    verdict = judge("07-1", ns)
    assert not verdict.correct and "Make the answer cell run cleanly" not in verdict.message and ".." not in verdict.message, verdict.message
    assert "(In [1] then In [2]), then your answer cell, then this check" in verdict.message, verdict.message


MISDIAGNOSED_07_1 = [
    ("rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().head(3)", "a part of the whole result", "Group by the name column"),
    (
        "import glob\nrows_per_name = pd.concat([dask.delayed(pd.read_parquet)(f).compute()\n"
        "                           for f in sorted(glob.glob(PROCESSED + '/*.parquet'))]).name.value_counts()",
        "separate computations",
        "read by ONE task",
    ),
]


@pytest.mark.parametrize(("code", "said", "not_said"), MISDIAGNOSED_07_1)
def test_07_1_hints_say_what_happened(code, said, not_said, client):
    ns, verdict = judge_answer_with_ns("07-1", code, client)
    assert_rejected("07-1", ns, verdict, said, not_said)


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            "rows_per_name = pd.read_parquet(PROCESSED).name.value_counts() + 0 * dd.read_parquet(PROCESSED).name.value_counts().compute()",
            "contributes nothing",
        ),
        (
            "counts = dd.read_parquet(PROCESSED).name.value_counts().compute()\nrows_per_name = pd.read_parquet(PROCESSED).name.value_counts() if len(counts) else counts",
            "only in the condition",  # (review 12's rule comes first; pd.read_parquet is named without the `if`)
        ),
    ],
)
def test_07_1_a_pandas_count_beside_a_dask_count_is_rejected(code, said, client):
    """Learner review 11: a pandas count with a zero-weighted Dask count added, or returned from an `if` after one, was Correct."""
    ns, verdict = judge_answer_with_ns("07-1", "import dask.dataframe as dd\n" + code, client)
    assert_rejected("07-1", ns, verdict, said)


@pytest.mark.parametrize("code", ['speed_up = medians[1] / medians[int("2")]', 'speed_up = eval("medians[1] / medians[2]")'])
def test_07_2_a_cluster_size_written_in_a_string_is_a_size_written_out(code, client):
    """Learner review 11: `medians[int("2")]` was Correct and `eval("medians[1] / medians[2]")` was told "not made
    from median times", while `medians[2]` is "a cluster size written out"."""
    ns = notebook_namespace("07-2", client)
    if 2 not in ns["medians"]:
        pytest.skip("the namespace's timings have no size 2")
    ns, verdict = judge_answer_with_ns("07-2", code, client, ns=ns)
    assert_rejected("07-2", ns, verdict, "a cluster size written out")


def test_07_1_a_local_scheduler_that_broke_the_p2p_shuffle_is_explained(client):
    """Learner review 11: `.compute(scheduler="threads")` ended in `RuntimeError: P2P ... failed during transfer phase`,
    and the check only repeated it."""
    from .helpers import RaisedShell

    ns = notebook_namespace("07-1", client)
    answer = 'rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute(scheduler="threads")'
    shell = RaisedShell("RuntimeError: P2P 06dadf failed during transfer phase")
    ns.update(rows_per_name=..., get_ipython=lambda: shell)
    ns["In"] = ["", "import dask.dataframe as dd", answer, 'exercises.check("07-1", globals())']
    verdict = judge("07-1", ns)
    assert not verdict.correct and "asked for a local scheduler" in verdict.message and "Leave scheduler= out" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said", "not_said"),
    [
        ("speed_up = medians[1] / medians[N_MAX] * 100", "times 100", "not the ratio"),
        (
            "speed_ups = {n: medians[1] / m for n, m in medians.items()}\nspeed_up = sorted(speed_ups.values())[-1]",
            "one end of the sorted speed-ups",
            "the largest and the smallest",
        ),
    ],
)
def test_07_2_hints_name_what_the_cell_took(code, said, not_said, client):
    """Learner review 11: `* 100` was "not the ratio"; `sorted(speed_ups.values())[-1]` was "the largest and the smallest"."""
    ns = notebook_namespace("07-2", client)
    ns, verdict = judge_answer_with_ns("07-2", code, client, ns=ns)
    assert_rejected("07-2", ns, verdict, said, not_said)


def test_07_1_a_pandas_read_on_the_way_to_the_answer_is_named(client):
    code = "import dask.dataframe as dd\ncounts = dd.read_parquet(PROCESSED).name.value_counts().compute()\nrows_per_name = pd.read_parquet(PROCESSED).name.value_counts()"
    ns, verdict = judge_answer_with_ns("07-1", code, client)
    assert_rejected("07-1", ns, verdict, "reads the Parquet with pd.read_parquet")


def test_07_2_a_typed_size_in_times_is_a_size_written_out(client):
    """Learner review 13: `statistics.median(times[1]) / statistics.median(times[2])` (a size typed) was Correct."""
    ns = notebook_namespace("07-2", client)
    ns["times"] = {size: [median] * 3 for size, median in ns["medians"].items()}  # (the notebook's per-size runs)
    largest = max(ns["times"])
    assert largest != 1
    code = f"import statistics\nspeed_up = statistics.median(times[1]) / statistics.median(times[{largest}])"
    ns, verdict = judge_answer_with_ns("07-2", code, client, ns=ns)
    assert_rejected("07-2", ns, verdict, "a cluster size written out")


PERSISTED_THEN_BROUGHT_HERE = [
    'counts = dd.read_parquet(PROCESSED).groupby("name").size().persist()\nrows_per_name = counts.compute()',
    'counts = dd.read_parquet(PROCESSED).groupby("name").size()\ncounts = counts.persist()\nrows_per_name = counts.compute()',
    'counts = session.client.persist(dd.read_parquet(PROCESSED).groupby("name").size())\nrows_per_name = counts.compute()',
    'counts = dd.read_parquet(PROCESSED).groupby("name").size().persist()\nrows_per_name = session.client.gather(session.client.compute(counts))',
]


@pytest.mark.parametrize("code", PERSISTED_THEN_BROUGHT_HERE)
def test_07_1_counts_persisted_in_one_statement_and_brought_here_in_the_next_pass(code, client):
    """Learner review 23: the check runs the cell again, and its persist finds the counts the notebook still holds (the
    same graph, the same keys): the run that made them is the cell's first run, which read the Parquet and counted."""
    _, verdict = judged_cell("07-1", client, code)
    assert verdict.correct, verdict.message


def test_07_1_counts_persisted_by_another_cell_are_still_data_read_earlier(client):
    ns, verdict = judged_cell(
        "07-1", client, "rows_per_name = counts.compute()", scratch='counts = dd.read_parquet(PROCESSED).groupby("name").size().persist()'
    )
    assert_rejected("07-1", ns, verdict, "did not read the processed Parquet")


def test_07_2_a_narrow_float_is_named_as_such(client):
    """Learner reviews 22-23: np.float16(the ratio) was told "that is not the ratio of the median times"."""
    from .helpers import answer

    code = "speed_up = np.float16(medians[1] / medians[max(medians)])"
    verdict = judge("07-2", answer(notebook_namespace("07-2", client), "07-2", code))
    assert not verdict.correct and "stored as a float16" in verdict.message, verdict.message


REVIEW_25_07_1 = [
    ('rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute().reset_index(drop=True)', "the index is no longer the name codes"),
    ('rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute().rename(index=lambda c: c + 1)', "the index is no longer the name codes"),
    (
        'rows_per_name = dd.from_pandas(dd.read_parquet(PROCESSED).compute(), npartitions=2).groupby("name").size().compute()',
        "hands them back to Dask (from_pandas)",
    ),
    (
        "import pandas as pd\nrows_per_name = session.client.submit(lambda p: pd.read_parquet(p).name.value_counts(), PROCESSED).result()",
        "inside one function it hands to the cluster",
    ),
]


@pytest.mark.parametrize(("code", "said"), REVIEW_25_07_1, ids=range(len(REVIEW_25_07_1)))
def test_review_25_07_1_refusals_say_what_the_cell_did(code, said, client):
    assert_refused("07-1", client, code, said)


def test_review_25_07_1_pandas_never_imported_is_told_to_import_it():
    from gpu_dask_kit.exercises.broken import not_made

    said = not_made("NameError: name 'pd' is not defined", {"In": ["", "x = 1", "rows_per_name = pd.Series([1])"]})
    assert said is not None and "`import pandas as pd`" in said, said


@pytest.mark.parametrize(
    "code",
    [
        'rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute().astype(float)',
        "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts(normalize=True).compute() * N_INPUT_ROWS",
    ],
)
def test_review_26_07_1_counts_as_floats_are_refused(code, client):
    assert_refused("07-1", client, code, "a count of rows is a whole number")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').x.nunique().compute()", "nunique(...)"),
        ("rows_per_name = dd.read_parquet(PROCESSED).drop_duplicates().groupby('name').size().compute()", "drop_duplicates(...)"),
    ],
)
def test_review_29_07_1_distinct_counts_are_refused(code, said, client):
    """Learner review 29: the same numbers here only because no x repeats and no row is doubled."""
    assert_refused("07-1", client, "import dask.dataframe as dd\n" + code, said)


@pytest.mark.parametrize("code", ["speed_up = max(medians[1] / medians[N_MAX], 1)", "speed_up = min(medians[1] / medians[N_MAX], 2)"])
def test_review_29_07_2_a_ratio_clamped_to_a_typed_bound_is_refused(code, client):
    ns, verdict = _judged_07_2_with_runs(client, code)
    assert_rejected("07-2", ns, verdict, "picks speed_up among values")


def test_review_29_07_1_a_local_scheduler_is_named(client):
    """Learner review 29: `.compute(scheduler="sync")` was told it "did not read the processed Parquet with dask.dataframe"."""
    code = "import dask.dataframe as dd\nrows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute(scheduler='sync')"
    assert_refused("07-1", client, code, "scheduler='sync'", not_said="did not read the processed Parquet")


def test_review_29_07_1_head_of_every_partition_is_named(client):
    code = "import dask.dataframe as dd\nrows_per_name = dd.read_parquet(PROCESSED).head(N_INPUT_ROWS, npartitions=-1).name.value_counts()"
    assert_refused("07-1", client, code, "head(..., npartitions=...)", not_said="combined here by hand")


@pytest.mark.parametrize(
    "relabel",
    [
        "rows_per_name.index = range(1, len(rows_per_name) + 1)",
        "rows_per_name = rows_per_name.sort_index()\nrows_per_name.index = rows_per_name.index[::-1]",
    ],
)
def test_review_30_07_1_counts_put_under_other_codes_are_refused(relabel, client):
    """Learner review 30: value_counts sorts by count; a new index put each count beside another code, and was Correct."""
    code = "import dask.dataframe as dd\nrows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute()\n" + relabel
    assert_refused("07-1", client, code, "not under their own codes")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute().rename(index={v: k for k, v in lookups['name'].items()})",
            "codes turned back into names",
        ),
        ("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute().reindex(range(0, 27), fill_value=0)", "a reindex over a range"),
    ],
)
def test_review_31_07_1_what_happened_to_the_index_is_named(code, said, client):
    assert_refused("07-1", client, "import dask.dataframe as dd\n" + code, said)


@pytest.mark.parametrize(
    "code",
    [
        "rows_per_name = dd.read_parquet(PROCESSED).partitions[:-1].name.value_counts().compute()",
        "frame = dd.read_parquet(PROCESSED)\nrows_per_name = frame[frame.x > 0].groupby('name').size().compute()",
    ],
)
def test_review_32_07_1_counts_of_part_of_the_rows_are_named_as_rows_left_out(code, client):
    """`.partitions[:-1]` was told "count rows (not distinct values, not a column's sum)": it counted rows, of some partitions."""
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert verdict.answered and not verdict.correct and "some rows were left out" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said", "not_said"),
    [
        ("rows_per_name = dd.read_parquet(PROCESSED).x.round(1).value_counts().compute()", "counts the values of the column 'x'", "reindex"),
    ],
)
def test_review_33_07_1_the_column_counted_is_named(code, said, not_said, client):
    """`.id.value_counts()` was told "a reindex over a range adds codes" (no reindex: another column was counted)."""
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert verdict.answered and not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


def test_review_33_07_2_the_largest_cluster_size_as_the_speed_up_is_named_as_a_parameter(client):
    """`speed_up = N_MAX` was told "whatever the Dask step of this cell computes" (the cell has no Dask step)."""
    _, verdict = _judged_07_2(client, "speed_up = N_MAX", before=("N_MAX = 2", "medians = {}"), N_MAX=2)
    assert not verdict.correct and "a number the notebook sets in another cell" in verdict.message and "Dask step" not in verdict.message, verdict.message


def test_review_34_07_1_a_column_summed_is_named_not_taken_for_rows_left_out(client):
    """`groupby("name").label.sum()` (a 0/1 column) was told "some rows were left out"."""
    code = "frame = dd.read_parquet(PROCESSED)\nframe = frame.assign(label=(frame.x > 0).astype('int64'))\nrows_per_name = frame.groupby('name').label.sum().compute()"
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert not verdict.correct and "adds up a column's values (label.sum())" in verdict.message and "left out" not in verdict.message, verdict.message


@pytest.mark.parametrize("how", ["medians[1] // medians[N_MAX]", "int(medians[1] / medians[N_MAX])", "round(medians[1] / medians[N_MAX])"])
@pytest.mark.parametrize("times", [{1: [0.9, 0.845, 0.8], 2: [0.85, 0.822, 0.8]}, {1: [1.9, 1.8, 1.7], 2: [1.1, 1.0, 0.9]}])
def test_review_35_07_2_a_ratio_cut_to_a_whole_number_is_refused(how, times, client):
    """Medians 0.845 and 0.822 (speed-up 1.03): `//`, int() and round() gave 1 and were Correct ("rounded as shown");
    with 1.8 and 1.0, round() gave 2 and was told "speed_up is `N_MAX`"."""
    medians = {n: sorted(t)[1] for n, t in times.items()}
    _, verdict = _judged_07_2(client, f"speed_up = {how}", all_times=times, N_MAX=2, medians=medians)
    assert not verdict.correct and "is a whole number" in verdict.message and "`N_MAX`" not in verdict.message, verdict.message


def test_review_37_07_1_a_head_after_the_count_is_not_said_to_count_here(client):
    """`value_counts().head(26, npartitions=-1)` was told "everything after it (the count) runs here" (the count came first)."""
    code = "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().head(5, npartitions=-1)"
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert not verdict.correct and "the workers counted, but a head keeps" in verdict.message and "runs here" not in verdict.message, verdict.message


def test_07_1_cudfs_failing_size_is_named_a_cudf_defect_with_what_to_count_with_instead(shell, client):
    """H100 run, fourteenth session: on a GPU, `dd.read_parquet(PROCESSED).groupby("name").size().compute()` fails in
    cuDF 26.10.2 (`ValueError: The truth value of a Series is ambiguous`: its size() takes frame.name, the column) and the
    check said only "failed when it last ran". pandas does not fail, so the cell raises cuDF's error itself here."""
    cudf_error = "raise ValueError('The truth value of a Series is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all().')"
    ns = cells_in_shell(shell, "07-1", client, 'rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute()\n' + cudf_error)
    verdict = judge("07-1", ns)
    assert verdict.message.startswith("Could not be checked (07-1): This is a cuDF defect"), verdict.message
    assert "column called `name`" in verdict.message and "value_counts() of the key column" in verdict.message, verdict.message
    # the same error from a cell that calls no size() (a Series in an `if`) is not called cuDF's
    ns = cells_in_shell(shell, "07-1", client, 'rows_per_name = dd.read_parquet(PROCESSED)["name"].value_counts().compute()\nif rows_per_name:\n    pass')
    verdict = judge("07-1", ns)
    assert "failed when it last ran (ValueError" in verdict.message and "cuDF" not in verdict.message, verdict.message


@pytest.mark.parametrize("code", ["speed_up = medians[1] / medians[max(medians)]", "speed_up = medians[1] / medians[N_MAX]"])
def test_07_2_on_a_machine_with_one_gpu_the_ratio_of_the_one_size_is_right(client, code):
    """H100, fourteenth session: one GPU gives medians = {1: t}; the reference answer was told it "does not follow the
    times in medians" (with one size, any times give the same ratio), and "Correct" spoke of a speed-up on 1 workers."""
    one = {1: [0.97, 0.87, 0.94]}
    _, verdict = _judged_07_2(client, code, all_times=one, medians={1: 0.94}, N_MAX=1)
    assert verdict.correct and "compared with itself" in verdict.message, verdict.message
    _, verdict = _judged_07_2(client, "speed_up = 1.0", all_times=one, medians={1: 0.94}, N_MAX=1)
    assert not verdict.correct and "typed" in verdict.message, verdict.message


def test_review_48_07_1_a_count_guarded_by_an_else_none_is_said_to_leave_none(client):
    """Learner review 48: `....compute() if len(dd.read_parquet(PROCESSED)) else None` was told it "makes the value in one
    part of an `if ... else` without Dask" (the other part is None: no value)."""
    code = "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute() if len(dd.read_parquet(PROCESSED)) else None"
    verdict = judge("07-1", run_without(code, "07-1", client, "processed"))
    assert not verdict.correct and "leaves the value None" in verdict.message and "without Dask" not in verdict.message, verdict.message


def test_review_50_07_1_counts_turned_into_text_are_named(client):
    """Learner review 50: `value_counts().compute().astype(str)` was told "the counts do not add up to the number of rows"."""
    code = "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute().astype(str)"
    assert_refused("07-1", client, code, "values, not a number type (text, categories, objects): a count of rows", not_said="do not add up")
    code = code.replace("astype(str)", "astype('category')")  # (learner review 51: category values were called text)
    assert_refused("07-1", client, code, "holds category values, not a number type", not_said="do not add up")


def test_review_52_07_1_counts_in_a_type_too_small_are_said_to_wrap_around(client):
    """Learner review 52: `.astype("int8")` (counts of about 2000 wrap around) was told "the counts do not add up ... not
    distinct values, not a column's sum"."""
    code = "rows_per_name = dd.read_parquet(PROCESSED).name.value_counts().compute().astype('int8')"
    assert_refused("07-1", client, code, "holds int8 numbers, too small a type for these counts", not_said="do not add up")
