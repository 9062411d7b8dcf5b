"""Learner review 14: a Dask step in the answer cell, while the answer is a value worked out before the cell ran (in a
scratch cell: `here`, `X`, `typed`...), kept however the cell is written. Each was "Correct"; each is refused now,
with a hint that names the outside value and hides the answer. Right answers stay correct (the corpus' RIGHT cases)."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import RIGHT
from .helpers import answer, as_cell, assert_rejected, notebook_namespace
from .helpers import judged_cell as _judged
from .helpers import opened_notebook_namespace as _in_notebook

LIMITS = "session.client.scheduler_info(n_workers=-1)['workers'].values()"
ERROR = "(da.linalg.norm(x - (u[:, :10] * s[:10]) @ v[:10, :]) / da.linalg.norm(x))"
FITS1 = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\n"
SUMS = "col_sums_persisted = x.sum(axis=0).persist()\ncol_sums_local = to_host(col_sums_persisted.compute())\n"
FITS = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
SLOT = "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"
VC = "processed.name.value_counts().compute()"

#: What a learner worked out in a scratch cell before the answer cell, per exercise (run in the notebook's namespace).
SCRATCH = {
    "00-2": f"XM = sum(int(w['memory_limit']) for w in {LIMITS})",
    "02-1": "X = float(((s_host[10:] ** 2).sum() / (s_host ** 2).sum()) ** 0.5)",
    "03-1": "X = raw.compute().groupby('name').y.max()",
    "03-2": "MX = raw.compute().groupby('name').x.mean()",
    "04-2": "X = len(ddf.partitions[2].compute())",
    "05-1": "prev = max((fit_one(df, (f,)) for f in features), key=lambda r: r[3])[0][0]",
    "05-2": "here = tuple(fit_one(df, ('x0', f)) for f in features if f != 'x0')",
    "06-1": "here_sums = x.compute().sum(axis=0)",
    "06-2": f"my_number = x.nbytes / sum(w['memory_limit'] for w in {LIMITS})",
    "07-1": "import pandas as pd\npvc = pd.read_parquet(PROCESSED).name.value_counts()",
    "07-2": "my_ratio = medians[1] / medians[max(medians)]",
    "08-2": "typed = ['with-slot'] * 4",
}

CASES = [
    ("00-2", "cluster_memory = XM"),
    ("00-2", f"cluster_memory, _ = XM, sum(w['memory_limit'] for w in {LIMITS})"),
    ("00-2", f"cluster_memory = next(iter([XM, sum(w['memory_limit'] for w in {LIMITS})]))"),
    ("02-1", f"rank10_error = (lambda _: X)({ERROR}.compute())"),
    ("02-1", f"rank10_error, _ = X, {ERROR}.compute()"),
    ("02-1", f"rank10_error = {{True: X, False: 0.0}}[bool({ERROR}.compute() > 0)]"),
    ("02-1", f"def pick(value):\n    return X\n\nrank10_error = pick(float({ERROR}.compute()))"),
    ("02-1", f"rank10_error = next(iter([X, float({ERROR}.compute())]))"),
    ("03-1", "max_y_by_name = (lambda _: X)(ddf.groupby('name').y.max().compute())"),
    ("03-1", "max_y_by_name, _ = X, ddf.groupby('name').y.max().compute()"),
    ("03-1", "max_y_by_name = next(iter([X, ddf.groupby('name').y.max().compute()]))"),
    ("03-1", "def keep(r):\n    return X\n\nmax_y_by_name = keep(ddf.groupby('name').y.max().compute())"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = next(iter([MX, ddf_fast.groupby('name').x.mean().compute()]))"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = (lambda _: MX)(ddf_fast.groupby('name').x.mean().compute())"),
    ("04-2", "rows_in_partition_2 = (lambda _: X)(len(ddf.partitions[2]))"),
    ("04-2", "rows_in_partition_2, _ = X, len(ddf.partitions[2])"),
    ("04-2", "def keep(n):\n    return X\n\nrows_in_partition_2 = keep(len(ddf.partitions[2]))"),
    ("05-1", FITS1 + "best_single_feature = dict(zip(['a', 'b'], [max(res, key=lambda r: r[3])[0][0], prev]))['b']"),
    ("05-2", FITS + "x0_results = dask.compute(*lazy_fits)\nx0_results = here"),
    ("05-2", FITS + "x0_results = tuple(map(lambda a, b: b, dask.compute(*lazy_fits), here))"),
    ("05-2", FITS + "x0_results = dict(zip(['a', 'b'], [dask.compute(*lazy_fits), here]))['b']"),
    ("05-2", FITS + "x0_results = list(dask.compute(*lazy_fits))\nx0_results.clear()\nx0_results.extend(here)"),
    ("06-1", SUMS + "col_sums_local = here_sums"),
    ("06-1", SUMS + "col_sums_local += here_sums - col_sums_local"),
    ("06-1", SUMS + "np.copyto(col_sums_local, here_sums)"),
    ("06-1", "col_sums_persisted = x.sum(axis=0).persist()\ncol_sums_local = np.where(True, here_sums, to_host(col_sums_persisted.compute()))"),
    ("06-2", "fraction = my_number"),
    ("07-1", f"rows_per_name = {VC}\nrows_per_name = pvc"),
    ("07-1", f"rows_per_name = pvc.where({VC} > 0)"),
    ("07-1", f"rows_per_name = {VC}\nrows_per_name += pvc - rows_per_name"),
    ("07-1", f"rows_per_name = {VC}.combine(pvc, lambda a, b: b)"),
    ("07-2", "speed_up = [my_ratio for _ in [medians[1] / medians[N_MAX]]][0]"),
    ("07-2", "speed_up = medians[1] / medians[max(medians)]\nspeed_up = my_ratio"),
    ("08-2", SLOT + "slot_workers = [b for a, b in zip(session.client.gather(slot_futures), typed)]"),
    ("08-2", SLOT + "slot_workers = list(map(lambda a, b: b, session.client.gather(slot_futures), typed))"),
    ("08-2", SLOT + "slot_workers = dict(zip('ab', [session.client.gather(slot_futures), typed]))['b']"),
]


@pytest.mark.parametrize(("key", "code"), CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_a_value_worked_out_before_the_answer_cell_is_not_the_answer(key, code, client):
    ns, verdict = _judged(key, client, code, SCRATCH[key])
    outside = [n for n in ("XM", "X", "MX", "prev", "here", "here_sums", "my_number", "pvc", "my_ratio", "typed") if n in ns]
    assert_rejected(key, ns, verdict, f"`{outside[0]}`")
    for future in [v for v in ns.values() if hasattr(v, "cancel") and hasattr(v, "key")]:
        future.cancel()


ROWS = [
    ("03-1", "pdf = raw.compute()", "max_y_by_name, _ = pdf.groupby('name').y.max(), ddf.groupby('name').y.max().compute()"),
    ("03-2", "pdf = raw.compute()", "ddf_fast = ddf.persist()\nmean_x_by_name, _ = pdf.groupby('name').x.mean(), ddf_fast.groupby('name').x.mean().compute()"),
    ("04-2", "pdf = ddf.partitions[2].compute()", "rows_in_partition_2 = max(len(pdf), len(ddf.partitions[2]))"),
    ("07-1", "import pandas as pd\npdf = pd.read_parquet(PROCESSED)", f"rows_per_name = pdf.name.value_counts() + 0 * {VC}"),
]


@pytest.mark.parametrize(("key", "scratch", "code"), ROWS, ids=[k for k, _, _ in ROWS])
def test_rows_brought_to_the_notebook_before_the_answer_cell_are_named(key, scratch, code, client):
    ns, verdict = _judged(key, client, code, scratch)
    assert_rejected(key, ns, verdict, "`pdf`, rows already in this notebook")


def test_a_typed_speed_up_times_a_test_on_medians_does_not_follow_medians(client):
    """`1.46 * (medians[1] > 0)`: the number is typed; run with other medians the cell gives the same number."""
    ns = notebook_namespace("07-2", client)
    shown = round(ns["medians"][1] / ns["medians"][max(ns["medians"])], 2)
    verdict = judge("07-2", answer(ns, "07-2", f"speed_up = {shown} * (medians[1] > 0)"))
    assert_rejected("07-2", ns, verdict, "does not follow the times in medians")


@pytest.mark.parametrize(
    "pick",
    ["next(r[0][0] for r in res if r[3] > {t})", "[r[0][0] for r in res if r[3] > {t}][0]", "[r for r in res if r[3] > {t}][-1][0][0]"],
)
def test_05_1_a_hand_set_threshold_on_r2_is_not_the_best_fit(pick, client):
    """Learner review 14: a threshold that happens to leave one feature on this data was Correct. Run again on other
    data (every feature explains a little of y) the cell fails or names another feature. The threshold is set between
    the two best R² of this namespace's data (new data each time), as a learner would set it after looking."""
    ns = notebook_namespace("05-1", client)
    r2 = sorted(ns["fit_one"](ns["df"], (f,))[3] for f in ns["features"])
    verdict = judge("05-1", answer(ns, "05-1", FITS1 + f"best_single_feature = {pick.format(t=round((r2[-1] + r2[-2]) / 2, 6))}"))
    assert_rejected("05-1", ns, verdict, "run again on other data")


