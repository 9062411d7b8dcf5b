"""Learner review 7b (notebooks 05-09): each false accept / false reject the reviewer found, with the reviewer's answer
cell, run in the corpus' notebook-like namespace on its in-process cluster (see tests/test_exercises_corpus.py)."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import REVEALS, RIGHT
from tests.test_exercises_corpus import corpus_client, namespace  # noqa: F401  (the `client` fixture, used here)


def _ns(key, client):
    """The corpus namespace, as the notebooks have it: 06's x lazy; 07's raw Parquet (names as text) and cell 20's table."""
    ns = namespace(key, client)
    if key.startswith("06"):  # as notebook 06: x is lazy (x_persisted is another name)
        ns["x"] = ns["da"].random.default_rng(6).random((250_000, 10), chunks=(62_500, 10))
        ns["N_ROWS"] = 250_000
    if key.startswith("07"):
        raw = os.path.join(os.path.dirname(ns["PROCESSED"]), "raw")
        if not os.path.exists(raw):
            ns["raw"].to_parquet(raw, write_index=False)
        medians = ns["medians"] = {1: 3.13472, 2: 1.92618}  # unrounded, as statistics.median of measured times
        n_max = max(medians)
        speed_ups = {n: medians[1] / t for n, t in medians.items()}
        ours = pd.DataFrame({"workers": list(medians), "median s": [round(t, 2) for t in medians.values()]})
        ours["speed-up"] = [round(speed_ups[n], 2) for n in medians]
        ns.update(os=os, RAW=raw, WORKDIR=os.path.dirname(ns["PROCESSED"]), N_MAX=n_max, speed_ups=speed_ups, ours=ours)
    return ns


def _judge(key, code, client, ns=None):
    ns = ns if ns is not None else _ns(key, client)
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return judge(key, ns)


# items 2-4: false accepts (06-1, 07-1) and borderline accepts (07-2), each with what the hint must say happened
WRONG = [
    (
        "06-1",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute(scheduler='threads'))",
        "this notebook's threads",
    ),
    (
        "06-1",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute(scheduler='sync'))",
        "this notebook's threads",
    ),
    ("07-1", 'rows_per_name = dd.read_parquet(RAW).name.map(lookups["name"]).value_counts().compute()', "the raw input"),
    ("07-1", 'frame = dd.read_parquet(RAW)\nrows_per_name = frame.name.map(lookups["name"]).value_counts().compute()', "the raw input"),
    ("07-1", 'rows_per_name = raw.name.map(lookups["name"]).value_counts().compute()', "did not read the processed Parquet"),
    ("07-2", "speed_up = max(medians.values()) / min(medians.values())", "slowest"),
    ("07-2", 'speed_up = ours["median s"].iloc[0] / ours["median s"].iloc[-1]', "rounded"),
]


