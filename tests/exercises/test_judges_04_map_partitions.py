# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 04's exercise judges: 04-1 (``demeaned``, map_partitions with the right meta) and 04-2
(``rows_in_partition_2``, counted from that one partition), each with answer cells learners wrote in review, and what
the check says after a restart, the close cell, or ``ddf`` made again."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..helpers import cancel_last_made_first
from ..test_exercises_cases import DEMEAN
from ..test_exercises_corpus import _run, namespace
from .helpers import assert_refused, cells_in_shell, judged, judged_cell, notebook_namespace

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


def test_a_check_names_only_the_gone_data_the_answer_cell_reads(client):
    """Review 6, item 7 (04): after a restart the check listed every stale name of the notebook (sorted_ddf, scaled, ...),
    when the answer cell needs only ddf."""
    from distributed import wait

    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    ns["scaled"] = (ns["ddf"].x * 2).persist()
    wait(ns["scaled"])
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    ns["In"] = ["", "ddf = make().persist()", "scaled = (ddf.x * 2).persist()", code, 'exercises.check("04-1", globals())']
    cancel_last_made_first(client, ns["ddf"], ns["scaled"])
    verdict = judge("04-1", ns)
    assert not verdict.correct and "`ddf` (In [1])" in verdict.message and "scaled" not in verdict.message, verdict.message


def test_04_1_a_right_answer_made_before_ddf_was_made_again_is_told_so(client):
    """Review 6, item 6: after set-up cells 2+3 ran again, a right 04-1 answer was told "the data came to this notebook
    and went back"; it was made from the ddf of before."""
    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    remade = namespace("04-1", client)  # the set-up cells again: a new persisted ddf and its fingerprint
    ns.update(ddf=remade["ddf"], ddf_fingerprint=remade["ddf_fingerprint"])
    ns["In"] = ["", "ddf = make().persist()", code, "ddf = make().persist()", 'exercises.check("04-1", globals())']
    verdict = judge("04-1", ns)
    assert not verdict.correct and "ddf was made again (In [3])" in verdict.message and "went back" not in verdict.message, verdict.message


@pytest.mark.parametrize("placeholder", ["", "demean = ...\ndemeaned = ..."])
def test_04_1_after_the_close_cell_the_check_names_ddf_too(client, placeholder):
    """Review 6, item 7: after the close cell, 04's check said "re-run the set-up cell, then your answer cell": ddf
    (persisted on the closed cluster) must be made again too. Learner review 49: not named when the notebook's
    unanswered cell (`demean = ...`) had run before the answer cell (it was taken for the answer cell of `demean`)."""
    import dask
    from distributed import Client, LocalCluster, wait

    from ..test_exercises_corpus import Session

    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        own = Client(cluster, set_as_default=False)
        ns = namespace("04-1", client)
        ns["session"] = Session(own)
        ns["ddf"] = own.persist(dask.datasets.timeseries(start="2000-01-01", end="2000-01-03", freq="3600s", seed=3))
        wait(ns["ddf"])
        exec(compile(code, "<answer 04-1>", "exec"), ns)
        ns["In"] = ["", "session = kit.start_cluster()", "ddf = make().persist()", placeholder, code, "session.close()", 'exercises.check("04-1", globals())']
        own.close()
    verdict = judge("04-1", ns)
    assert not verdict.correct and "the cluster is closed" in verdict.message and "`ddf` (In [2])" in verdict.message, verdict.message


def test_04_1_meta_with_another_dtype_than_the_partitions_hold_is_not_accepted(client):
    """Review 7, item 3: before, "Correct" (meta said int64, the partitions hold float64)."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean, meta=dict(ddf.dtypes.to_dict(), x_demeaned='int64'))"
    verdict = judged("04-1", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "declares x_demeaned as int64" in verdict.message and "float64" in verdict.message, verdict.message
    right = code.replace("x_demeaned='int64'", "x_demeaned='float64'")
    assert judged("04-1", client, right).correct


def test_04_1_ddf_made_again_after_a_right_answer_cannot_be_checked(client):
    """Review 8: after a right answer, re-running the cell that makes ddf labelled it "Not yet"."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    ns["ddf"] = ns["ddf"].map_partitions(lambda d: d).persist()  # ddf made again, after the answer
    ns["In"] = ["", code, "ddf = ddf.map_partitions(lambda d: d).persist()", 'exercises.check("04-1", globals())']
    verdict = judge("04-1", ns)
    assert verdict.message.startswith("Could not be checked (04-1): ddf was made again"), verdict.message