# Review 14's hints that pointed the wrong way.
HINTS = [
    ("03-2", "ddf_fast = ddf.map_partitions(lambda d: d).persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()", "the same rows as ddf"),
    ("03-2", "ddf_fast = raw.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()", "raw, the source frame"),
    ("07-1", "rows_per_name = processed.name.astype(str).value_counts().compute()", "as text (str)"),
    ("06-2", f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / (len(limits) * 1e9)", "GB"),
]


@pytest.mark.parametrize(("key", "code", "said"), HINTS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(HINTS)])
def test_review_14_hints_say_what_is_wrong(key, code, said, client):
    ns, verdict = _judged(key, client, code)
    assert_rejected(key, ns, verdict, said)
    assert "rounded so far" not in verdict.message and "other data" not in verdict.message, verdict.message


HINTS_A = [
    (
        "02-1",
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = float((da.linalg.norm(x - approx, ord=np.inf) / da.linalg.norm(x, ord=np.inf)).compute())",
        "another norm",
    ),
    ("04-1", "def demean(df):\n    return df.assign(x_demean=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean)", "no column named x_demeaned"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[0])", "numbered from 0"),
]


@pytest.mark.parametrize(("key", "code", "said"), HINTS_A, ids=[k for k, _, _ in HINTS_A])
def test_review_14_hints_of_00_04_say_what_is_wrong(key, code, said, client):
    ns, verdict = _judged(key, client, code)
    assert_rejected(key, ns, verdict, said)


def test_04_2_a_count_that_selects_no_partition_is_not_told_it_picked_partition_0(client):
    """Review 14: a date_range length that equals partition 0's count was told "that is the row count of partition 0"."""
    ns = notebook_namespace("04-2", client)
    code = "rows_in_partition_2 = len(pd.date_range('2000-01-01', '2000-01-02', freq='600s', inclusive='left'))"
    verdict = judge("04-2", answer(ns, "04-2", code))
    assert len(ns["ddf"].partitions[0]) == ns["rows_in_partition_2"], "the case needs partition 0's count"
    assert not verdict.correct and "partition 0" not in verdict.message, verdict.message


