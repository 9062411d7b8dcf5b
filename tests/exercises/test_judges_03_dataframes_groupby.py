"""Notebook 03's exercise judges: 03-1 (``max_y_by_name``, a groupby on the workers) and 03-2 (``ddf_fast`` persisted,
then ``mean_x_by_name``), each with answer cells learners wrote in review."""

from __future__ import annotations

import pytest
from distributed import Client, LocalCluster, wait
from IPython.core.inputtransformer2 import TransformerManager

from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import RIGHT
from ..test_exercises_corpus import _run, namespace
from .helpers import assert_refused, judged, judged_cell, run_without


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
    assert "holds data of a cluster that has been closed" in verdict.message and "set-up cell" not in verdict.message, verdict.message


# Review 6, item 6: hints that said something else than what happened (each was the "before" message).
HONEST_03 = [
    (
        "03-1",
        "max_y_by_name = ddf.map_partitions(lambda d: d.groupby('name').y.max()).compute().groupby(level=0).max()",
        "left to this notebook",
        "brought ddf's rows here",
    ),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().reset_index()", "reset_index", "select the one column"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().astype('float32').compute()", "smaller float type", "which column and which aggregation"),
    ("03-1", "max_y_by_name = ddf.partitions[0].groupby('name').y.max().compute()", "one partition", "which column and which aggregation"),
    # review 10: the maxima are all near 1.0, so 2 decimals gave the same values as 0 decimals ("rounded to 0 decimals")
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().round(2)", "rounded to 2 decimals", "0 decimals"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().astype('float16').compute()", "smaller float type", "which column and which aggregation"),
    # review 10: one computation per name, and `.index.name = "name"` after it was read as the value typed in
    (
        "03-1",
        "names = sorted(ddf.name.unique().compute())\n"
        "max_y_by_name = pd.Series({n: ddf[ddf.name == n].y.max().compute() for n in names}, name='y')\n"
        "max_y_by_name.index.name = 'name'",
        "separate",
        "typed into",
    ),
    (
        "03-2",
        "ddf_fast = ddf.persist(scheduler='sync')\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "THIS notebook's process",
        "nothing ran yet",
    ),
    (
        "03-2",
        "ddf_fast = dask.persist(ddf)\nmean_x_by_name = ddf.groupby('name').x.mean().compute()",
        "dask.persist returns a tuple",
        "came back to this notebook",
    ),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.median().compute()",
        "medians, computed on the workers",
        "computed in this notebook",
    ),
    # review 10: the rest of the expression ran on the workers too, from ddf: not "worked out in this notebook"
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute() * 0 + ddf.groupby('name').x.mean().compute()",
        "which computes from `ddf`",
        "worked out in this notebook",
    ),
    # review 11: a pandas groupby of every row, with the index taken from a Dask groupby
    (
        "03-1",
        "max_y_by_name = pd.Series(ddf.compute().groupby('name').y.max().values, index=ddf.groupby('name').y.max().compute().sort_index().index, name='y')",
        "brings every row of ddf to this notebook",
        "Correct",
    ),
    # review 12: every partition's rows through .head(..., npartitions=-1), then pandas here
    ("03-1", "max_y_by_name = ddf.head(len(ddf), npartitions=-1).groupby('name').y.max()", "brings every row of ddf", "Correct"),
    # review 11: the right computation first, then the values overwritten from a pandas groupby of every row
    (
        "03-1",
        "max_y_by_name = ddf.groupby('name').y.max().compute()\nmax_y_by_name[:] = ddf.compute().groupby('name').y.max()",
        "changes max_y_by_name after making it",
        "Correct",
    ),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()\nmean_x_by_name[:] = ddf.compute().groupby('name').x.mean()",
        "changes mean_x_by_name after making it",
        "Correct",
    ),
    (
        "03-2",
        "ddf_fast = ddf[['name', 'x']].persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "only some of ddf's columns",
        "other data",
    ),
]


@pytest.mark.parametrize(("key", "code", "said", "before"), HONEST_03, ids=[f"{k}-{s}" for k, _, s, _ in HONEST_03])
def test_03_hints_say_what_happened(key, code, said, before, client):
    verdict = judge(key, run_without(code, key, client))
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and before not in verdict.message, verdict.message


