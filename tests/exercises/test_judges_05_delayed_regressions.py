# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 05's exercise judges: 05-1 (``best_single_feature``, from one-feature fits on the scattered data) and 05-2
(``x0_results``, the fits computed in one call), each with answer cells learners wrote in review."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import FITS, FITS1
from ..test_exercises_corpus import _run
from .helpers import assert_refused, assert_rejected, cells_in_shell, judge_answer_with_ns, judged_cell, run_without


def test_05_2_the_list_as_one_argument_is_rejected(client):
    """Review 5, item 6: before, "Correct: 11 models" for a 1-tuple holding the list."""
    verdict = judge("05-2", _run(FITS + "x0_results = dask.compute(lazy_fits)", "05-2", client))
    assert not verdict.correct and "ONE item" in verdict.message, verdict.message


def test_05_1_a_feature_passed_as_a_str_is_named(client):
    """The reviewer's cell raises KeyError at dask.compute; single_fits is set, best_single_feature holds an earlier value."""
    code = "single_fits = [fit_ols(data_future, f) for f in features]\nsingle = dask.compute(*single_fits)\nbest_single_feature = max(single, key=lambda r: r[3])[0][0]"
    ns = _run(code.split("\n")[0], "05-1", client)
    ns["best_single_feature"] = "x1"
    ns["In"] = ["", code, 'exercises.check("05-1", globals())']
    verdict = judge("05-1", ns)
    assert not verdict.correct and "TUPLE" in verdict.message and "KeyError" not in verdict.message, verdict.message


def test_a_local_scheduler_on_cluster_data_is_explained(shell, client):
    """05-2 with scheduler='sync': the answer cell raised "Missing dependency"; the check says why."""
    ns = cells_in_shell(shell, "05-2", client, FITS + "x0_results = dask.compute(*lazy_fits, scheduler='sync')")
    verdict = judge("05-2", ns)
    assert not verdict.correct and "only the cluster's scheduler can read" in verdict.message and "Missing dependency" in verdict.message, verdict.message


# Review 6, item 5: 05-1 answers right by chance (the feature with the largest coefficient, or a fixed position).
BY_CHANCE_05_1 = [
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: abs(r[1][0]))[0][0]",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = res[1][0][0]",
    # learner review 11: a fixed position hidden behind an expression, no comparison of the fits anywhere
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = features[1] if res else None",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = features[int(bool(res))]",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = res[len('a')][0][0]",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = sorted(features, key=len)[1] if res else None",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3] * 0 + (r[0][0] == features[1]))[0][0]",
]


@pytest.mark.parametrize("code", BY_CHANCE_05_1)
def test_05_1_a_pick_that_is_right_by_chance_is_not_accepted(code, client):
    verdict = judge("05-1", run_without(code, "05-1", client))
    said = ("by chance", "by where a feature sits", "only in the condition")
    assert verdict.answered and not verdict.correct and any(s in verdict.message for s in said), verdict.message


def test_05_1_the_best_fit_kept_first_then_its_name_is_accepted(client):
    code = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest = max(res, key=lambda r: r[-1])\nbest_single_feature = best[0][0]"
    verdict = judge("05-1", run_without(code, "05-1", client))
    assert verdict.correct, verdict.message


FRAME_05_1 = "single_fits = [fit_ols(df, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"
FRAME_05_2 = "lazy_fits = [fit_ols(df, ('x0', f)) for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"
SCATTER_EACH = (
    "single_fits = [fit_ols(session.client.scatter(df), (f,)) for f in features]\nres = dask.compute(*single_fits)\n"
    "best_single_feature = max(res, key=lambda r: r[3])[0][0]"
)
# Review 8b (what kept 05 below 5): with the scatter cell skipped (no data_future), df itself in the graph was Correct
WRONG_05 = [
    ("05-1", FRAME_05_1, ("data_future",), "inside their task graph", "run the cell above that scatters df"),
    ("05-2", FRAME_05_2, ("data_future",), "inside their task graph", "run the cell above that scatters df"),
    ("05-1", FRAME_05_1, (), "inside their task graph", "Pass the future the lesson scattered."),
    ("05-1", SCATTER_EACH, ("data_future",), "its own copy of the data, scattered for that call", "scatters df"),
    ("05-1", SCATTER_EACH, (), "its own copy of the data, scattered for that call", "a scatter inside the loop"),
]