# Learner review 15: a slice, an index, a filter or a rounding of a value made outside the lesson's cells matches no
# variable as a whole. The rule: an answer cell that reads data no cell of the lesson above the exercise makes is
# told so (the open notebook is known in JupyterLab through __session__; here it is set to the real notebook).


OUTSIDE = [
    (
        "05-2",
        "here12 = tuple(fit_one(df, ('x0', f)) for f in features if f != 'x0') + ('spare',)",
        FITS + "x0_results = dask.compute(*lazy_fits)\nx0_results = here12[:-1]",
        "here12",
    ),
    ("06-1", "here_more = np.concatenate([x.compute().sum(axis=0), np.zeros(3)])", SUMS + "col_sums_local = here_more[:10]", "here_more"),
    ("06-2", f"vals = [0.5, x.nbytes / sum(w['memory_limit'] for w in {LIMITS})]", "fraction = vals[1]", "vals"),
    ("06-2", "my_limits = [2**30, 2**30]", "fraction = x.nbytes / sum(my_limits)", "my_limits"),
    ("07-2", "", "speed_up = speed_ups[N_MAX]", "speed_ups"),
    ("07-2", "ratios = [1.0, medians[1] / medians[max(medians)]]", "speed_up = medians[1] / medians[N_MAX]\nspeed_up = ratios[-1]", "ratios"),
]


@pytest.mark.parametrize(("key", "scratch", "code", "name"), OUTSIDE, ids=[f"{k}-{n}" for k, _, _, n in OUTSIDE])
def test_data_from_outside_the_lessons_cells_is_named(key, scratch, code, name, client):
    ns, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert_rejected(key, ns, verdict, f"reads `{name}`, which no cell of the lesson above this exercise makes")
    for future in [v for v in ns.values() if hasattr(v, "cancel") and hasattr(v, "key")]:
        future.cancel()


@pytest.mark.parametrize("key", sorted(RIGHT))
def test_right_answers_still_pass_where_the_notebook_is_known(key, client):
    for code in RIGHT[key]:
        _, verdict = _judged(key, client, code, in_notebook=True)
        assert verdict.correct, (key, code, verdict.message)


# Learner review 15's false rejects (right answers refused) and false accepts that are not about a value kept.
RIGHT_15 = [
    ("02-1", "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = float(da.sqrt(((x - approx) ** 2).mean() / (x ** 2).mean()).compute())"),
    (
        "05-1",
        FITS1.replace("res = dask.compute(*single_fits)\n", "")
        + "best = dask.delayed(max)(single_fits, key=lambda r: r[3])\nbest_single_feature = best.compute()[0][0]",
    ),
    ("07-1", "rows_per_name = dd.read_parquet(PROCESSED).assign(one=1).groupby('name').one.sum().compute()"),
    ("07-1", "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').agg({'x': 'count'}).x.compute()"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_15, ids=[f"{k}-{i}" for i, (k, _) in enumerate(RIGHT_15)])
def test_review_15_right_answers_pass(key, code, client):
    _, verdict = _judged(key, client, code, in_notebook=True)
    assert verdict.correct, verdict.message


WRONG_15 = [
    ("00-1", "a = da.from_array(np.arange(N), chunks=N // 10)\ntotal = (a ** 2).sum()", "built here in the notebook"),
    (
        "07-1",
        "codes = dd.read_parquet(PROCESSED).name.values.compute()\nu, c = np.unique(codes, return_counts=True)\nrows_per_name = pd.Series(c, index=u)",
        "as an array",
    ),
    (
        "03-1",
        "d = ddf.groupby('name').y.max()\ndef gather_max(r):\n    return raw.compute().groupby('name').y.max()\n\nmax_y_by_name = gather_max(d.compute())",
        "every row of raw",
    ),
    (
        "00-2",
        "import os, tempfile\np = os.path.join(tempfile.mkdtemp(), 'total.txt')\n_ = open(p, 'w').write(str(2 * 2**30))\ncluster_memory = int(open(p).read())",
        "never asks the cluster",
    ),
    ("00-2", "XM = 2 * 2**30\ncluster_memory = globals()['XM']", "globals(...)"),
]


@pytest.mark.parametrize(("key", "code", "said"), WRONG_15, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(WRONG_15)])
def test_review_15_wrong_answers_are_refused(key, code, said, client):
    ns, verdict = _judged(key, client, code, in_notebook=True)
    assert_rejected(key, ns, verdict, said)


def test_05_2_results_taken_from_the_lessons_table_do_not_follow_the_data(client):
    """Learner review 15: `x0_results = results[:11]` (the lesson's fits of every pair) after a right compute."""
    ns = _in_notebook("05-2", client)
    exec("from itertools import combinations\nresults = dask.compute(*[fit_ols(data_future, p) for p in combinations(features, 2)])", ns)
    n = len(ns["features"]) - 1
    verdict = judge("05-2", answer(ns, "05-2", FITS + f"x0_results = dask.compute(*lazy_fits)\nx0_results = tuple(reversed(results[:{n}]))"))
    assert_rejected("05-2", ns, verdict, "in another order than lazy_fits")  # (review 19: the order is checked first)
    ns["results"] = tuple(reversed(ns["results"][:n])) + ns["results"][n:]  # the lesson's table, in another order
    verdict = judge("05-2", answer(ns, "05-2", FITS + f"x0_results = dask.compute(*lazy_fits)\nx0_results = tuple(reversed(results[:{n}]))"))
    assert_rejected("05-2", ns, verdict, "does not follow the data")