def test_03_1_one_filtered_reduction_per_name_is_not_a_groupby(client):
    """Review 7, item 2: before, "Correct" (26 filtered maxima handed to dask.compute at once; no groupby)."""
    code = (
        "names = sorted(ddf.name.unique().compute())\nmax_y_by_name = pd.Series(dict(zip(names, dask.compute(*[ddf[ddf.name == n].y.max() for n in names]))))"
    )
    verdict = judged("03-1", client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "separate reductions of ddf" in verdict.message, verdict.message
    assert judged("03-1", client, RIGHT["03-1"][0]).correct


def test_03_2_with_ddf_still_persisted_ddf_itself_is_not_a_persisted_copy(client):
    """Review 7, item 4: cell 27 skipped, so ddf is still the frame persisted in cell 18; before, `ddf_fast = ddf` was "Correct"."""
    ddf = namespace("03-2", client)["ddf"].persist()
    wait(ddf)
    code = "ddf_fast = ddf\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"
    verdict = judged("03-2", client, code, ddf=ddf)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "did not persist anything" in verdict.message, verdict.message
    assert judged("03-2", client, RIGHT["03-2"][0]).correct  # ddf lazy (cell 27 run): judged as before


@pytest.mark.parametrize("code", ["ddf_fast = ddf = ddf.persist()", "ddf = ddf.persist()\nddf_fast = ddf"])
def test_review_25_03_2_ddf_persisted_in_place_in_the_answer_cell_passes(code, client):
    _, verdict = judged_cell("03-2", client, code + "\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()")
    assert verdict.correct, verdict.message


def test_review_30_03_2_means_cast_to_float32_are_refused(client):
    """Learner review 30: small means cast to float32 stayed within 1e-9 of the right ones, and passed (03-1 refused it)."""
    code = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute().astype('float32')"
    assert_refused("03-2", client, code, "converted to a smaller float type")


def test_review_30_03_1_idxmax_is_named(client):
    """Learner review 30: idxmax (timestamps) made the check itself fail with a UFuncTypeError."""
    assert_refused("03-1", client, "max_y_by_name = ddf.groupby('name').y.idxmax().compute()", "not numbers", not_said="could not be checked")


def test_review_31_03_2_a_persist_whose_result_is_thrown_away_is_named(client):
    """Learner review 31: `ddf_fast = ddf` then `ddf_fast.persist()` was told to "ask Dask to run the frame's tasks"."""
    code = "ddf_fast = ddf\nddf_fast.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"
    ns = run_without(code, "03-2", client)
    ns["ddf"] = ns["ddf"].map_partitions(lambda d: d)  # the lesson's lazy recipe (the cell above the exercise)
    exec(compile(code, "<answer 03-2>", "exec"), ns)
    verdict = judge("03-2", ns)
    assert not verdict.correct and "RETURNS a new frame" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("max_y_by_name = ddf[ddf.y > 0].groupby('name').y.max().compute()", "does not follow the data"),
        ("max_y_by_name = ddf.query('y > -0.9').groupby('name').y.max().compute()", "does not follow the data"),  # (> 0.5: a name of ~16 rows may have none)
        ("max_y_by_name = ddf.sample(frac=0.5, random_state=1).groupby('name').y.max().compute()", "takes a sample of the rows"),
    ],
)
def test_review_33_03_1_rows_dropped_before_the_groupby_are_named(code, said, client):
    assert_refused("03-1", client, code, said)


def test_review_34_03_2_a_leftover_line_that_computes_from_ddf_is_named(client):
    """The right answer, then a leftover `mean_x_by_name = ddf.groupby(...)...compute()`: told "a sum and a count"."""
    code = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()\nmean_x_by_name = ddf.groupby('name').x.mean().compute()"
    assert_refused("03-2", client, code, "ran ddf's whole recipe again", not_said="a sum and a count")


def test_review_36_03_2_means_with_split_out_from_the_persisted_frame_pass(client):
    """`groupby(...).x.mean(split_out=2)` on ddf_fast was told it "ran ddf's whole recipe again" (a shuffle task and
    ddf's recipe share dask-expr's task name "operation")."""
    _, verdict = judged_cell("03-2", client, "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean(split_out=2).compute()")
    assert verdict.correct, verdict.message


