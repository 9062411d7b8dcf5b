# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Exercise judges, one behaviour across several notebooks' exercises: each hint names what the answer cell did and
hides the answer; an answer cell that does not parse or that raised is never judged by an earlier run's values; a
typed answer hidden in an expression, or a Dask part that contributes nothing, is not accepted; right answers in other
styles pass. Each case is an answer cell learners wrote in review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from distributed import Future, wait
from IPython.core.interactiveshell import InteractiveShell

from gpu_dask_kit.exercises import judge
from gpu_dask_kit.exercises.zeroed import zeroing
from gpu_dask_kit.notebook import hints, outcomes

from ..test_exercises_cases import APPROX, DEMEAN, ERROR, FITS, FITS1, INPLACE, LIMITS, REVEALS, RIGHT
from ..test_exercises_corpus import _run
from .helpers import (
    LIMITS_06,
    SUMS,
    RaisedShell,
    assert_refused,
    cells_in_shell,
    judge_answer,
    judge_answer_with_ns,
    judged,
    judged_cell,
    judged_with_ns,
    not_yet,
    notebook_namespace,
)

# Each: the key, the answer cell, what the hint must say, and what it said before (reviews 4 and 5).
DIAGNOSES = [
    # 03-1: a shuffle then a per-partition max ran on the workers: not "in this notebook"
    ("03-1", "max_y_by_name = ddf.shuffle('name').map_partitions(lambda d: d.groupby('name').y.max()).compute()", "the workers made", "in this notebook"),
    ("03-1", 'max_y_by_name = ddf.sort_values("y").groupby("name").y.last().compute()', "sorted every row", "in this notebook"),
    (
        "03-2",
        "import dask.dataframe as dd\nddf_fast = dd.from_pandas(ddf.compute(), npartitions=ddf.npartitions).persist()\n"
        "mean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "went through this notebook",
        "other data",
    ),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()\nsession.client.cancel(ddf_fast)",
        "cancelled or lost",
        "closed",
    ),
    # 06-1 is about an array: no "frame" or "partitions" in the Future hint
    ("06-1", SUMS + "col_sums_persisted = session.client.compute(col_sums)\ncol_sums_local = to_host(col_sums.compute())", "is a Future", "frame as one"),
    ("06-1", SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = None", "assigned None", "NoneType"),
    ("06-1", SUMS + "col_sums_persisted = None\ncol_sums_local = to_host(col_sums.compute())", "assigned None", "came back to this notebook"),
    ("06-2", "fraction = x.nbytes / (4 * 10**9)", "10**9 bytes", "that is not it"),
    ("06-2", f"fraction = x.nbytes / (0.6 * sum(w['memory_limit'] for w in {LIMITS}))", "target fraction", "that is not it"),
    ("06-2", f"fraction = x.compute().nbytes / sum(w['memory_limit'] for w in {LIMITS})", "computed x", "typed"),
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


@pytest.mark.parametrize(("key", "code", "said", "not_said"), DIAGNOSES, ids=[f"{d[0]}-{d[2]}" for d in DIAGNOSES])
def test_a_hint_names_what_the_answer_did(key, code, said, not_said, client):
    verdict = judge(key, _run(code, key, client))
    assert verdict.answered and not verdict.correct and said in verdict.message and not_said not in verdict.message, verdict.message


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


# Review 6, item 1: a right answer, then the answer cell changed so that it raises: the old values stay in the names.
# The cells run in a real IPython shell (``store_history``, as a kernel does), so that ``In`` and the record of which
# cells raised are IPython's own.
RAISING = [
    ("08-2", RIGHT["08-2"][0], "slot_futures = [where_am_i(i) for i in range(4)]\nslot_workers = session.client.gather(slot_futures)", "ValueError"),
    (
        "08-2",
        RIGHT["08-2"][0],
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(slot_futurez)",
        "NameError",
    ),
    ("09-1", RIGHT["09-1"][1], "futs = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, futz)", "NameError"),
    (
        "09-1",
        RIGHT["09-1"][1],
        "from distributed import get_worker\nsquare_futures = session.client.map(square, range(10))\nget_worker()\ntotal_future = session.client.submit(sum, square_futures)",
        "ValueError",
    ),
    ("06-2", RIGHT["06-2"][2], f"fraction = x.nbytes / sum(w['memory_limt'] for w in {LIMITS})", "KeyError"),
    ("02-1", RIGHT["02-1"][1], "rank10_error = float(undefined_error.compute())", "NameError"),
]


@pytest.mark.parametrize(("key", "right", "raising", "error"), RAISING, ids=[f"{k}-{e}" for k, _, _, e in RAISING])
def test_an_answer_cell_that_raised_is_never_judged_by_the_values_an_earlier_run_left(key, right, raising, error, shell, client):
    """Before: 08-2 and 09-1 said "Correct" (08-2's NameError: "not made from slot_futures")."""
    ns = cells_in_shell(shell, key, client, right)
    assert judge(key, ns).correct, judge(key, ns).message
    ns = cells_in_shell(shell, key, client, raising)
    verdict = judge(key, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert verdict.message.startswith(f"Could not be checked ({key}): your answer cell (In [") and (
        f"raised {error}" in verdict.message or f"failed when it last ran ({error}" in verdict.message
    ), verdict.message
    ns = cells_in_shell(shell, key, client, right)  # fixed again: judged as usual
    assert judge(key, ns).correct, judge(key, ns).message


def test_the_kits_extension_records_which_cells_raise(shell):
    """start_cluster loads the extension in IPython: from then on, the record is kept (also beside another handler)."""
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.set_custom_exc((ZeroDivisionError,), lambda *a, **k: None)  # another handler: the kit's hints stay off ...
    hints.load_ipython_extension(shell)
    shell.run_cell("x = 1 / 0", store_history=True)
    shell.run_cell("y = 1", store_history=True)
    number = shell.execution_count - 2
    assert outcomes.raised(shell.user_ns, number) == "ZeroDivisionError: division by zero"  # ... the record does not
    assert outcomes.raised(shell.user_ns, number + 1) is None
    assert outcomes.raised({}, number) is None  # not IPython: nothing known


# Review 7, item 1: the answer typed in, behind a Dask expression times zero. The expected numbers are worked out from
# the corpus' namespace (never typed here), then written into the answer cell the way the reviewer typed them.
HIDDEN = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + {total}"),
    ("02-1", "rank10_error = float((da.linalg.norm(x) * 0).compute()) + {error!r}"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 0 + {rows}"),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute() * 0) + {rows}"),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].x.count().compute() * 0) + int('{rows}')"),
]