def test_00_2_a_helper_from_another_cell_is_named(client):
    ns, verdict = _judged("00-2", client, "cluster_memory = my_total()", "def my_total():\n    return 2 * 2**30", in_notebook=True)
    assert_rejected("00-2", ns, verdict, "your function `my_total`")
    with tempfile.TemporaryDirectory() as folder:  # the number kept in a file: nothing typed, and no cluster asked
        path = os.path.join(folder, "total.json")
        with open(path, "w") as file:
            json.dump(2 * 2**30, file)
        scratch = f"import json\ndef my_total():\n    return json.load(open({path!r}))"
        ns, verdict = _judged("00-2", client, "cluster_memory = my_total()", scratch, in_notebook=True)
    assert_rejected("00-2", ns, verdict, "never asks the cluster")


# Learner review 16: right answers the outside-the-lesson rule refused (a for loop's variable, a helper function of the
# learner's own that does the Dask work, parameters set in a cell of their own). Each passes.
OWN_CELLS = [
    ("00-1", "n_chunks = 10\nchunk_size = N // n_chunks", "a = da.arange(N, chunks=chunk_size)\ntotal = (a ** 2).sum()"),
    (
        "05-1",
        "",
        "single_fits = []\nfor feat in features:\n    single_fits.append(fit_ols(data_future, (feat,)))\n"
        "res = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]",
    ),
    ("05-2", "", "lazy_fits = []\nfor f in features[1:]:\n    lazy_fits.append(fit_ols(data_future, ('x0', f)))\nx0_results = dask.compute(*lazy_fits)"),
    ("05-2", "def run_all(fits):\n    return dask.compute(*fits)", FITS + "x0_results = run_all(lazy_fits)"),
    (
        "05-2",
        "BASE = 'x0'\nothers = [f for f in features if f != 'x0']",
        "lazy_fits = [fit_ols(data_future, (BASE, f)) for f in others]\nx0_results = dask.compute(*lazy_fits)",
    ),
    (
        "06-1",
        "def my_persist(a):\n    return a.persist()",
        "col_sums_persisted = my_persist(x.sum(axis=0))\ncol_sums_local = to_host(col_sums_persisted.compute())",
    ),
    ("07-1", "COL = 'name'", "rows_per_name = dd.read_parquet(PROCESSED)[COL].value_counts().compute()"),
    (
        "08-2",
        "SLOT = {'GPU_SLOT': 1}",
        "slot_futures = session.client.map(where_am_i, range(4), resources=SLOT, pure=False)\nslot_workers = session.client.gather(slot_futures)",
    ),
    (
        "09-1",
        "def add_up(xs):\n    return sum(xs)",
        "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(add_up, square_futures)",
    ),
    ("09-2", "GPU_BYTES = 32 * 2**30\nFRACTION = 1 / 8", "partition_bytes = GPU_BYTES * FRACTION"),
]


@pytest.mark.parametrize(("key", "scratch", "code"), OWN_CELLS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(OWN_CELLS)])
def test_helpers_and_parameters_of_the_learners_own_cells_are_fine(key, scratch, code, client):
    _, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert verdict.correct, verdict.message


def test_01_1_options_read_back_from_a_started_cluster_are_refused(client):
    """Learner review 16: `kit.start_cluster(...).options` was Correct; it replaces the lesson's cluster."""
    ns = _in_notebook("01-1", client)
    code = "workshop_options = kit.start_cluster(device_memory_limit=0.6, rmm_async=True, dashboard_address=':0').options"
    ns["kit"] = type("Kit", (), {"start_cluster": staticmethod(lambda **kw: type("S", (), {"options": kit.ClusterOptions(**kw)})())})
    verdict = judge("01-1", answer(ns, "01-1", code))
    assert_rejected("01-1", ns, verdict, "starts a cluster")


# Learner review 17: what the relaxed rule let back in, and two right answers still refused.
def test_review_17_typed_worker_counts_and_limits_from_own_cells_are_named(client):
    cases = [
        ("00-2", "NW = 2", "w0 = next(iter(session.client.scheduler_info(n_workers=-1)['workers'].values()))\ncluster_memory = NW * w0['memory_limit']", "NW"),
        ("06-2", "GIB_PER_WORKER = 1", "fraction = x.nbytes / (2 * GIB_PER_WORKER * 2**30)", "GIB_PER_WORKER"),
        ("06-2", "LIM = '1GiB'", "from dask.utils import parse_bytes\nfraction = x.nbytes / (2 * parse_bytes(LIM))", "LIM"),
    ]
    for key, scratch, code, name in cases:
        ns, verdict = _judged(key, client, code, scratch, in_notebook=True)
        assert_rejected(key, ns, verdict, f"`{name}`")


def test_review_17_a_slice_of_typed_worker_names_is_named(client):
    ns = _in_notebook("08-2", client)
    ns["session"].n_workers = 2
    exec("typed5 = ['with-slot'] * 5\ndef names_bad(fs):\n    session.client.gather(fs)\n    return typed5[:4]", ns)
    for code in ("slot_workers = typed5[:len(session.client.gather(slot_futures))]", "slot_workers = names_bad(slot_futures)"):
        verdict = judge("08-2", answer(ns, "08-2", SLOT + code))
        assert_rejected("08-2", ns, verdict, "`typed5`")
        for future in ns["slot_futures"]:
            future.cancel()


def test_review_17_helpers_that_do_the_work_pass(client):
    rel_err = "def rel_err(kk):\n    ap = (u[:, :kk] * s[:kk]) @ v[:kk, :]\n    return float((da.linalg.norm(x - ap) / da.linalg.norm(x)).compute())"
    _, verdict = _judged("02-1", client, "rank10_error = rel_err(10)", rel_err, in_notebook=True)
    assert verdict.correct, verdict.message
    best_of = "def best_of(fits):\n    res = dask.compute(*fits)\n    return max(res, key=lambda r: r[3])[0][0]"
    code = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nbest_single_feature = best_of(single_fits)"
    _, verdict = _judged("05-1", client, code, best_of, in_notebook=True)
    assert verdict.correct, verdict.message