def test_04_1_a_client_call_inside_demean_that_dask_cannot_name_is_explained(shell, client):
    """Learner review 10: `session.client.compute(...).result()` inside demean made the answer cell raise
    TokenizationError, and the check said only "raised TokenizationError", not what to change."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df.x - session.client.compute(ddf.x.mean()).result())\n\ndemeaned = ddf.map_partitions(demean)"
    ns = cells_in_shell(shell, "04-1", client, "import dask", code)
    verdict = judge("04-1", ns)
    assert not verdict.correct and "TokenizationError" in verdict.message, verdict.message
    assert "cannot be copied to a worker" in verdict.message and "outside it" in verdict.message, verdict.message


def test_04_1_an_array_of_the_partition_changed_in_place_is_named(shell, client):
    """Learner reviews 26-28: `x -= x.mean()` on `df.x.to_numpy()` (read-only in pandas 3) failed Dask's metadata
    inference, and the check blamed "a read of the whole Dask frame" (the function reads none)."""
    code = "def demean(df):\n    x = df.x.to_numpy()\n    x -= x.mean()\n    return df.assign(x_demeaned=x)\n\ndemeaned = ddf.map_partitions(demean)"
    ns = cells_in_shell(shell, "04-1", client, "import dask", code)
    verdict = judge("04-1", ns)
    assert not verdict.correct and "changes, in place, an array that belongs to the partition" in verdict.message, verdict.message
    assert "whole Dask frame" not in verdict.message, verdict.message


def test_04_2_a_slice_of_the_whole_frame_is_told_it_read_every_partition(client):
    """Learner review 10: a guessed slice of the gathered frame that happened to be partition 4's length got "that is the
    row count of partition 4", not what went wrong (every row came to the notebook, and the slice was a guess)."""
    ns = namespace("04-2", client)
    rows = len(ns["ddf"].partitions[3])
    verdict = judged("04-2", client, f"rows_in_partition_2 = len(ddf.compute().iloc[{rows + 7}:{2 * rows + 7}])")
    assert verdict.answered and not verdict.correct, verdict.message
    assert "partitions of ddf (or send them all here)" in verdict.message and "partition 3" not in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("rows_in_partition_2 = ddf.partitions[2].compute().size // len(ddf.columns)", "undoes the columns by hand"),
        ("rows_in_partition_2 = str(len(ddf.partitions[2]))", "is a str"),
    ],
)
def test_04_2_a_count_through_size_or_as_text_is_rejected(code, said, client):
    """Learner review 11: `.size // 4` (the column count undone by hand) and `str(len(...))` were Correct."""
    verdict = judged("04-2", client, code)
    assert verdict.answered and not verdict.correct and said in verdict.message, verdict.message


def test_04_2_another_partition_of_the_same_length_is_named(client):
    """Learner review 11: the right count read from another partition was told "went through 1 partitions (every partition ...)"."""
    import dask
    from distributed import wait

    even = client.persist(dask.datasets.timeseries(start="2000-01-01", end="2000-01-05", freq="600s", seed=11))  # one day each
    wait(even)
    lengths = list(even.map_partitions(len).compute())
    assert lengths[3] == lengths[2], lengths
    verdict = judged("04-2", client, "rows_in_partition_2 = len(ddf.partitions[3])", ddf=even)
    assert not verdict.correct and "counted partition 3" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "correct", "said"),
    [
        ("rows_in_partition_2 = int(ddf.partitions[2].index.size.compute())", True, ""),  # review 12: an Index's size is its rows
        ("rows_in_partition_2 = len(ddf.partitions[2]) * (ddf.npartitions // {n})", False, "a factor that is 1 here"),
        ("rows_in_partition_2 = len(ddf.partitions[2]) * len(ddf.columns) // {c}", False, "a factor that is 1 here"),
    ],
)
def test_04_2_review_12_an_index_size_passes_and_a_factor_of_one_does_not(code, correct, said, client):
    """Learner review 12: `.index.size` (rows) was refused as `.size` (cells); a typed count hidden in a factor of 1 passed."""
    ns = namespace("04-2", client)
    verdict = judged("04-2", client, code.replace("{n}", str(ns["ddf"].npartitions)).replace("{c}", str(len(ns["ddf"].columns))))
    assert verdict.correct is correct and said in verdict.message, verdict.message