def test_review_38_03_1_names_changed_after_the_max_are_named(client):
    """Learner review 38: `max_y_by_name.index = max_y_by_name.index.str.lower()` after the groupby was told "check which
    column and which aggregation you used" (both were right)."""
    code = 'max_y_by_name = ddf.groupby("name").y.max().compute()\nmax_y_by_name.index = max_y_by_name.index.str.lower()'
    assert_refused("03-1", client, code, "the index was changed after the aggregation", not_said="which column and which aggregation")


def test_review_39_03_2_partial_results_never_combined_are_not_said_combined_here(client):
    """Learner review 39: per-partition means stacked, never combined, were told "combined here, in this notebook, by hand"."""
    code = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.map_partitions(lambda d: d.groupby('name').x.mean()).compute()"
    verdict = judged("03-2", client, code)
    assert not verdict.correct and "combined here, in this notebook, by hand" not in verdict.message, verdict.message
    assert "only its partial results, one per partition, came back" in verdict.message, verdict.message


def test_review_41_03_2_values_changed_after_the_means_and_a_persisted_name_set_again_are_named(client):
    """Learner review 41: `.fillna(0).clip(...)` after the means was told to check the column and aggregation;
    `ddf_fast = ddf` after the means from the persisted frame was told "nothing ran yet"."""
    persist = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()\n"
    changed = "mean_x_by_name = mean_x_by_name.fillna(0).clip(-0.01, 0.01)"
    assert_refused("03-2", client, persist + changed, f"changes them after making them (`{changed}`)", not_said="check the column")
    assert_refused("03-2", client, persist + "ddf_fast = ddf", "persists ddf_fast, then sets ddf_fast again (`ddf_fast = ddf`)", not_said="nothing ran yet")


def test_review_42_03_1_a_clip_chained_after_the_max_is_named(client):
    """Learner reviews 39-42: `.compute().clip(upper=0.99)` after the max was told to check the column and aggregation."""
    code = "max_y_by_name = ddf.groupby('name').y.max().compute().clip(upper=0.0)"
    assert_refused("03-1", client, code, "changes them after making them (`.clip(upper=0.0) after .compute()`)", not_said="which column")
    code = "max_y_by_name = ddf.groupby('name').y.max().compute().clip(upper=1.0)"  # changes nothing here (y < 1)
    assert_refused("03-1", client, code, "the values are right here, but your answer cell changes them after making them")


def test_review_47_03_2_a_guard_around_the_means_is_not_said_to_compute_only_in_its_condition(client):
    """Learner review 47: `... .compute() if ddf_fast is not None else None` was told it "computes with Dask only in the condition"."""
    code = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute() if ddf_fast is not None else None"
    assert_refused("03-2", client, code, "if ... else", not_said="only in the condition")


def test_review_48_03_2_a_zeroed_copy_added_to_the_means_names_the_earlier_line(client):
    """Learner review 48: `m = ....compute(); mean_x_by_name = m.copy() * 0 + m` was told the value is "worked out in this
    notebook ... not from the computation on the workers" (m is the workers' result, made by the line before)."""
    code = "ddf_fast = ddf.persist()\nm = ddf_fast.groupby('name').x.mean().compute()\nmean_x_by_name = m.copy() * 0 + m"
    assert_refused("03-2", client, code, "is `m` as an earlier line of the cell made it", not_said="worked out in this notebook")


def test_review_50_03_2_means_from_the_source_frame_are_not_said_to_run_the_whole_recipe(client):
    """Learner review 50: `raw.groupby(...)` (the source frame, without slow_read) was told the means "ran ddf's whole
    recipe again"."""
    code = "ddf_fast = ddf.persist()\nmean_x_by_name = ddf.groupby('name').x.mean().compute()"
    assert_refused("03-2", client, code, "the means ran tasks of ddf's recipe again (from the source frame", not_said="whole recipe")


@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().astype(str)"),
        ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute().astype(str)"),
    ],
)
def test_review_51_03_values_turned_into_text_are_named_without_the_idxmax_words(key, code, client):
    """Learner review 51: `.astype(str)` after the aggregation got "(idxmax and idxmin give WHERE the extreme is ...)"."""
    assert_refused(key, client, code, "the values are turned into text (astype(str)?)", not_said="idxmax")