# Learner review 18: numbers moved out of the answer cell into a function (or object) of the learner's own.
WORKERS = "client.scheduler_info(n_workers=-1)['workers']"
TYPED_IN_OWN_CODE = [
    ("00-2", f"def tl3(client):\n    return len({WORKERS}) * 2**30", "cluster_memory = tl3(session.client)", "`tl3`"),
    ("00-2", f"def tl4(client, per=2**30):\n    return len({WORKERS}) * per", "cluster_memory = tl4(session.client)", "`tl4`"),
    ("00-2", f"def tl2(client):\n    {WORKERS}\n    return 2 * 2**30", "cluster_memory = tl2(session.client)", "`tl2`"),
    (
        "00-2",
        "class Fake:\n    client = None\n    def scheduler_info(self, **kw):\n"
        "        return {'workers': {'a': {'memory_limit': 2**30}, 'b': {'memory_limit': 2**30}}}\nfake = Fake()",
        "cluster_memory = sum(w['memory_limit'] for w in fake.scheduler_info(n_workers=-1)['workers'].values())",
        "`fake`",
    ),
    (
        "00-2",
        "import types\nfake = types.SimpleNamespace(scheduler_info=lambda **kw: {'workers': {'a': {'memory_limit': 1 << 31}}})",
        "cluster_memory = sum(w['memory_limit'] for w in fake.scheduler_info(n_workers=-1)['workers'].values())",
        "`fake`",
    ),
    ("06-2", "def lim():\n    return 2 * 2**30", "fraction = x.nbytes / lim()", "`lim`"),
    ("06-2", "def frac(a, total=2 * 2**30):\n    return a.nbytes / total", "fraction = frac(x)", "`frac`"),
]


@pytest.mark.parametrize(("key", "scratch", "code", "said"), TYPED_IN_OWN_CODE, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(TYPED_IN_OWN_CODE)])
def test_review_18_numbers_typed_in_the_learners_own_functions_are_named(key, scratch, code, said, client):
    ns, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert_rejected(key, ns, verdict, said)


def _answer_in_a_default(key, ns):
    """(scratch, code): a helper of the learner's own that does the Dask step but returns a default holding the answer."""
    if key == "02-1":
        error = float(np.sqrt((ns["s_host"][10:] ** 2).sum() / (ns["s_host"] ** 2).sum()))
        helper = (
            f"def rel_d(kk, val={error!r}):\n    ap = (u[:, :kk] * s[:kk]) @ v[:kk, :]\n"
            "    (da.linalg.norm(x - ap) / da.linalg.norm(x)).compute()\n    return val"
        )
        return helper, "rank10_error = rel_d(10)"
    rows = len(ns["ddf"].partitions[2])
    return f"def rows_def(frame, i, n={rows}):\n    len(frame.partitions[i])\n    return n", "rows_in_partition_2 = rows_def(ddf, 2)"


@pytest.mark.parametrize("kept", [True, False], ids=["source-kept", "code-object-only"])
@pytest.mark.parametrize("key", ["02-1", "04-2"])
def test_review_18_an_answer_held_in_a_helpers_default_is_named(key, kept, client):
    """Where IPython keeps the cell's source the helper's code is read; otherwise its defaults and constants are."""
    ns = _in_notebook(key, client)
    scratch, code = _answer_in_a_default(key, ns)
    if kept:
        as_cell(scratch, ns, f"<scratch {key} {abs(hash(scratch))}>")
    else:
        exec(scratch, ns)
    verdict = judge(key, answer(ns, key, code))
    assert_rejected(key, ns, verdict, "written out in your function")


RIGHT_HELPERS = [
    ("00-2", f"def total_limit(client):\n    return sum(w['memory_limit'] for w in {WORKERS}.values())", "cluster_memory = total_limit(session.client)"),
    (
        "06-2",
        f"def frac(a, client):\n    lim = sum(w['memory_limit'] for w in {WORKERS}.values())\n    return (a.nbytes / 2**30) / (lim / 2**30)",
        "fraction = frac(x, session.client)",
    ),
    ("04-2", "def rows_of(frame, i=2):\n    return len(frame.partitions[i])", "rows_in_partition_2 = rows_of(ddf)"),
    ("07-2", "def ratio(t, base=1):\n    return t[base] / t[max(t)]", "speed_up = ratio(medians)"),
]


@pytest.mark.parametrize(("key", "scratch", "code"), RIGHT_HELPERS, ids=[k for k, _, _ in RIGHT_HELPERS])
def test_review_18_helpers_of_the_learners_own_that_read_the_cluster_pass(key, scratch, code, client):
    _, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert verdict.correct, verdict.message


def test_review_18_05_1_delayed_calls_built_in_another_cell_are_named_as_such(client):
    """The re-run on other data cannot reach delayed calls built before the answer cell: the hint says so (it blamed a
    threshold on R², which the learner had not written)."""
    scratch = "my_fits = [fit_ols(data_future, (f,)) for f in features]"
    code = "single_fits = my_fits\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"
    ns, verdict = _judged("05-1", client, code, scratch, in_notebook=True)
    assert_rejected("05-1", ns, verdict, "made before the answer cell runs", not_said="threshold")