def test_04_review_13_a_typed_count_that_cancels_and_a_float32_column_are_named(client):
    """Learner review 13: `+ ddf.npartitions - 8` (a typed partition count adding 0) was Correct; a float32 x_demeaned
    was told "check which column you subtract from"."""
    n = namespace("04-2", client)["ddf"].npartitions
    verdict = judged("04-2", client, f"rows_in_partition_2 = len(ddf.partitions[2]) + ddf.npartitions - {n}")
    assert not verdict.correct and "adds terms that are 0 here" in verdict.message, verdict.message
    code = "def demean(df):\n    return df.assign(x_demeaned=(df.x - df.x.mean()).astype('float32'))\n\ndemeaned = ddf.map_partitions(demean)"
    verdict = judged("04-1", client, code)
    assert not verdict.correct and "smaller float type" in verdict.message, verdict.message


REVIEW_24_04_1 = [
    (
        "demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean()).reset_index(drop=True)\ndemeaned = ddf.map_partitions(demean)",
        "keep the partition's index",
    ),
    ("demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean()).reset_index()\ndemeaned = ddf.map_partitions(demean)", "keep the partition's index"),
    (
        "m = ddf.x.mean().compute()\ndemean = lambda df: df.assign(x_demeaned=df.x - m)\ndemeaned = ddf.map_partitions(lambda df: df.assign(x_demeaned=df.x - df.x.mean()))",
        "your demean",
    ),
    (
        "demean = lambda df: df.assign(x_demeaned=df.x)\ndemeaned = ddf.map_partitions(lambda df: df.assign(x_demeaned=df.x - df.x.mean()))",
        "your demean",
    ),
]


@pytest.mark.parametrize(("code", "said"), REVIEW_24_04_1, ids=range(len(REVIEW_24_04_1)))
def test_review_24_04_1_an_index_thrown_away_or_another_function_mapped_is_refused(code, said, client):
    assert_refused("04-1", client, code, said)