@pytest.mark.parametrize(("key", "code", "drop", "said", "also"), WRONG_05)
def test_05_the_frame_in_the_graph_or_a_copy_per_call_is_rejected_with_or_without_data_future(key, code, drop, said, also, client):
    ns, verdict = judge_answer_with_ns(key, code, client, drop=drop)
    assert_rejected(key, ns, verdict, said)
    assert also in verdict.message, verdict.message


def test_05_one_copy_scattered_in_the_answer_cell_is_accepted_when_data_future_is_missing(client):
    code = (
        "data = session.client.scatter(df, broadcast=True)\nsingle_fits = [fit_ols(data, (f,)) for f in features]\n"
        "res = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"
    )
    _, verdict = judge_answer_with_ns("05-1", code, client, drop=("data_future",))
    assert verdict.correct, verdict.message


def test_05_2_correct_says_side_by_side_only_when_the_cluster_has_threads_for_it(client):
    """Learner review 9: on a cluster started with one single-threaded worker, "Correct" said the 5 models "run side by side"."""
    from types import SimpleNamespace

    from distributed import Client, LocalCluster

    from gpu_dask_kit.exercises.catalog_d import _side_by_side

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as one, Client(one, set_as_default=False) as own:
        assert "one after another" in _side_by_side({"session": SimpleNamespace(client=own)})
    threads = sum(w["nthreads"] for w in client.scheduler_info(n_workers=-1)["workers"].values())
    assert _side_by_side({"session": SimpleNamespace(client=client)}) == f" and run side by side ({threads} threads)"


@pytest.mark.parametrize(
    ("compute", "said"),
    [
        ("[l.compute() for l in lazy_fits]", "each waits for the previous one"),
        ("session.client.gather([session.client.compute(l) for l in lazy_fits])", "these fits did run side by side"),
    ],
)
def test_05_2_separate_submissions_are_told_whether_they_waited(compute, said, client):
    """Learner review 11: client.compute per fit (non-blocking, so the fits ran side by side) was told "each waits
    for the previous one", which only a .compute() per fit does."""
    code = f"lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\nx0_results = {compute}"
    verdict = judge("05-2", run_without(code, "05-2", client))
    assert verdict.answered and not verdict.correct and "separate submissions" in verdict.message, verdict.message
    assert said in verdict.message, verdict.message


COEF_LOOP = """def pick_best(results):
    best, best_val = None, -1
    for cols, coef, intercept, r2 in results:
        if abs(coef[0]) > best_val:
            best, best_val = cols[0], abs(coef[0])
    return best
single_fits = [fit_ols(data_future, (f,)) for f in features]
best_single_feature = pick_best(dask.compute(*single_fits))"""


@pytest.mark.parametrize("code", [COEF_LOOP, COEF_LOOP.replace("abs(coef[0])", "coef[0] ** 2")])
def test_05_1_a_loop_that_keeps_the_largest_coefficient_is_refused(code, client):
    """Learner reviews 21-24: every feature had the same spread, so ranking by |coef| ranked by R² too; the re-run on
    other data gives the best feature values 10 times larger (its coefficient the smallest)."""
    assert_refused("05-1", client, code, "a coefficient's size")


def test_05_1_the_same_loop_keeping_the_largest_r2_passes(client):
    _, verdict = judged_cell("05-1", client, COEF_LOOP.replace("abs(coef[0])", "r2"))
    assert verdict.correct, verdict.message


def test_05_2_a_call_added_to_lazy_fits_after_the_compute_is_refused(client):
    """Learner reviews 22-24: x0_results of 11 fits, lazy_fits of 12 after an append."""
    code = 'lazy_fits = [fit_ols(data_future, ("x0", f)) for f in features if f != "x0"]\nx0_results = dask.compute(*lazy_fits)\nlazy_fits.append(fit_ols(data_future, ("x0", "x1")))'
    assert_refused("05-2", client, code, "delayed calls and x0_results")


def test_review_29_05_2_computes_waited_for_one_by_one_are_not_said_to_run_side_by_side(client):
    code = FITS + "x0_results = tuple(session.client.compute(lazy).result() for lazy in lazy_fits)"
    assert_refused("05-2", client, code, "each waits for the previous one", not_said="side by side")


def test_review_30_05_2_a_slice_of_lazy_fits_computed_is_refused(client):
    """Learner review 30: lazy_fits with the (x0, x0) pair, and only lazy_fits[1:] computed, was Correct."""
    code = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features]\nx0_results = dask.compute(*lazy_fits[1:])"
    assert_refused("05-2", client, code, "not every fit of lazy_fits was computed")