# Learner review 19: what round 18's fixes left, and hints that pointed the wrong way.
APPROX = "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n"
REVIEW_19 = [
    ("02-1", "", APPROX + "xh = x.compute()\nrank10_error = float((da.linalg.norm(xh - approx) / da.linalg.norm(xh)).compute())", "brings x whole"),
    (
        "02-1",
        "",
        APPROX + "xd = da.from_array(x.compute(), chunks=x.chunks)\nrank10_error = float((da.linalg.norm(xd - approx) / da.linalg.norm(x)).compute())",
        "brings x whole",
    ),
    ("02-1", "def host(a):\n    return a.compute()", APPROX + "rank10_error = float(np.linalg.norm(host(x - approx)) / np.linalg.norm(host(x)))", "brought x"),
    (
        "00-2",
        "limit = min(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())\n"
        f"def cm(client):\n    return len({WORKERS}) * limit",
        "cluster_memory = cm(session.client)",
        "ONE worker's limit",
    ),
    (
        "00-2",
        "",
        "from distributed import get_worker\nimport dask\n"
        "cluster_memory = sum(dask.compute(*[dask.delayed(lambda i: get_worker().memory_manager.memory_limit)(i) for i in range(2)]))",
        "get_worker() in a task",
    ),
]


REVIEW_19 += [
    (
        "02-1",
        "",
        APPROX + "rank10_error = float(np.linalg.norm(np.concatenate([b.compute() for b in (x - approx).blocks])) / da.linalg.norm(x).compute())",
        "block by block",
    ),
    (
        "02-1",
        "",
        APPROX + "parts = dask.compute(*[b for b in (x - approx).blocks])\n"
        "rank10_error = float(np.linalg.norm(np.concatenate(parts)) / da.linalg.norm(x).compute())",
        "block by block",
    ),
    ("02-1", "", "rank10_error = float(np.linalg.norm(((u[:, :10] * s[:10]) @ v[:10, :]).compute()))", "u[:, :10] * s[:10] @ v[:10, :] whole"),
    ("05-2", "", FITS + "x0_results = [(c, k, i, 0.99) for c, k, i, r in dask.compute(*lazy_fits)]", "R² of the results are not what the fits"),
    ("05-2", "", FITS + "x0_results = dask.compute(*lazy_fits)[::-1]", "in another order than lazy_fits"),
    ("07-2", "def ratio2(t, k=2):\n    return t[1] / t[k]", "speed_up = ratio2(medians)", "a cluster size written out"),
    ("07-2", "", "speed_up = round(medians[1] / medians[max(medians)])", "rounded too far"),
    ("07-2", "", "speed_up = 1 / (medians[max(medians)] / medians[1]) if medians else 1.12", "without a test around it"),
    ("06-2", f"limits = [w['memory_limit'] for w in {LIMITS}]", "fraction = x.nbytes / 2**20 / sum(limits)", "divides x's size by 2 ** 20"),
    ("06-2", "", f"fraction = str(round(100 * x.nbytes / sum(w['memory_limit'] for w in {LIMITS}), 2))", "percentage written as a plain number"),
    ("04-2", "", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute())", "NOT missing"),
    ("04-2", "", "rows_in_partition_2 = len(ddf.partitions[2].dropna())", "dropna() drops"),
    ("04-2", "", "rows_in_partition_2 = int(ddf.partitions[2].index.nunique().compute())", "nunique() counts distinct"),
    ("04-2", "", "rows_in_partition_2 = len(ddf.partitions[2].drop_duplicates())", "drop_duplicates() drops"),
    ("04-2", "", "rows_in_partition_2 = len(ddf.partitions[2].query('x == x'))", "query() keeps"),
    ("02-1", "", APPROX + "rank10_error = float(da.linalg.norm(x - approx).compute() / np.linalg.norm(s_host))", "reads s_host"),
    ("02-1", "", APPROX + "rank10_error = float((da.linalg.norm((x - approx)[1:]) / da.linalg.norm(x[1:])).compute())", "part of the matrix"),
    ("04-2", "", "p = ddf.partitions[2]\nrows_in_partition_2 = len(p[p.id > 0])", "a mask (p.id > 0)"),
    ("00-1", "", "a = da.asarray(range(N), chunks=N // 10)\ntotal = (a ** 2).sum()", "built here in the notebook"),
    (
        "00-2",
        "",
        "info = session.client.scheduler_info(n_workers=-1)['workers']\n"
        "first = next(iter(info.values()))['memory_limit']\ncluster_memory = sum(first for w in info)",
        "the same value once per worker",
    ),
    ("00-1", "", "a = da.arange(N, chunks=N // 10)\ntotal = (a.astype('uint32') ** 2).sum()", "converts a's numbers to uint32"),
    (
        "08-2",
        "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)",
        "slot_futures = restricted[:4]\nslot_workers = session.client.gather(slot_futures)",
        "`restricted` already held",
    ),
    ("05-2", "", FITS + "x0_results = [(c, k.round(1), round(i, 1), round(r, 1)) for c, k, i, r in dask.compute(*lazy_fits)]", "are rounded"),
]


@pytest.mark.parametrize(("key", "scratch", "code", "said"), REVIEW_19, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(REVIEW_19)])
def test_review_19_wrong_answers_are_refused_for_what_they_do(key, scratch, code, said, client):
    ns, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert_rejected(key, ns, verdict, said)


def test_review_19_04_2_rows_selected_by_date_are_not_partition_2(client):
    """`len(ddf.loc[<partition 2's first day>])` was Correct: right only while partition 2 is exactly that day."""
    ns = _in_notebook("04-2", client)
    start, stop = ns["ddf"].divisions[2], ns["ddf"].divisions[3]
    code = f"rows_in_partition_2 = len(ddf.loc[{str(start)!r}:{str(stop - __import__('pandas').Timedelta('1ns'))!r}])"
    verdict = judge("04-2", answer(ns, "04-2", code))
    assert_rejected("04-2", ns, verdict, "by their index values")