def test_review_24_04_1_rows_sorted_within_a_partition_are_named(client):
    """Review 24 had this pass (the labels are kept); review 36 counted a sort inside demean as a false accept: the
    partition's timestamps are no longer in order. Refused, saying so."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df.x - df.x.mean()).sort_values('x')\ndemeaned = ddf.map_partitions(demean)"
    assert_refused("04-1", client, code, "in another order (a sort?)")


DEMEAN_FN = "def demean(df):\n    return df.assign(x_demeaned=df.x - df.x.mean())\n"
REVIEW_25_04 = [
    (
        "04-2",
        # round, not int: with some of the corpus' seeds sum / mean is 123.99999..., which int() makes 123
        "rows_in_partition_2 = int(round(ddf.partitions[2].x.sum().compute() / ddf.partitions[2].x.mean().compute()))",
        "nothing in your answer cell counts rows",
    ),
    (
        "04-2",
        "import pandas as pd\np = ddf.partitions[2]\nrows_in_partition_2 = int((p.index.max() - p.index.min()).compute() / pd.Timedelta('600s')) + 1",
        "nothing in your answer cell counts rows",
    ),
    (
        "04-1",
        DEMEAN_FN + "demeaned = ddf.map_partitions(demean)\ndemeaned = demeaned.assign(x_demeaned=demeaned.x_demeaned.round(3))",
        "rounded after the subtraction",
    ),
    ("04-1", "def demean(df):\n    return df.assign(x_demeaned=df.x - df.x.mean()).iloc[1:]\ndemeaned = ddf.map_partitions(demean)", "it must keep every row"),
]


REVIEW_26_04 = [
    ("04-1", "demean = lambda df: df.assign(x_demeaned=df.x - df.x.median())\ndemeaned = ddf.map_partitions(demean)", "check which column you subtract from"),
    ("04-1", "demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean())\nddf = ddf.map_partitions(demean)\ndemeaned = ddf", "your answer cell assigns ddf"),
    (
        "04-1",
        "demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean())\nday = ddf.index.to_series().dt.floor('D')\n"
        "demeaned = ddf.assign(x_demeaned=ddf.x - ddf.groupby(day).x.transform('mean'))",
        "could not be checked",
    ),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute())", "has no missing values, as this one happens to"),
]


@pytest.mark.parametrize(("key", "code", "said"), REVIEW_25_04 + REVIEW_26_04, ids=range(len(REVIEW_25_04 + REVIEW_26_04)))
def test_review_25_04_refusals_say_what_the_cell_did(key, code, said, client):
    assert_refused(key, client, code, said)


def test_review_25_04_2_a_sum_of_ones_counts_and_passes(client):
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = int(ddf.partitions[2].assign(one=1).one.sum().compute())")
    assert verdict.correct, verdict.message


DEMEAN_LAMBDA = "demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean())\n"
REVIEW_27_04 = [
    (
        "04-1",
        "import dask.dataframe as dd\n" + DEMEAN_LAMBDA + "means = [ddf.partitions[i].x.mean().compute() for i in range(ddf.npartitions)]\n"
        "demeaned = dd.concat([ddf.partitions[i].assign(x_demeaned=ddf.partitions[i].x - means[i]) for i in range(ddf.npartitions)])",
        "not made by mapping demean",
    ),
    (
        "04-1",
        "import dask.dataframe as dd\n" + DEMEAN_LAMBDA + "demeaned = dd.concat([p.assign(x_demeaned=p.x - p.x.mean()) for p in ddf.partitions])",
        "not made by mapping demean",
    ),
    ("04-1", DEMEAN_LAMBDA + "demeaned = ddf.map_overlap(demean, 2, 0)", "map_overlap"),
    (
        "04-1",
        "def demean(df, partition_info=None):\n    bump = 5.0 if partition_info and partition_info['number'] == 2 else 0.0\n"
        "    return df.assign(x_demeaned=df.x - df.x.mean() + bump)\ndemeaned = ddf.map_partitions(demean)",
        "in partition 2, x_demeaned does not average to 0",
    ),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 1.0", "is a float"),
]


@pytest.mark.parametrize(("key", "code", "said"), REVIEW_27_04, ids=range(len(REVIEW_27_04)))
def test_review_27_04_refused(key, code, said, client):
    assert_refused(key, client, code, said)


@pytest.mark.parametrize("mapped", ["ddf.map_partitions(lambda df: demean(df))", "ddf.map_partitions(demean, meta=ddf._meta.assign(x_demeaned=0.0))"])
def test_review_27_04_1_demean_mapped_in_other_styles_passes(mapped, client):
    _, verdict = judged_cell("04-1", client, DEMEAN_LAMBDA + f"demeaned = {mapped}")
    assert verdict.correct, verdict.message


def test_review_28_04_1_another_column_demeaned_in_one_partition_is_refused(client):
    code = (
        "def demean(df, partition_info=None):\n    if partition_info and partition_info['number'] == 3:\n"
        "        return df.assign(x_demeaned=df.y - df.y.mean())\n    return df.assign(x_demeaned=df.x - df.x.mean())\n"
        "demeaned = ddf.map_partitions(demean)"
    )
    assert_refused("04-1", client, code, "in partition 3, x_demeaned is not x minus the mean of x")


REVIEW_29_04 = [
    # the refusal was right, the reason ("a loop over ddf.partitions, concat") was not
    ("04-1", DEMEAN_LAMBDA + "demeaned = ddf.assign(x_demeaned=ddf.x - ddf.x.mean())", "ONE mean of the whole frame"),
    (
        "04-1",
        "import dask.dataframe as dd\n" + DEMEAN_LAMBDA + "pdf = ddf.compute()\ndemeaned = dd.from_pandas(demean(pdf), npartitions=8)",
        "ddf's rows came here and were sent back",
    ),
    # contrived accepts
    (
        "04-1",
        DEMEAN_LAMBDA + "demeaned = ddf.map_partitions(demean)\ndemeaned = demeaned.assign(x_demeaned=demeaned.x_demeaned + 0 * demeaned.y)",
        "multiplies part of the expression by 0",
    ),
    ("04-2", "rows_in_partition_2 = max(len(ddf.partitions[2]), 1)", "picks rows_in_partition_2 among values"),
    ("04-2", "rows_in_partition_2 = round(len(ddf.partitions[2]), -1)", "rounds the count"),
]


@pytest.mark.parametrize(("key", "code", "said"), REVIEW_29_04, ids=range(len(REVIEW_29_04)))
def test_review_29_04_refused_for_what_the_cell_did(key, code, said, client):
    assert_refused(key, client, code, said)


@pytest.mark.parametrize(
    ("after", "said"),
    [
        (".drop(columns=['y'])", "columns dropped"),
        ("\ndemeaned = demeaned[demeaned.x_demeaned.notnull()]", "rows filtered"),
        (".fillna(0)", "values filled in"),
        (".set_index('id')", "a new index set"),  # learner review 31: Dask's class name (SetIndex) was shown
        (".reset_index()", "the index reset"),
    ],
)
def test_review_30_04_1_a_step_on_top_of_the_mapped_frame_is_named(after, said, client):
    """Learner review 30: .drop(columns=...) after mapping was told about meta=, a filter "maps another function", and
    .fillna(0) passed."""
    code = DEMEAN_LAMBDA + f"demeaned = ddf.map_partitions(demean){after}"
    assert_refused("04-1", client, code, said, not_said="meta=")


def test_review_30_04_2_a_count_rounded_by_hand_is_refused(client, monkeypatch):
    """Learner review 30: `int(round(len(ddf.partitions[2]) / 100) * 100)` passed while partition 2 held 41200 rows. The
    corpus' partition 2 holds 124 rows: rounded to even numbers, and one row taken off by the check, the answer stays."""
    from gpu_dask_kit.exercises import catalog_b

    monkeypatch.setattr(catalog_b, "SHORTER", 1)
    assert_refused("04-2", client, "rows_in_partition_2 = int(round(len(ddf.partitions[2]) / 2) * 2)", "does not follow the data")
    # learner review 31: rounded down, the answer changed with the data, but not by the rows taken off
    assert_refused("04-2", client, "n = len(ddf.partitions[2])\nrows_in_partition_2 = n - n % 2", "did not give 1 fewer")
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2])")
    assert verdict.correct, verdict.message