@pytest.mark.parametrize(("key", "code", "said"), WRONG)
def test_review_7b_wrong_answers_are_rejected_saying_what_happened(key, code, said, client):
    ns = _ns(key, client)
    verdict = _judge(key, code, client, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


# 06-1's right answers with x lazy (as in the notebook); 07-1 read back in three styles; item 4: 07-2 from cell 20's results
RIGHT_7B = [
    *[("06-1", code) for code in RIGHT["06-1"]],
    ("07-1", "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()"),
    ("07-1", "out = dd.read_parquet(PROCESSED)\nrows_per_name = out.name.value_counts().compute()"),
    ("07-1", "rows_per_name = dd.read_parquet(os.path.join(WORKDIR, 'processed')).name.value_counts().compute()"),
    ("07-2", "speed_up = speed_ups[N_MAX]"),
    ("07-2", 'speed_up = ours["speed-up"].iloc[-1]'),
    ("07-2", "speed_up = speed_ups[max(speed_ups)]"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_7B)
def test_review_7b_right_answers_are_accepted(key, code, client):
    verdict = _judge(key, code, client)
    assert verdict.correct, verdict.message


class _Held:
    """What session.memory() reports when the workers hold nothing (notebook 06 after its cell 20 dropped x_persisted)."""

    def total(self, field):
        return 0


# item 6: hints that said something else than what happened (each: the words it must say, and the false ones it said)
FITS_05 = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\n"
X0_05 = 'lazy_fits = [fit_ols(data_future, ("x0", f)) for f in features if f != "x0"]\n'
MISDIAGNOSED = [
    (
        "05-2",
        X0_05
        + 'futures = [session.client.submit(fit_one, data_future, ("x0", f)) for f in features if f != "x0"]\nx0_results = session.client.gather(futures)',
        "side by side",
        "each waits for the previous one",
    ),
    ("05-2", X0_05 + "x0_results = dask.persist(*lazy_fits)", "held on the workers", "nothing ran yet"),
    ("05-1", FITS_05 + "best_single_feature = min(res, key=lambda r: r[1][0])[0][0]", "entry 1 ", "entry 0"),
    ("05-1", FITS_05 + 'best_single_feature = "x1"', "written out", "sent no fits"),
    ("05-1", FITS_05 + "best_single_feature = max(res, key=lambda r: r[3])[0][0]\nopen('/dev/null')", "Could not be checked (05-1): ", "Not yet"),
    (
        "06-2",
        "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"
        "fraction = session.memory().total('managed_bytes') / sum(limits)",
        "hold none of x now",
        "typed",
    ),
    (
        "08-1",
        "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json'])\n"
        "script_options = {k: v for k, v in vars(args).items() if v is not None}",
        "'4'",
        "typed by hand",
    ),
    (
        "09-1",
        "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)\n"
        "session.client.cancel(square_futures)",
        "Remove that call",
        "Could not be checked (09-1): total_future's results",
    ),
    ("09-2", "partition_bytes = limit // 8", "CPU worker", "that is not"),
    # item 8: the item size typed (8 bytes per float64) is the size worked out by hand
    (
        "06-2",
        "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\nfraction = (N_ROWS * N_COLS * 8) / sum(limits)",
        "typed in",
        "that is not it",
    ),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), MISDIAGNOSED, ids=[f"{k}-{s.strip()}" for k, _, s, _ in MISDIAGNOSED])
def test_review_7b_hints_say_what_happened(key, code, said, not_said, client):
    ns = _ns(key, client)
    if key == "06-2":
        ns["session"].memory = _Held
    if key == "09-2":
        ns["limit"] = 2 * 2**30
    verdict = _judge(key, code, client, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and not_said not in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


def test_08_after_the_close_cell_the_check_names_the_cells_that_bring_the_cluster_back(client, tmp_path):
    """Review 7b, item 9: in 08 five cells start a cluster, and "re-run the set-up cell (session = kit.start_cluster...)"
    did not say which; the cluster 08-2 needs is the one its cell 11 starts (writing the scheduler file) and a later cell
    connects to. Now the check names them, in order."""
    from distributed import Client

    from tests.test_exercises_corpus import Session

    closed = Client(client.scheduler.address)
    closed.close()
    code = "slot_futures = [1]\nslot_workers = ['x']"
    ns = {**_ns("08-2", client), "session": Session(closed), "SCHEDULER_FILE": str(tmp_path / "gone" / "scheduler.json")}
    exec(compile(code, "<answer 08-2>", "exec"), ns)
    ns["In"] = [
        "",
        "session = kit.start_cluster(**CPU_CLUSTER)",  # In [1]
        "SCHEDULER_FILE = os.path.join(WORKDIR, 'scheduler.json')\nscheduler = subprocess.Popen(['dask', 'scheduler'])",  # In [2]
        "session = kit.start_cluster(scheduler_file=SCHEDULER_FILE, connect_timeout=120)",  # In [3]
        code,
        "session.close()\nshutil.rmtree(WORKDIR)",
        'exercises.check("08-2", globals())',
    ]
    verdict = judge("08-2", ns)
    assert "the cluster is closed: re-run the set-up cell" in verdict.message, verdict.message
    assert "In [2] (makes `SCHEDULER_FILE`), then In [3]" in verdict.message and "session = kit.start_cluster(...)" not in verdict.message, verdict.message