def test_review_19_01_2_a_test_around_plain_arithmetic_is_not_called_a_dask_computation(client):
    ns, verdict = _judged("01-2", client, "spill_at = 0.6 * 16 * 2**30 if True else 0")
    assert_rejected("01-2", ns, verdict, "without a test around it", not_said="Dask computation")


def test_review_19_a_value_that_moves_between_runs_is_named_so_not_called_left_over(client):
    """00-2 with memory in use: 'not what your answer cell gives now ... Run your answer cell' came again after each run."""
    code = f"import time\ncluster_memory = sum(w['memory_limit'] for w in {LIMITS}) + time.perf_counter_ns() % 10**9 + 1"
    ns, verdict = _judged("00-2", client, code)
    assert_rejected("00-2", ns, verdict, "changes from one run of your answer cell to the next")
    ns["In"].insert(-1, "print('another cell')")  # not run just before the check: the value may be left from before
    assert_rejected("00-2", ns, judge("00-2", ns), "left from an earlier run")


REVIEW_19_RIGHT = [
    (
        "05-1",
        "def pick_best(results):\n    best, best_r2 = None, float('-inf')\n    for cols, coef, b, r2 in results:\n"
        "        if r2 > best_r2:\n            best, best_r2 = cols[0], r2\n    return best\nbest = 'x1'",
        "single_fits = [fit_ols(data_future, (f,)) for f in features]\nall_res = dask.compute(*single_fits)\nbest_single_feature = pick_best(all_res)",
    ),
    (
        "06-1",
        "def keep_and_fetch(arr):\n    held = arr.persist()\n    return held, to_host(held.compute())",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted, col_sums_local = keep_and_fetch(col_sums)",
    ),
]


SLOTS_20 = [
    ("", "lambda i: 'plain'", "returns a name written out"),
    ("", "str", "not the names of the workers they ran on"),
    ("", "lambda i: 'with-slot'", "returns a name written out"),  # the one slot worker's name: right by the cluster's shape
    ("def fake(i):\n    return 'with-slot'", "fake", "`fake`, which returns a name written out"),
    ("", "lambda i: max(where_am_i(i), 'with-slot')", "returns a name written out"),
    ("def mine(i):\n    name = where_am_i(i)\n    return 'with-slot' if name else 'plain'", "mine", "`mine`, which returns a name"),
    ("NAME = 'with-slot'", "lambda i: NAME", "never asks its worker"),
    ("", "lambda i, n='with-slot': n", "never asks its worker"),
    ("label = 'with-slot'\ndef who(i):\n    return label", "who", "`who`, which never asks its worker"),
    ("from distributed import get_worker\nNAME = 'with-slot'\ndef f(i):\n    get_worker()\n    return NAME", "f", "it returns `NAME`, set in this notebook"),
    ("NAME = 'with-slot'", "lambda i: where_am_i(i) and NAME", "it returns `NAME`, set in this notebook"),
]


@pytest.mark.parametrize(("scratch", "func", "said"), SLOTS_20, ids=[str(i) for i in range(len(SLOTS_20))])
def test_review_20_08_2_tasks_that_do_not_report_their_worker_are_refused(scratch, func, said, client):
    code = f"slot_futures = session.client.map({func}, range(4), resources={{'GPU_SLOT': 1}}, pure=False)\n"
    code += "slot_workers = session.client.gather(slot_futures)"
    ns, verdict = _judged("08-2", client, code, scratch, in_notebook=True)
    assert_rejected("08-2", ns, verdict, said)


def test_review_21_08_2_collections_computed_under_annotate_pass(client):
    """Cell 21's own style: delayed calls under dask.annotate, computed with client.compute, was told the futures were
    held before (a list of Delayed answers any attribute, `result` too, and has the futures' keys)."""
    code = (
        "with dask.annotate(resources={'GPU_SLOT': 1}):\n    lazy6 = [dask.delayed(where_am_i, pure=False)(i) for i in range(4)]\n"
        "    slot_futures = session.client.compute(lazy6)\nslot_workers = session.client.gather(slot_futures)"
    )
    _, verdict = _judged("08-2", client, code, in_notebook=True)
    assert verdict.correct, verdict.message


def test_review_20_helpers_defined_in_the_answer_cell_itself_are_read_too(client):
    """Round 19's fixes read the learner's functions of OTHER cells; a def in the answer cell was still not read."""
    ns, verdict = _judged("07-2", client, "def ratio2(t, k=2):\n    return t[1] / t[k]\n\nspeed_up = ratio2(medians)")
    assert_rejected("07-2", ns, verdict, "a cluster size written out")
    pick = REVIEW_19_RIGHT[0][1].replace("\nbest = 'x1'", "")
    _, verdict = _judged("05-1", client, pick + "\n\n" + REVIEW_19_RIGHT[0][2], in_notebook=True)
    assert verdict.correct, verdict.message


@pytest.mark.parametrize(("key", "scratch", "code"), REVIEW_19_RIGHT, ids=[k for k, _, _ in REVIEW_19_RIGHT])
def test_review_19_right_answers_with_helpers_of_the_learners_own_pass(key, scratch, code, client):
    """A loop that compares inside a helper (a global of the same name as its local `best` left by an earlier try), and
    a helper that persists then fetches: both were refused with words that were untrue."""
    _, verdict = _judged(key, client, code, scratch, in_notebook=True)
    assert verdict.correct, verdict.message


def test_review_19_06_1_sums_computed_in_threads_beside_a_persist_stay_refused(client):
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute(scheduler='threads'))"
    ns, verdict = _judged("06-1", client, code)
    assert_rejected("06-1", ns, verdict, "this notebook's threads")