def test_review_32_04_1_an_in_place_sort_inside_demean_is_named(client):
    """Learner review 32: `df.sort_values("id", inplace=True)` inside demean made the check fail with a pandas error."""
    code = "def demean(df):\n    df.sort_values('id', inplace=True)\n    return df.assign(x_demeaned=df.x - df.x.mean())\ndemeaned = ddf.map_partitions(demean)"
    assert_refused("04-1", client, code, "demean changed the frame it was given", not_said="could not be checked")


def test_review_33_04_1_means_computed_in_the_notebook_and_looked_up_in_demean_are_refused(client):
    """Means per partition, computed before and looked up inside demean (by each partition's first index), were Correct:
    right only because the lookup matches the partitions."""
    code = (
        "part_means = {str(df.index[0]): m for df, m in zip([ddf.partitions[i].compute() for i in range(ddf.npartitions)], "
        "[ddf.partitions[i].x.mean().compute() for i in range(ddf.npartitions)])}\n"
        "def demean(df):\n    return df.assign(x_demeaned=df.x - part_means[str(df.index[0])])\n\n"
        "demeaned = ddf.map_partitions(demean, meta={**dict(ddf.dtypes), 'x_demeaned': 'float64'})"
    )
    assert_refused("04-1", client, code, "demean reads `part_means`, made outside it")


def test_review_35_04_1_demean_mapped_over_another_frame_is_named(client):
    """`result.map_partitions(demean)` (another persisted frame) was told "the data came to this notebook and went back"."""
    result = "result = dask.datasets.timeseries(start='2001-01-01', end='2001-01-03', freq='600s', seed=1).persist()\n"
    code = DEMEAN + result + "demeaned = result.map_partitions(demean)"
    assert_refused("04-1", client, code, "maps demean over `result`, not over ddf itself", not_said="came to this notebook")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (DEMEAN + "sorted_ddf = ddf.map_partitions(lambda df: df.sort_values('id'))\ndemeaned = sorted_ddf.map_partitions(demean)", "over `sorted_ddf`"),
        (DEMEAN + "demeaned = ddf[ddf.x > 0].map_partitions(demean)", "over `ddf[ddf.x > 0]`"),
        (DEMEAN + "demeaned = ddf[['x', 'y']].map_partitions(demean)", "over `ddf[['x', 'y']]`"),
        (
            "def demean(df):\n    return df.sort_values('id').assign(x_demeaned=lambda d: d.x - d.x.mean())\n\ndemeaned = ddf.map_partitions(demean)",
            "in another order",
        ),
    ],
)
def test_review_36_04_1_another_frame_or_another_row_order_is_refused(code, said, client):
    assert_refused("04-1", client, code, said, not_said="(from meta=)")


def test_review_36_04_1_a_name_holding_ddf_itself_passes(client):
    _, verdict = judged_cell("04-1", client, DEMEAN + "frame = ddf\ndemeaned = frame.map_partitions(demean)")
    assert verdict.correct, verdict.message


def test_review_37_04_2_the_index_brought_here_is_not_said_counted_by_the_workers(client):
    """Learner reviews 37-38: `len(ddf.partitions[2].index.compute())` was praised as "counted by the workers" (the
    index came to the notebook and was counted there)."""
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2].index.compute())")
    assert verdict.correct and "(or its index) was brought here, then counted" in verdict.message, verdict.message
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2])")
    assert verdict.correct and "counted by the workers" in verdict.message, verdict.message