def test_review_31_05_2_a_fit_with_the_target_is_named(client):
    """Learner review 31: features taken from df.columns (y included) was told only "x0_results has 6 entries"."""
    code = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in df.columns if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"
    assert_refused("05-2", client, code, "a fit with y itself")


def test_review_33_05_1_a_one_element_tuple_without_its_comma_is_named_when_the_cell_raised(shell, client):
    """`fit_ols(data_future, (f))` raised pandas' KeyError "None of [Index(['x', '0'] ...": the check said only that the
    cell failed."""
    code = "single_fits = [fit_ols(data_future, (f)) for f in features]\nout = dask.compute(*single_fits)\nbest_single_feature = max(out, key=lambda r: r[3])[0][0]"
    ns = cells_in_shell(shell, "05-1", client, code)
    verdict = judge("05-1", ns)
    assert not verdict.correct and "(f,), not (f)" in verdict.message and "passes (f) as an argument" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("05-2", "lazy_fits = [fit_ols(data_future, ('x0', f)).persist() for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"),
        (
            "05-1",
            "single_fits = [fit_ols(data_future, (f,)).persist() for f in features]\nout = dask.compute(*single_fits)\nbest_single_feature = max(out, key=lambda r: r[3])[0][0]",
        ),
    ],
)
def test_review_35_05_each_call_persisted_is_named_not_taken_for_a_frame_in_the_graph(key, code, client):
    """`.persist()` on each delayed call was told "the calls carry the data inside their task graph" (they take data_future)."""
    assert_refused(key, client, code, "were persisted (.persist() on each call", not_said="carry the data inside")


def test_review_37_05_2_fits_of_another_target_are_refused(client):
    """`fit_ols(data_future, ("x0", f), target="x1")` was Correct: x0_results agreed with the same calls computed again."""
    code = "lazy_fits = [fit_ols(data_future, ('x0', f), target='x1') for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"
    assert_refused("05-2", client, code, "are not fits of the lesson's target")


def test_review_35_05_1_a_slice_of_the_fits_is_named_as_a_part_of_them(client):
    """Learner review 35: `dask.compute(*single_fits[:6])` was told it picks "by where a feature sits"."""
    code = (
        "single_fits = [fit_ols(data_future, (name,)) for name in features]\nout = dask.compute(*single_fits[:6])\n"
        "best_single_feature = max(out, key=lambda r: r[3])[0][0]"
    )
    assert_refused("05-1", client, code, "computes only single_fits[:6], a part of the fits", not_said="where a feature sits")


def test_review_38_05_1_fits_of_another_target_are_named(client):
    """Learner reviews 37-38: 05-1 with `target="x0"` was told "A pick by anything but R²" (the pick was by R²)."""
    code = (
        'single_fits = [fit_ols(data_future, (f,), target="x0") for f in features if f != "x0"]\nout = dask.compute(*single_fits)\n'
        "best_single_feature = max(out, key=lambda r: r[3])[0][0]"
    )
    assert_refused("05-1", client, code, "single_fits are not fits of the lesson's target", not_said="A pick by anything but")


def test_review_39_05_a_part_of_the_fits_and_one_fits_result_are_named(client):
    """Learner review 39: `single_fits = single_fits[:3]` after a right answer was told "each with ONE feature"; 05-2's
    `dask.compute(*lazy_fits)[0]` was told "x0_results has 4 entries"."""
    code = (
        "single_fits = [fit_ols(data_future, (f,)) for f in features]\nsingle_fits = single_fits[:3]\nout = dask.compute(*single_fits)\n"
        "best_single_feature = max(out, key=lambda r: r[3])[0][0]"
    )
    assert_refused("05-1", client, code, "single_fits holds 3 of the")
    lazy = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
    assert_refused("05-2", client, lazy + "x0_results = dask.compute(*lazy_fits)[0]", "x0_results is ONE fit's result")


