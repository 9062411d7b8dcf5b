# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Answers that reach the right value by a shortcut the exercise teaches against, hidden in an expression: a feature's
name written out and found by filtering (05-1), typed numbers inside ``eval("...")`` (06-2), the largest speed-up of
the table whichever cluster it belongs to (07-2), results brought to the notebook on the way (09-1). Each was
"Correct" in learner review 9; each must be rejected with a hint that says what the answer did and does not give the
answer away, while the right answers in the corpus still pass (tests/test_exercises_cases.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from .helpers import assert_rejected as _rejected
from .helpers import judge_answer_with_ns as _judge
from .helpers import notebook_namespace as _ns


def _best_feature(ns) -> str:
    import dask

    res = dask.compute(*[ns["fit_ols"](ns["data_future"], (f,)) for f in ns["features"]])
    return max(res, key=lambda r: r[3])[0][0]


def test_05_1_a_feature_name_written_out_and_found_by_filtering_is_rejected(client):
    ns = _ns("05-1", client)
    best = _best_feature(ns)
    for code in (
        f"single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = [r for r in res if r[0] == ({best!r},)][0][0][0]",
        f"single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\npick = [r for r in res if {best!r} in r[0]]\nbest_single_feature = pick[0][0][0]",
    ):
        ns, verdict = _judge("05-1", code, client, ns=_ns("05-1", client))
        _rejected("05-1", ns, verdict, "a feature name written out")


def test_05_1_fits_that_name_their_features_still_pass_when_the_best_is_picked_by_r2(client):
    ns = _ns("05-1", client)
    fits = ", ".join(f"fit_ols(data_future, ({f!r},))" for f in ns["features"])
    code = f"single_fits = [{fits}]\nbest_single_feature = max(dask.compute(*single_fits), key=lambda r: r[3])[0][0]"
    ns, verdict = _judge("05-1", code, client, ns=ns)
    assert verdict.correct, verdict.message


@pytest.mark.parametrize(
    "code",
    [
        "fraction = eval('x.nbytes / (2*2**30)')",  # this corpus' cluster: two workers of 1 GiB
        "fraction = x.nbytes / eval('2*2**30')",
    ],
)
def test_06_2_typed_numbers_inside_eval_are_typed(code, client):
    _, verdict = _judge("06-2", code, client, ns=_ns("06-2", client))
    assert verdict.answered and not verdict.correct, verdict.message
    assert "written out" in verdict.message or "typed" in verdict.message, verdict.message


def test_06_2_a_whole_fraction_typed_inside_eval_is_typed(client):
    ns = _ns("06-2", client)
    limits = sum(int(w["memory_limit"]) for w in client.scheduler_info(n_workers=-1)["workers"].values())
    code = f"fraction = eval('{int(ns['x'].nbytes)} / {limits}')"
    ns, verdict = _judge("06-2", code, client, ns=ns)
    assert verdict.answered and not verdict.correct, verdict.message


@pytest.mark.parametrize("code", ["speed_up = ours['speed-up'].max()", "speed_up = max(speed_ups.values())"])
def test_07_2_the_largest_speed_up_of_the_table_is_told_so(code, client):
    ns = _ns("07-2", client)
    import pandas as pd

    medians = ns["medians"]
    ns["speed_ups"] = {n: medians[min(medians)] / m for n, m in medians.items()}
    ns["ours"] = pd.DataFrame({"workers": list(ns["speed_ups"]), "speed-up": [round(v, 2) for v in ns["speed_ups"].values()]})
    ns, verdict = _judge("07-2", code, client, ns=ns)
    _rejected("07-2", ns, verdict, "the largest of the speed-ups", "median times")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("total_future = session.client.submit(sum, [f for f in session.client.map(square, range(10)) if f.result() >= 0])", "brings results from the cluster"),
        (
            "square_futures = session.client.map(square, range(10))\nsquares = session.client.gather(square_futures)\ntotal_future = session.client.submit(sum, square_futures)",
            "brings results from the cluster",
        ),
        # the sum itself brought here after it is made (learner review 24: told to hand over the squares' futures)
        ("total_future = session.client.submit(sum, session.client.map(square, range(10)))\ntotal_future.result()", "copies it into this notebook"),
    ],
)
def test_09_1_results_brought_to_the_notebook_in_the_answer_cell_are_named(code, said, client):
    ns, verdict = _judge("09-1", code, client, ns=_ns("09-1", client))
    _rejected("09-1", ns, verdict, said)