def test_review_38_04_1_ddf_overwritten_by_another_step_is_not_called_the_mapped_frame(client):
    """Learner reviews 37-38: `ddf = ddf.assign(z=1)` in the answer cell was called "the mapped frame"."""
    code = "def demean(df):\n    return df.assign(x_demeaned=df.x - df.x.mean())\n\nddf = ddf.assign(z=1)\ndemeaned = ddf.map_partitions(demean)"
    assert_refused("04-1", client, code, "your answer cell assigns ddf (ddf = ddf.assign(z=1))", not_said="mapped frame.")


def test_review_39_04_1_after_a_new_cluster_an_earlier_answer_cell_is_not_named_among_the_cells_to_run(client):
    """Learner reviews 38-39: after the close cell and a new cluster, the check named a wrong answer cell of 04-1 that
    overwrote ddf (`ddf = ddf.assign(z=1)`) among "the cells that make `ddf`": running it again breaks ddf again."""
    from distributed import Client, LocalCluster, wait

    ns = notebook_namespace("04-1", client)
    right = "def demean(df):\n    return df.assign(x_demeaned=df.x - df.x.mean())\n\ndemeaned = ddf.map_partitions(demean)"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as other, Client(other, set_as_default=False) as old:
        import dask

        held = old.persist(dask.datasets.timeseries(start="2000-01-01", end="2000-01-03", freq="1h", seed=1))
        wait(held)
        ns["ddf"] = held.assign(z=1)
    exec(right, ns)
    ns["In"] = ["", "ddf = make_ddf().persist()", "ddf = ddf.assign(z=1)\ndemeaned = ddf", right, 'exercises.check("04-1", globals())']
    verdict = judge("04-1", ns)
    assert "the cell that makes `ddf` (In [1])" in verdict.message and "In [2]" not in verdict.message, verdict.message


def test_review_41_04_2_a_row_cap_above_the_count_is_refused_and_a_loop_counting_rows_passes(client):
    """Learner review 41: `len(ddf.partitions[2].head(100000, npartitions=1))` (a cap written out, above the count) was
    "Correct ... (counted by the workers)"; `sum(1 for _ in ....itertuples())` was told "the loop's values are not used"."""
    code = "rows_in_partition_2 = len(ddf.partitions[2].head(100000, npartitions=1))"
    assert_refused("04-2", client, code, "caps the rows it counts (head(100000): at most that many)", not_said="counted by the workers")
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = sum(1 for _ in ddf.partitions[2].compute().itertuples())")
    assert verdict.correct and "brought here, then counted" in verdict.message, verdict.message


def test_review_42_04_describe_count_and_a_compute_inside_demean_with_meta_are_worded_for_what_they_are(client):
    """Learner review 42: `describe().loc["count", "x"]` (values that are not missing, as count() is) was "Correct";
    a `.compute()` inside demean with meta= given was told Dask calls demean on a made-up partition (not with meta=)."""
    code = 'rows_in_partition_2 = int(ddf.partitions[2].compute().describe().loc["count", "x"])'
    assert_refused("04-2", client, code, "describe()'s count is the number of values that are NOT missing")
    code = (
        "def demean(df):\n    return df.assign(x_demeaned=df.x - ddf.x.mean().compute())\n\n"
        "demeaned = ddf.map_partitions(demean, meta=ddf._meta.assign(x_demeaned=0.0))"
    )
    assert_refused("04-1", client, code, "(and, without meta=, Dask also calls demean", not_said="and Dask also calls demean")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("rows_in_partition_2 = int(ddf.partitions[2].compute().name.value_counts().sum())", "value_counts() leaves the missing values out"),
        ("rows_in_partition_2 = int(ddf.partitions[2].compute().groupby('name').size().sum())", "a groupby leaves out the rows whose key is missing"),
    ],
)
def test_review_43_04_2_counts_that_leave_missing_keys_out_are_named(code, said, client):
    """Learner review 43: value_counts().sum() and groupby(...).size().sum() (missing names left out) were "Correct"."""
    assert_refused("04-2", client, code, said)


def test_review_44_04_2_rows_without_a_missing_value_counted_with_notna_are_named(client):
    """Learner review 44: `notna().all(axis=1).sum()` (the rows with no missing value, as dropna()) was "Correct"."""
    code = "rows_in_partition_2 = int(ddf.partitions[2].compute().notna().all(axis=1).sum())"
    assert_refused("04-2", client, code, "notna() marks the values that are NOT missing")