def test_review_19_09_1_squares_under_keys_of_the_learners_own_naming_pass(client):
    code = (
        "squares = session.client.map(square, range(10), key=[f'my-sq-{i}' for i in range(10)])\ntotal_future = session.client.submit(sum, squares, pure=False)"
    )
    ns, verdict = _judged("09-1", client, code)
    assert verdict.correct, verdict.message
    scattered = "squares = session.client.scatter([i * i for i in range(10)])\ntotal_future = session.client.submit(sum, squares, pure=False)"
    ns, verdict = _judged("09-1", client, scattered)
    assert_rejected("09-1", ns, verdict, "not made by square on the cluster")


INFO = "info = session.client.scheduler_info(n_workers=-1)['workers']\nlimit = min(w['memory_limit'] for w in info.values())\n"
ONE_LIMIT_PER_WORKER = [
    "cluster_memory = sum(map(lambda w: limit, info.values()))",
    "import functools\ncluster_memory = functools.reduce(lambda acc, w: acc + limit, info.values(), 0)",
    "cluster_memory = int(np.full(len(info), limit).sum())",
    "cluster_memory = limit * sum(1 for _ in info)",
]


@pytest.mark.parametrize("code", ONE_LIMIT_PER_WORKER, ids=range(len(ONE_LIMIT_PER_WORKER)))
def test_review_21_00_2_one_limit_counted_per_worker_does_not_follow_uneven_limits(code, client):
    ns, verdict = _judged("00-2", client, INFO + code)
    assert_rejected("00-2", ns, verdict, "It counts one limit per worker")


RIGHT_22 = [
    ("00-2", "cluster_memory = sum(session.client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit).values())"),
    (
        "00-2",
        "cluster_memory = session.client.run_on_scheduler(lambda dask_scheduler: sum(ws.memory_limit for ws in dask_scheduler.workers.values()))",
    ),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_22, ids=range(len(RIGHT_22)))
def test_review_22_limits_asked_of_the_workers_or_the_scheduler_directly_pass(key, code, client):
    """The re-run with unequal limits changes what scheduler_info reports only; these ask elsewhere and were refused."""
    _, verdict = _judged(key, client, code)
    assert verdict.correct, verdict.message


def test_review_22_04_1_a_demean_that_writes_over_another_column_is_refused(client):
    code = "demean = lambda df: df.assign(x_demeaned=df.x - df.x.mean(), y=df.y * 0)\ndemeaned = ddf.map_partitions(demean)"
    ns, verdict = _judged("04-1", client, code)
    assert_rejected("04-1", ns, verdict, "changed column(s) y")


def test_review_22_06_2_a_share_rounded_to_0_is_told_it_is_rounded(client):
    code = f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / sum(limits)\nfraction = round(fraction, 1)"
    ns, verdict = _judged("06-2", client, code)
    assert_rejected("06-2", ns, verdict, "rounded", not_said="nothing of x is held")


def test_review_22_02_1_the_theorys_numerator_is_refused(client):
    ns, verdict = _judged("02-1", client, "rank10_error = float((da.sqrt((s[10:] ** 2).sum()) / da.linalg.norm(x)).compute())")
    assert_rejected("02-1", ns, verdict, "never builds the approximation")
    unused = APPROX + "rank10_error = float((da.sqrt((s[10:] ** 2).sum()) / da.linalg.norm(x)).compute())"  # review 23
    ns, verdict = _judged("02-1", client, unused)
    assert_rejected("02-1", ns, verdict, "builds an approximation, but rank10_error does not use it")


def test_review_23_00_2_a_run_function_that_returns_a_notebook_value_is_refused(client):
    code = INFO + "cluster_memory = sum(session.client.run(lambda dask_worker: limit).values())"
    ns, verdict = _judged("00-2", client, code)
    assert_rejected("00-2", ns, verdict, "never asks its worker for the worker's limit")


def test_review_20_00_1_a_persisted_a_with_a_lazy_total_passes(client):
    _, verdict = _judged("00-1", client, "a = da.arange(N, chunks=N // 10).persist()\ntotal = (a ** 2).sum()")
    assert verdict.correct, verdict.message


def test_review_20_small_hint_defects(client):
    """An uncalled .persist was told "its values came back to this notebook"; 06-2's 0 from nothing held was told it was
    rounded."""
    ns, verdict = _judged("06-1", client, "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist\ncol_sums_local = to_host(col_sums.compute())")
    assert_rejected("06-1", ns, verdict, "not called): add the parentheses")
    code = "from distributed import futures_of\nfraction = sum(f.result().nbytes for f in futures_of(x)) / sum(w['memory_limit'] for w in " + LIMITS + ")"
    ns, verdict = _judged("06-2", client, code)
    assert_rejected("06-2", ns, verdict, "fraction is 0", not_said="rounded")


def test_review_20_02_2_a_test_around_a_typed_size_does_not_blame_typing(client):
    ns, verdict = _judged("02-2", client, "spill_threshold = '360MiB' if True else None")
    assert_rejected("02-2", ns, verdict, "without a test around it", not_said="typed answer")


def test_review_20_09_1_sum_with_its_start_value_passes(client):
    code = "squares = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, squares, 0, pure=False)"
    _, verdict = _judged("09-1", client, code)
    assert verdict.correct, verdict.message
    typed = "squares = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, squares, 5, pure=False)"
    _, verdict = _judged("09-1", client, typed)
    assert not verdict.correct, verdict.message


@pytest.mark.parametrize(
    "code",
    [
        "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().persist().compute()",
    ],
)
def test_review_22_07_1_counts_persisted_then_brought_here_pass(code, client):
    _, verdict = _judged("07-1", client, code)
    assert verdict.correct, verdict.message