def test_06_2_a_fraction_written_with_a_percent_sign_is_told_so(client):
    ns = _ns("06-2", client)
    code = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\nfraction = f'{x.nbytes / sum(limits)}%'"
    ns, verdict = _judge("06-2", code, client, ns=ns)
    _rejected("06-2", ns, verdict, "written with a '%' sign", "typed")


def test_09_1_a_scattered_number_is_not_a_task(client):
    ns = _ns("09-1", client)
    ns, verdict = _judge("09-1", "total_future = session.client.scatter(sum(i * i for i in range(10)))", client, ns=ns)
    _rejected("09-1", ns, verdict, "sent from this notebook with scatter", "takes no futures")


def test_07_1_another_runs_output_read_with_dask_is_named(client):
    ns = _ns("07-1", client)
    other = os.path.join(ns["WORKDIR"], "processed-other-run")  # notebook 07's timing cell writes processed-N-i
    shutil.copytree(ns["PROCESSED"], other, dirs_exist_ok=True)
    for code in (
        "rows_per_name = dd.read_parquet(os.path.join(WORKDIR, 'processed-other-run')).name.value_counts().compute()",  # learner review 9
        f"rows_per_name = dd.read_parquet({other!r}).name.value_counts().compute()",
    ):
        ns, verdict = _judge("07-1", code, client, ns=ns)
        _rejected("07-1", ns, verdict, "read other files than the processed Parquet", "already in this notebook")


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            "def demean(df):\n    return df.assign(x_demeaned=df.x - ddf.x.mean().compute())\n\ndemeaned = ddf.map_partitions(demean)",
            "calls .compute() inside it",
        ),
        (
            "def demean(df):\n    m = ddf.x.mean()\n    return df.assign(x_demeaned=df.x - m.compute())\n\ndemeaned = ddf.map_partitions(demean)",
            "calls .compute() inside it",
        ),
        (  # learner review 10: with the .compute() one call further down, the check hung again and wedged the kernel
            "def global_mean():\n    return ddf.x.mean().compute()\n\n"
            "def demean(df):\n    return df.assign(x_demeaned=df.x - global_mean())\n\n"
            "demeaned = ddf.map_partitions(demean)",
            "inside `global_mean`, which it calls",
        ),
        (  # learner review 11: a computation the source reading cannot see (getattr), still hung the check
            "frames = {'all': ddf}\n\ndef demean(df):\n    m = getattr(frames['all'].x.mean(), 'comp' + 'ute')()\n"
            "    return df.assign(x_demeaned=df.x - m)\n\ndemeaned = ddf.map_partitions(demean)",
            "starts a computation of its own",
        ),
    ],
)
def test_04_1_a_computation_inside_the_mapped_function_is_refused_before_it_can_hang(code, said, client):
    """Learner review 9: this demean made the check hang for ever (and every later map_partitions in the kernel):
    Dask infers the output by calling demean on a sample in distributed's offload thread, whose .compute() then waits
    on that same thread. The check reads demean's body first and runs nothing."""
    ns, verdict = _judge("04-1", code, client, ns=_ns("04-1", client))
    _rejected("04-1", ns, verdict, said)


@pytest.mark.parametrize(
    ("code", "said"),
    [
        # learner review 9: a Dask part made 0 without a 0 written out (// N**3, % 1, * a[0]) beside the closed formula
        ("total = (a**2).sum() // N**3 + (N-1)*N*(2*N-1)//6", "adds a Dask part that is 0 here"),
        ("total = (a**2).sum() % 1 + sum(i*i for i in range(N))", "adds a Dask part that is 0 here"),
        ("total = (a**2).sum() * a[0] + (N-1)*N*(2*N-1)//6", "adds a Dask part that is 0 here"),
        # learner review 11: the formula handed to da.maximum / da.where beside (or instead of) the Dask sum
        ("total = da.maximum((a**2).sum(), (N-1)*N*(2*N-1)//6)", "picks total among values"),
        ("total = da.where(a.sum() > 0, (N-1)*N*(2*N-1)//6, 0)", "picks total among values"),
        ("total = da.minimum((a**2).sum(), sum(i * i for i in range(N)))", "picks total among values"),
    ],
)
def test_00_1_a_closed_formula_beside_or_inside_the_dask_sum_is_rejected(code, said, client):
    """The value comes from the formula worked out in the notebook: the Dask part is 0 here, or it only passes the
    formula's value on, or picks it (each was "Correct" in the review named)."""
    ns, verdict = _judge("00-1", "a = da.arange(N, chunks=N // 10)\n" + code, client, ns=_ns("00-1", client))
    _rejected("00-1", ns, verdict, said)