def test_review_48_04_2_a_factor_that_reads_the_partition_count_is_not_said_to_compute(client):
    """Learner review 48: `len(ddf.partitions[2]) * (ddf.npartitions > 1)` was told it "computes with Dask only in a
    comparison" (npartitions is known without computing)."""
    code = "rows_in_partition_2 = len(ddf.partitions[2]) * (ddf.npartitions > 1)"
    assert_refused("04-2", client, code, "multiplies by a test (ddf.npartitions > 1: True counts as 1", not_said="computes with Dask only")


def test_review_48_04_1_means_picked_by_partition_info_are_named(client):
    """Learner reviews 46-48: the means computed first and picked by `partition_info["number"]` (partition 1 alone is
    numbered 0) were refused with "check which column you subtract from" (the column was right)."""
    code = (
        "means = ddf.map_partitions(lambda d: d.x.mean()).compute().tolist()\n"
        "def demean(df, partition_info=None):\n"
        "    m = means[partition_info['number']] if partition_info else df.x.mean()\n"
        "    return df.assign(x_demeaned=df.x - m)\n\n"
        "demeaned = ddf.map_partitions(demean)"
    )
    assert_refused("04-1", client, code, "demean takes partition_info, and a selection of partitions is numbered from 0 again", not_said="which column")


def test_review_49_04_1_another_function_mapped_after_demean_is_not_said_to_map_demean_over_it(client):
    """Learner review 49: `ddf.map_partitions(demean).map_partitions(lambda d: d.sort_index())` was told "demeaned maps
    demean over `ddf.map_partitions(demean)`" (the outer map is the lambda; demean is mapped over ddf)."""
    code = DEMEAN + "demeaned = ddf.map_partitions(demean).map_partitions(lambda d: d.sort_index())"
    assert_refused(
        "04-1", client, code, "changed after demean was mapped over ddf (a step on top of the mapped frame: another function", not_said="maps demean over"
    )


def test_review_50_04_2_an_answer_cell_that_repartitions_ddf_is_named(client):
    """Learner review 50: `ddf = ddf.repartition(npartitions=4)` in 04-2's answer cell was told the value "changes from
    one run" (the answer cell rebinds ddf)."""
    code = "ddf = ddf.repartition(npartitions=4)\nrows_in_partition_2 = len(ddf.partitions[2])"
    assert_refused("04-2", client, code, "your answer cell assigns ddf (ddf = ddf.repartition(npartitions=4))", not_said="changes from")


def test_review_50_04_2_a_partition_brought_here_then_counted_is_said_so(client):
    """Learner review 50: `len(ddf.partitions[2].compute())` passed "(counted by the workers)" in the reviewer's kernel
    (not reproduced here nor in a fresh kernel, where the tasks' names already say so); the answer cell's own code now
    decides it too (`_counted_after_compute`)."""
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2].compute())")
    assert verdict.correct and "brought here, then counted" in verdict.message, verdict.message


def test_review_50_after_the_close_cell_an_overridden_cell_making_ddf_is_not_named():
    """Learner review 50: after a 04-2 answer cell `ddf = ddf.repartition(...)` (In [4]) and the set-up cell run again
    (In [5]), the re-run sentence named "In [5] then In [4]" (running In [4] after In [5] breaks ddf again)."""
    from gpu_dask_kit.notebook.rerun import cells_making

    setup = "ddf = make()\nddf = ddf.persist()"
    history = ["", "session = kit.start_cluster()", setup, "x = 1", "ddf = ddf.repartition(npartitions=4)\nn = len(ddf.partitions[2])", setup]
    assert cells_making(history, "ddf") == [5]


def test_review_55_04_2_a_zero_in_an_except_branch_that_did_not_run_is_not_called_typed_in(client):
    """Learner review 55: the column count computed in a `try`, with `= 0` in the `except`, was "typed into the answer
    cell" (the last assignment in the text, not the one that ran)."""
    code = "try:\n    rows_in_partition_2 = ddf.partitions[2].compute().shape[1]\nexcept Exception:\n    rows_in_partition_2 = 0"
    assert_refused("04-2", client, code, "that is the number of columns of the frame", not_said="typed into the answer cell")


def test_review_57_04_2_a_partition_shown_with_head_in_a_print_then_counted_passes(client):
    """Learner review 57: `print(p2.head(2), ...)` beside `p2.shape[0]` was told the cell "caps the rows it counts"."""
    code = "p2 = ddf.partitions[2].compute()\nprint(p2.head(2), p2.index.min(), p2.index.max())\nrows_in_partition_2 = p2.shape[0]"
    _, verdict = judged_cell("04-2", client, code)
    assert verdict.correct, verdict.message