def test_review_41_05_x0_with_itself_and_a_pick_from_the_table_are_worded_for_what_happened(client):
    """Learner review 41: x0 paired with itself was said to be refused by "pandas/cuDF" (pandas takes df[["x0", "x0"]];
    fit_one refuses it); a best feature taken from the pairs' `table` was told "your answer cell, run again, sent no fits"."""
    verdict = judge("05-2", _run("lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features]\nx0_results = ...", "05-2", client))
    assert not verdict.correct and "which fit_one refuses" in verdict.message and "pandas" not in verdict.message, verdict.message
    code = 'single_fits = [fit_ols(data_future, (f,)) for f in features]\nbest_single_feature = table.sort_values("r2").features.iloc[-1].split(" + ")[1]'
    scratch = (  # a table of fits made in this notebook (the lesson's table holds the pairs; the value is the right one)
        "import pandas as pd\nfound = [fit_one(df, (f,)) for f in features]\n"
        "table = pd.DataFrame({'features': ['x0 + ' + r[0][0] for r in found], 'r2': [r[3] for r in found]})"
    )
    assert_refused("05-1", client, code, "so best_single_feature is taken from something else", not_said="run again, sent", scratch=scratch)


def test_review_43_05_2_one_result_wrapped_in_a_list_is_called_a_list(client):
    """Learner review 43: `x0_results = [dask.compute(*lazy_fits)]` was called "a tuple holding ONE item"."""
    lazy = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
    assert_refused("05-2", client, lazy + "x0_results = [dask.compute(*lazy_fits)]", "x0_results is a list holding ONE item", not_said="is a tuple")


def test_review_46_05_2_a_filter_after_the_compute_that_drops_nothing_here_is_refused(client):
    """Learner review 46: `[r for r in x0_results if r[3] > 0.2]` after the compute (it dropped nothing here) was "Correct"."""
    lazy = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
    code = lazy + "x0_results = dask.compute(*lazy_fits)\nx0_results = [r for r in x0_results if r[3] > -1.0]"
    assert_refused("05-2", client, code, "your answer cell filters x0_results after computing it")


def test_review_50_the_notebooks_fit_one_names_a_feature_passed_as_one_string():
    """Learner reviews 40-50: `fit_ols(data_future, f)` (a str, not `(f,)`) showed pandas' KeyError "None of
    [Index(['x', '9'])] are in the [columns]" from the worker; notebook 05's fit_one now says what it got."""
    import ast
    from pathlib import Path

    import nbformat

    nb = nbformat.read(Path(__file__).parents[2] / "notebooks" / "05_delayed_regressions.ipynb", as_version=4)
    source = next(c.source for c in nb.cells if c.cell_type == "code" and "def fit_one(" in c.source)
    function = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "fit_one")
    ns: dict = {}
    exec(compile(ast.Module(body=[function], type_ignores=[]), "<fit_one>", "exec"), ns)
    with pytest.raises(TypeError, match=r"fit_one got the features 'x9', one string: pass a tuple of column names"):
        ns["fit_one"](None, "x9")
    with pytest.raises(ValueError, match="x0 appears more than once"):
        ns["fit_one"](None, ("x0", "x0"))


ARGSORT_05_1 = FITS1 + "(res,) = dask.compute(single_fits)\nr2 = np.array([r[-1] for r in res])\nbest_single_feature = str(res[int(np.argsort(r2)[-1])][0][0])"


def test_review_55_05_1_a_pick_by_np_argsort_passes(client):
    """Learner review 55: the best fit picked by np.argsort of the R² values was "without comparing anything"."""
    _, verdict = judged_cell("05-1", client, ARGSORT_05_1)
    assert verdict.correct, verdict.message


def test_review_55_05_1_the_second_place_of_an_argsort_is_not_said_to_compare_nothing(client):
    """Learner review 55: `[-2]` (the second best) was told "without comparing anything"; the mistake is the place."""
    code = FITS1 + "(res,) = dask.compute(single_fits)\nbest_single_feature = features[np.argsort([r[3] for r in res])[-2]]"
    assert_refused("05-1", client, code, "that feature does not have the highest R²", not_said="without comparing anything")


def test_review_57_05_1_a_compute_per_fit_into_a_dict_is_named_as_separate_computations(client):
    """Learner review 57: `r2s[f] = fit.compute()[3]` in a loop, then `max(r2s, key=r2s.get)`, was told
    best_single_feature "is not taken from their results" (it is: through r2s)."""
    code = FITS1 + "r2s = {}\nfor f, fit in zip(features, single_fits):\n    r2s[f] = fit.compute()[3]\nbest_single_feature = max(r2s, key=r2s.get)"
    assert_refused("05-1", client, code, "separate", not_said="is not taken from their results")