@pytest.mark.parametrize("last", ["a[-1]", "a.max()"])
def test_00_1_the_closed_form_on_one_of_as_values_does_not_follow_a(last, client):
    """Learner review 12: `total = (a[-1] * (a[-1] + 1) * (2 * a[-1] + 1)) // 6` (lazy, built from a) was Correct, and
    the same on a.max() was told it "picks among values"."""
    code = f"a = da.arange(N, chunks=N // 10)\ntotal = ({last} * ({last} + 1) * (2 * {last} + 1)) // 6"
    ns, verdict = _judge("00-1", code, client, ns=_ns("00-1", client))
    _rejected("00-1", ns, verdict, "total does not behave as a sum of squares")


@pytest.mark.parametrize(
    ("rank", "said"),
    [
        (
            "float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())\nrank10_error = float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))",
            "worked out in this notebook",
        ),
        (
            "float(((da.linalg.norm(x - approx) / da.linalg.norm(x)) / (da.linalg.norm(x - approx) / da.linalg.norm(x)) * (np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))).compute())",
            "worked out in this notebook",
        ),
        ("str(float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute()))", "is a str"),
        ("float((da.linalg.norm(x.blocks[0] - approx.blocks[0]) / da.linalg.norm(x.blocks[0])).compute())", "part of x"),
    ],
)
def test_02_1_the_shortcut_after_or_inside_a_dask_run_is_rejected(rank, said, client):
    """Learner review 12: the Dask error computed, then overwritten by the NumPy shortcut; the shortcut times D / D; the
    error as a str; one block of x told "rounded"."""
    code = "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = " + rank
    ns, verdict = _judge("02-1", code, client, ns=_ns("02-1", client))
    _rejected("02-1", ns, verdict, said)


@pytest.mark.parametrize(
    "rank",
    [
        "float(da.where(da.linalg.norm(x) > 0, np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host), 0).compute())",
        "float(da.where(da.linalg.norm(x - approx) > 0, da.sqrt((s[10:]**2).sum() / (s**2).sum()), 0).compute())",
        "max(float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute()), float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host)))",
    ],
)
def test_02_1_a_shortcut_behind_a_pick_is_rejected(rank, client):
    """Learner review 11: the singular-value shortcut inside da.where (NumPy or Dask s) was "Correct"."""
    code = "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = " + rank
    ns, verdict = _judge("02-1", code, client, ns=_ns("02-1", client))
    _rejected("02-1", ns, verdict, "picks rank10_error among values")


def test_02_1_a_dask_error_floored_to_0_beside_the_singular_value_shortcut_contributes_nothing(client):
    code = (
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n"
        "rank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute()) // 1 + "
        "float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))"
    )
    ns, verdict = _judge("02-1", code, client, ns=_ns("02-1", client))
    _rejected("02-1", ns, verdict, "adds a Dask part that is 0 here")


def test_04_2_a_row_count_spelled_in_string_pieces_is_typed(client):
    ns = _ns("04-2", client)
    rows = str(len(ns["ddf"].partitions[2]))
    code = f"rows_in_partition_2 = max(len(ddf.partitions[2]), int({rows[:3]!r} + {rows[3:]!r}))"
    ns, verdict = _judge("04-2", code, client, ns=ns)
    assert verdict.answered and not verdict.correct, verdict.message


def test_03_1_a_sort_then_one_row_per_name_is_named_as_a_shuffle_on_the_workers(client):
    """Learner review 9: told 'brought ddf's rows here ... pandas grouped them on one core'; it ran on the workers."""
    code = "max_y_by_name = ddf.sort_values('y').drop_duplicates('name', keep='last').set_index('name').y.compute()"
    ns, verdict = _judge("03-1", code, client, ns=_ns("03-1", client))
    _rejected("03-1", ns, verdict, "by sorting every row", "one core")