def test_review_57_04_2_another_partitions_length_from_all_the_lengths_is_named(client):
    """Learner review 57: `sizes[1]` of every partition's length was told "where partition 2 starts and ends ... is a guess"."""
    code = "import numpy as np\nsizes = np.asarray(ddf.map_partitions(len).compute())\nrows_in_partition_2 = int(sizes[1])"
    assert_refused("04-2", client, code, "that is the row count of partition 1: partitions are numbered from 0", not_said="a guess")


P2_PERSISTED = "from distributed import wait\np2 = ddf.partitions[2].persist()\nwait(p2)"


def test_review_58_04_2_with_partition_2_persisted_by_the_learner_the_right_count_passes(client):
    """Learner review 58: after `p2 = ddf.partitions[2].persist(); wait(p2)` (cell 20's pattern) every right answer,
    `len(ddf.partitions[2])` too, was "did not have the workers count partition 2 by itself" (nothing of partition 2
    ran again: it was already in the workers' memory)."""
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2])", scratch=P2_PERSISTED)
    assert verdict.correct, verdict.message


def test_review_58_04_2_a_slice_of_partitions_is_named_as_several_partitions(client):
    """Learner review 58: `len(ddf.partitions[1:3])` was told it "counted a part" and guessed where partition 2 starts."""
    code = "rows_in_partition_2 = len(ddf.partitions[1:3])"
    assert_refused("04-2", client, code, "ddf.partitions[1:3] is a frame of several partitions", not_said="is a guess")


def test_review_58_04_1_a_column_typo_that_fails_metadata_inference_points_at_the_error_first(shell, client):
    """Learner review 58: `df["X"]` (a KeyError at Dask's metadata inference) was explained only by reads of the whole
    frame and lookups of made-up values."""
    code = 'demean = lambda df: df.assign(x_demeaned=df["X"] - df["X"].mean())\ndemeaned = ddf.map_partitions(demean)'
    ns = cells_in_shell(shell, "04-1", client, code)
    verdict = judge("04-1", ns)
    assert not verdict.correct and "Read the error at the end first: an ordinary mistake in the function" in verdict.message, verdict.message


def test_review_59_04_1_a_demean_that_renames_its_arguments_index_is_refused(client):
    """Learner review 59: `df.index.name = "t"` inside demean changed the persisted partitions, and the check said
    "the persisted ddf is unchanged (checked against its fingerprint)": the fingerprint now holds the index names."""
    code = 'def demean(df):\n    df.index.name = "t"\n    return df.assign(x_demeaned=df["x"] - df["x"].mean())\n\ndemeaned = ddf.map_partitions(demean)'
    _, verdict = judged_cell("04-1", client, code)
    assert not verdict.correct and "its index is named ['t']" in verdict.message, verdict.message


def test_review_59_04_2_a_computed_count_of_a_persisted_partition_2_passes(client):
    """Learner review 59: with partition 2 persisted by the learner, `len(ddf.partitions[2].compute())` (no task runs:
    the partition is gathered from memory) was "counted from the whole frame, other partitions, or a copy"."""
    _, verdict = judged_cell("04-2", client, "rows_in_partition_2 = len(ddf.partitions[2].compute())", scratch=P2_PERSISTED)
    assert verdict.correct, verdict.message


def test_review_59_04_2_partition_2_of_another_frame_is_named_as_another_frame(client):
    """Learner review 59: partition 2 of a new timeseries (before notebook 04 trims it) was "the row count of partition 0"."""
    code = "import dask.dataframe as dd, pandas as pd\nrows_in_partition_2 = len(dd.from_pandas(pd.DataFrame({'x': range(1000)}), npartitions=4).partitions[2])"
    assert_refused("04-2", client, code, "a partition of another frame than ddf")


def test_review_60_04_1_a_demean_that_writes_into_its_arguments_attrs_is_refused(client):
    """Learner review 60: `df.attrs["demeaned"] = True` inside demean changed the persisted partitions' metadata, and the
    check said "the persisted ddf is unchanged": the fingerprint now holds the attrs' keys."""
    code = (
        'def demean(df):\n    df.attrs["demeaned"] = True\n    return df.assign(x_demeaned=df["x"] - df["x"].mean())\n\ndemeaned = ddf.map_partitions(demean)'
    )
    _, verdict = judged_cell("04-1", client, code)
    assert not verdict.correct and "its attrs (the frame's metadata dict) hold ['demeaned']" in verdict.message, verdict.message