@pytest.mark.parametrize(("key", "code"), HIDDEN, ids=[f"{k}-{i}" for i, (k, _) in enumerate(HIDDEN)])
def test_a_typed_answer_hidden_in_an_expression_is_not_accepted(key, code, client):
    """Before: each was "Correct" (only a bare literal was seen as typed)."""
    verdict = judged(key, client, code)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "also written out in your answer cell" in verdict.message, verdict.message


UNRELATED = [  # right answers with numbers written out that are not the answer
    ("00-1", "a = da.arange(N, chunks=100_000)\ntotal = (a ** 2).sum() * 1"),
    (
        "02-1",
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx, ord='fro') / da.linalg.norm(x)).compute()) * 1.0",
    ),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].map_partitions(len).compute().sum()) + 0"),
    ("04-2", "part = 2\nrows_in_partition_2 = len(ddf.get_partition(part))"),
]


@pytest.mark.parametrize(("key", "code"), UNRELATED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(UNRELATED)])
def test_other_numbers_written_out_in_a_right_answer_are_fine(key, code, client):
    verdict = judged(key, client, code)
    assert verdict.correct, verdict.message


# Review 7, item 6: hints that said something else than what happened (each "before" was the message the reviewer got).
RANK10_ERROR = f"rank10_error = float({ERROR}.compute())"
HONEST = [
    ("02-1", "approx = (u[:, :10] * s[:10]) @ v[:, :10].T\n" + RANK10_ERROR, "approx is not close to x", "divide norm(x - approx) by norm(x)"),
    (
        "02-1",
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n" + RANK10_ERROR + "\nrank10_error = round(rank10_error, 2)",
        "rounded to 2 decimals",
        "check the slices",
    ),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().round(4)", "rounded to 4 decimals", "which column and which aggregation"),
    ("03-2", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute().round(3)", "rounded to 3 decimals", "check the column"),
    (
        "03-2",
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.map_partitions(lambda d: d.groupby('name').x.mean()).compute().groupby(level=0).mean()",
        "means of the partitions' means",
        "combined here, in this notebook, by hand",
    ),
    ("04-2", "rows_in_partition_2 = ddf.partitions[2].compute().size", ".size counts every cell", "select that one partition"),
    (
        "02-1",
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n" + RANK10_ERROR + "\ndef kill():\n    pass\n\nkill()",
        "Could not be checked (02-1): the check runs",
        "Not yet",
    ),
]


@pytest.mark.parametrize(("key", "code", "said", "before"), HONEST, ids=[f"{k}-{s[:20]}" for k, _, s, _ in HONEST])
def test_hints_say_what_happened(key, code, said, before, client):
    verdict = judged(key, client, code)  # (kill: a call the check does not run twice; this one does nothing)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and before not in verdict.message, verdict.message


# Review 7b, items 2-4: false accepts (06-1, 07-1) and borderline accepts (07-2), each with what the hint must say
# happened, in the namespace as the notebooks have it.
WRONG_IN_THE_NOTEBOOKS_STATE = [
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


@pytest.mark.parametrize(("key", "code", "said"), WRONG_IN_THE_NOTEBOOKS_STATE)
def test_wrong_answers_are_rejected_saying_what_happened(key, code, said, client):
    ns = notebook_namespace(key, client)
    verdict = judge_answer(key, code, client, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


# 06-1's right answers with x lazy (as in the notebook); 07-1 read back in three styles; 07-2 from cell 20's results
RIGHT_IN_THE_NOTEBOOKS_STATE = [
    *[("06-1", code) for code in RIGHT["06-1"]],
    ("07-1", "rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()"),
    ("07-1", "out = dd.read_parquet(PROCESSED)\nrows_per_name = out.name.value_counts().compute()"),
    ("07-1", "rows_per_name = dd.read_parquet(os.path.join(WORKDIR, 'processed')).name.value_counts().compute()"),
    ("07-2", "speed_up = speed_ups[N_MAX]"),
    ("07-2", 'speed_up = ours["speed-up"].iloc[-1]'),
    ("07-2", "speed_up = speed_ups[max(speed_ups)]"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_IN_THE_NOTEBOOKS_STATE)
def test_right_answers_in_the_notebooks_state_are_accepted(key, code, client):
    verdict = judge_answer(key, code, client)
    assert verdict.correct, verdict.message


class _Held:
    """What session.memory() reports when the workers hold nothing (notebook 06 after its cell 20 dropped x_persisted)."""

    def total(self, field):
        return 0


# Review 7b, item 6: hints that said something else than what happened (each: the words it must say, and the false ones it said)
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


def _slow_square(i):
    import time

    time.sleep(0.2)
    return i * i


@pytest.mark.parametrize(("key", "code", "said", "not_said"), MISDIAGNOSED, ids=[f"{k}-{s.strip()}" for k, _, s, _ in MISDIAGNOSED])
def test_hints_say_what_happened_and_hide_the_answer(key, code, said, not_said, client):
    ns = notebook_namespace(key, client)
    if key == "06-2":
        ns["session"].memory = _Held
    if key == "09-2":
        ns["limit"] = 2 * 2**30
    if key == "09-1":  # squares that take a moment: the cancel reaches them before the sum ran (else a race: the sum of
        ns["square"] = _slow_square  # ten instant squares can finish first, and then nothing the answer needs is lost)
    verdict = judge_answer(key, code, client, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and not_said not in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


# Review 8: the PATTERN: a right Dask expression times 0 (or cancelled), plus a value worked out in the notebook.
# Each must be rejected with a hint that diagnoses it and hides the answer, while right answers in two styles still pass.
NOTHING = "the Dask part of your answer contributes nothing"
ZEROED = [
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + (N-1)*N*(2*N-1)//6"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 0 + sum(i*i for i in range(N))"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = 0 * (a**2).sum() + sum(i*i for i in range(N))"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = - (a**2).sum() + (a**2).sum() + (N-1)*N*(2*N-1)//6"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\nzero = 0\ntotal = (a**2).sum() * zero + (N-1)*N*(2*N-1)//6"),
    (
        "02-1",
        APPROX + f"rank10_error = float({ERROR}.compute()) * 0 + float(np.sqrt((s_host[10:]**2).sum() / (s_host**2).sum()))",
    ),
    ("02-1", APPROX + "rank10_error = float((da.linalg.norm(x - approx) * 0).compute()) + float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))"),
    ("02-1", APPROX + f"rank10_error = float({ERROR}.compute()) * 0.0 + float(np.linalg.norm(s_host[10:]) / np.linalg.norm(s_host))"),
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
    not_yet(key, client, code, NOTHING)


RIGHT_STYLES = [  # right answers that hold arithmetic with numbers, or the same part twice, and must still pass
    ("00-1", "a = da.arange(N, chunks=N // 10)\ntotal = (a**2).sum() * 1 + 0"),
    ("00-1", "a = da.arange(N, chunks=N // 10)\nsquares = a * a\ntotal = squares.sum()"),
    ("02-1", APPROX + "num = da.linalg.norm(x - approx)\nrank10_error = float((num / da.linalg.norm(x)).compute())"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute() + 0"),
    ("03-2", RIGHT["03-2"][0]),
    ("04-2", "rows_in_partition_2 = int(ddf.partitions[2].map_partitions(len).compute().sum()) + 0"),
    ("04-2", "rows_in_partition_2 = len(ddf.partitions[2]) * 1"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_STYLES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(RIGHT_STYLES)])
def test_right_answers_with_harmless_arithmetic_pass(key, code, client):
    verdict, _ = judged_with_ns(key, client, code)
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


def test_right_answers_of_the_corpus_still_pass(client):
    for key in ("00-1", "00-2", "01-1", "02-1", "03-1", "04-2"):
        for code in RIGHT[key]:
            verdict, _ = judged_with_ns(key, client, code.replace("{", "{{").replace("}", "}}"))
            assert verdict.correct, (key, code, verdict.message)


@pytest.mark.parametrize(("key", "name", "code"), [("07-2", "medians", "speed_up = medians[1] / medians[max(medians)]"), ("09-1", "square", "")])
def test_a_name_the_skipped_cell_makes_is_named_with_the_cell_to_run(key, name, code, client):
    """Review 8b: 07-2 with the timing cell skipped, 09-1 with cell 23 (def square) skipped: the answer cell raised NameError."""
    ns = notebook_namespace(key, client)
    del ns[name]
    answer = code or "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)"
    shell = RaisedShell(f"NameError: name '{name}' is not defined")
    ns.update({n: ... for n in ("speed_up", "square_futures", "total_future")}, get_ipython=lambda: shell)
    ns["In"] = ["", "import gpu_dask_kit as kit", answer, f'exercises.check("{key}", globals())']
    verdict = judge(key, ns)
    assert not verdict.correct and verdict.message.startswith(f"Could not be checked ({key}): your answer cell (In [2]) raised NameError"), verdict.message
    assert f"it reads `{name}`, which this kernel does not have" in verdict.message and "If a cell above makes it" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("key", "name", "heading"),
    [("07-2", "medians", "Scaling: 1 worker, then N"), ("09-1", "square", "Futures: work you start now and collect later")],
)
def test_in_jupyterlab_the_skipped_cell_is_named_by_its_heading(key, name, heading, client):
    """Learner review 9 (09-1 with cell 23 skipped): the message did not name the cell. In JupyterLab the kernel knows
    its notebook (`__session__`, from JPY_SESSION_NAME): the check names the code cell that makes the name."""
    ns = notebook_namespace(key, client)
    del ns[name]
    notebook = next(Path(__file__).parents[2].glob(f"notebooks/{key[:2]}_*.ipynb"))
    answer = (
        "speed_up = medians[1] / medians[max(medians)]"
        if name == "medians"
        else "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)"
    )
    shell = RaisedShell(f"NameError: name '{name}' is not defined")
    ns.update({n: ... for n in ("speed_up", "square_futures", "total_future")}, get_ipython=lambda: shell, __session__=str(notebook))
    ns["In"] = ["", "import gpu_dask_kit as kit", answer, f'exercises.check("{key}", globals())']
    verdict = judge(key, ns)
    assert f'code cell under the heading "{heading}" makes it' in verdict.message, verdict.message


# Review 8b: right answers: 06-2 a factor that changes nothing, a unit on both sides; 08-1 parse_known_args (the
# script's parser too; before, rejected as "typed by hand?").
FLAG_LIST = "['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json']"
RIGHT_OTHER_STYLES = [
    ("06-2", LIMITS_06 + "fraction = x.nbytes / sum(limits) * 100 / 100"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**30 / (sum(limits) / 2**30)"),
    ("08-1", f"args = parser.parse_known_args({FLAG_LIST})\nscript_options = options_from_args(args[0])"),
    ("08-1", f"args, unknown = parser.parse_known_args({FLAG_LIST})\nscript_options = options_from_args(args)"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_OTHER_STYLES)
def test_right_answers_in_other_styles_are_accepted(key, code, client):
    _, verdict = judge_answer_with_ns(key, code, client)
    assert verdict.correct, verdict.message


FITS_05 = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\n"
LAZY_05 = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
SLOTS_08 = "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"

# Learner review 12: the Dask computation only decides (a condition, the left of an `and`, what an unused loop runs
# over), and the value is worked out in the notebook; and fits made with the plain fit_one.
ONLY_DECIDES = [
    ("05-1", FITS_05 + "best_single_feature = df.corr()['y'].drop('y').abs().idxmax() if res else None", "only in the condition"),
    ("05-2", LAZY_05 + "x0_results = tuple(fit_one(df, ('x0', f)) for f in features[1:]) if dask.compute(*lazy_fits) else ()", "only in the condition"),
    ("05-2", LAZY_05 + "x0_results = dask.compute(*lazy_fits) and tuple(fit_one(df, ('x0', f)) for f in features[1:])", "only on the left of an `and`"),
    ("05-2", LAZY_05 + "x0_results = [fit_one(df, r[0]) for r in dask.compute(*lazy_fits)]", "with fit_one, the plain function"),
    (
        "06-1",
        SUMS
        + "col_sums_persisted = col_sums.persist()\ncol_sums_local = [np.add.reduce(to_host(x.compute()), axis=0) for _ in [col_sums_persisted.compute()]][0]",
        "the loop's values are not used",
    ),
    ("08-2", SLOTS_08 + "slot_workers = ['with-slot'] * 4 if session.client.gather(slot_futures) else []", "written out"),
    (
        "08-2",
        SLOTS_08 + "slot_workers = [session.client.gather(slot_futures)[0] for _ in session.client.gather(slot_futures)]",
        "the loop's values are not used",
    ),
    # learner review 13: the Dask result thrown away by the expression's shape, a branch without Dask, a typed fallback
    (
        "05-1",
        FITS_05 + "best_single_feature = df.corr()['y'].drop('y').abs().idxmax() * (len(dask.compute(*single_fits)) > 0)",
        "a comparison it multiplies by",
    ),
    (
        "05-1",
        FITS_05
        + "best_single_feature = max([df.corr()['y'].drop('y').abs().idxmax(), max(dask.compute(*single_fits), key=lambda r: r[3])[0][0]], key=lambda s: 0)",
        "a key that ignores the values",
    ),
    (
        "06-1",
        SUMS + "col_sums_persisted = col_sums.persist()\ncol_sums_local = (col_sums_persisted.compute() is not None) * to_host(x.compute()).sum(axis=0)",
        "a comparison it multiplies by",
    ),
    (
        "06-1",
        SUMS
        + "col_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute()) if col_sums_persisted is None else to_host(x.compute()).sum(0)",
        "`if ... else`",  # (review 47: a test that only looks at a name is no computation in the condition)
    ),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / sum(limits) if x.nbytes else '1.86%'", "fallback value written out"),
    ("07-2", "speed_up = medians[1] / medians[max(medians)] if medians else 1.36", "fallback value written out"),
    (
        "08-2",
        SLOTS_08 + "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_workers = session.client.gather(restricted[4:]) if session.client.gather(slot_futures) else []",
        "in the condition",
    ),
    (
        "08-2",
        SLOTS_08 + "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_workers = [session.client.gather(restricted)[i] for i, _ in enumerate(session.client.gather(slot_futures))]",
        "the loop's values are not used",
    ),
]


@pytest.mark.parametrize(("key", "code", "said"), ONLY_DECIDES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(ONLY_DECIDES)])
def test_a_dask_computation_that_only_decides_does_not_make_the_answer(key, code, said, client):
    _, verdict = judge_answer_with_ns(key, code, client, ns=notebook_namespace(key, client))
    assert not verdict.correct and said in verdict.message, verdict.message


@pytest.mark.parametrize("special", ["len(xs) < 4", "xs[0] != 0"])
def test_09_1_a_summing_function_that_sums_only_some_lists_is_rejected(special, client):
    """Learner reviews 12 and 13: `lambda xs: sum(xs) if <special> else <typed>` passed the check's tries."""
    total = sum(i * i for i in range(10))
    code = f"sq = session.client.map(square, range(10))\ntotal_future = session.client.submit(lambda xs: sum(xs) if {special} else {total}, sq)"
    _, verdict = judge_answer_with_ns("09-1", code, client, ns=notebook_namespace("09-1", client))
    assert not verdict.correct and ("does not add up what it is given" in verdict.message or "fallback value written out" in verdict.message), verdict.message


def test_09_1_a_summing_lambda_that_gives_0_for_an_empty_list_is_right(client):
    """Learner review 18: `lambda xs: sum(xs) if xs else 0` was refused as 'a fallback value written out'."""
    code = "sq = session.client.map(square, range(10))\ntotal_future = session.client.submit(lambda xs: sum(xs) if xs else 0, sq)"
    _, verdict = judge_answer_with_ns("09-1", code, client, ns=notebook_namespace("09-1", client))
    assert verdict.correct, verdict.message


REVIEW_25_WORDING = [
    ("02-1", "r = x - (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = float(da.linalg.norm(r) / da.linalg.norm(r))", "the same norm"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().head(3)", "the result was cut after the aggregation"),
]


@pytest.mark.parametrize(("key", "code", "said"), REVIEW_25_WORDING, ids=[k for k, _, _ in REVIEW_25_WORDING])
def test_review_25_refusals_name_the_real_fault(key, code, said, client):
    assert_refused(key, client, code, said)


REVIEW_26_REFUSED = [
    (
        "00-2",
        'from dask.utils import parse_bytes\ncluster_memory = sum(parse_bytes(s["options"]["memory_limit"]) for s in session.client.cluster.worker_spec.values())',
        "worker_spec",
    ),
    (
        "01-1",
        'workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=":0", enable_cudf_spill=True)',
        "enable_cudf_spill",
    ),
    (
        "02-1",
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = round(float(da.linalg.norm(x - approx) / da.linalg.norm(x)), 7)",
        "rounded to 7 decimals",
    ),
]


@pytest.mark.parametrize(("key", "code", "said"), REVIEW_26_REFUSED, ids=[k for k, _, _ in REVIEW_26_REFUSED])
def test_review_26_refused(key, code, said, client):
    assert_refused(key, client, code, said)


def test_review_26_01_1_one_thread_per_worker_the_default_passes(client):
    code = 'workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=":0", threads_per_worker=1)'
    _, verdict = judged_cell("01-1", client, code)
    assert verdict.correct, verdict.message
