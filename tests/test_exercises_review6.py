# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 6: each false accept / false reject the reviewer found, with the reviewer's answer cell.

Item 1 runs the cells in a real IPython shell (``store_history``, as a kernel does), so that ``In`` and the record of
which cells raised are IPython's own.
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from gpu_dask_kit.exercises import EXERCISES, judge
from gpu_dask_kit.notebook import hints, outcomes
from tests.test_exercises_cases import LIMITS, RIGHT
from tests.test_exercises_corpus import corpus_client, namespace  # noqa: F401  (the `client` fixture, used here)


@pytest.fixture(name="shell")
def ipython_shell():
    shell = InteractiveShell.instance()
    outcomes.track(shell)  # what start_cluster's extension and the first `from gpu_dask_kit import exercises` do
    yield shell
    InteractiveShell.clear_instance()


def _cells(shell, key, client, *cells):
    """Run ``cells`` one by one as a kernel does (in the history), in the notebook-like namespace of ``key``."""
    shell.user_ns.update(namespace(key, client))
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    shell.run_cell(f"# exercises.check({key!r}, globals())", store_history=True)
    return shell.user_ns


# Review 6, item 1: a right answer, then the answer cell changed so that it raises: the old values stay in the names.
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
    ns = _cells(shell, key, client, right)
    assert judge(key, ns).correct, judge(key, ns).message
    ns = _cells(shell, key, client, raising)
    verdict = judge(key, ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert verdict.message.startswith(f"Could not be checked ({key}): your answer cell (In [") and f"raised {error}" in verdict.message, verdict.message
    ns = _cells(shell, key, client, right)  # fixed again: judged as usual
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


def _run_without(code, key, client, *gone):
    """An answer cell run in a namespace that lacks ``gone`` (cells skipped), as ``_run`` does otherwise."""
    ns = namespace(key, client)
    for name in gone:
        del ns[name]
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return ns


def test_a_skipped_earlier_cell_is_named_not_reported_as_a_key_error(client):
    """Review 6, item 4: 02-1 with cell 15 (s_host) skipped said "could not be checked (KeyError: 's_host')"."""
    verdict = judge("02-1", _run_without(RIGHT["02-1"][1], "02-1", client, "s_host"))
    assert verdict.answered and not verdict.correct, verdict.message
    assert "KeyError" not in verdict.message and "reads `s_host`" in verdict.message and "the cell above that sets `s_host`" in verdict.message, verdict.message


# Review 6, item 4: notebook 07 has no `processed` (the corpus' namespace had one): the check read it and raised KeyError.
ONE_PARTITION_07 = [
    ("rows_per_name = dd.read_parquet(PROCESSED).partitions[0].name.value_counts().compute()", "ONE partition"),
    ("rows_per_name = dd.read_parquet(PROCESSED).name.value_counts(normalize=True).compute()", "do not add up"),
    ("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute() * 2", "do not add up"),
]


@pytest.mark.parametrize(("code", "said"), ONE_PARTITION_07)
def test_07_1_in_the_notebooks_namespace_is_judged_without_a_key_error(code, said, client):
    verdict = judge("07-1", _run_without(code, "07-1", client, "processed"))
    assert verdict.answered and not verdict.correct, verdict.message
    assert "KeyError" not in verdict.message and said in verdict.message, verdict.message


def test_07_1_right_answer_in_the_notebooks_namespace(client):
    verdict = judge("07-1", _run_without("rows_per_name = dd.read_parquet(PROCESSED).groupby('name').size().compute()", "07-1", client, "processed"))
    assert verdict.correct, verdict.message


# Review 6, item 2: 06-2 with a number typed in where the exercise asks to read it (x's size, the limits, the worker count).
WORKERS = f"limits = [w['memory_limit'] for w in {LIMITS}]\n"
TYPED_06_2 = [
    ("from dask.utils import parse_bytes\nfraction = x.nbytes / (2 * parse_bytes('1GiB'))", "a memory size is written out"),
    (WORKERS + "fraction = 20e6 / sum(limits)", "x's size is a number written out"),
    (WORKERS + "fraction = x.nbytes / limits[0] * 0.5", "the number of workers is written out"),
    (WORKERS + "fraction = x.nbytes / (limits[0] * 2)", "the number of workers is written out"),
    (
        "from dask.utils import parse_bytes\nCPU_CLUSTER = {'n_workers': 2, 'memory_limit': '1GiB'}\nfraction = x.nbytes / (CPU_CLUSTER['n_workers'] * parse_bytes(CPU_CLUSTER['memory_limit']))",
        "cluster request",
    ),
]


@pytest.mark.parametrize(("code", "said"), TYPED_06_2)
def test_06_2_a_typed_size_limit_or_worker_count_is_not_accepted(code, said, client):
    """Before: each was "Correct" (the corpus' x is 20e6 bytes, its two workers have 1 GiB each)."""
    verdict = judge("06-2", _run_without(code, "06-2", client))
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message


BYTES_HELD = (  # notebook 06's helper (cell 4), as the learner has it
    "import time\nfrom dask.core import flatten\nfrom distributed import wait\n\n"
    "def _bytes_in_memory(keys, dask_scheduler=None):\n"
    "    return sum(max(ts.nbytes, 0) for ts in (dask_scheduler.tasks.get(k) for k in keys) if ts is not None and ts.state == 'memory')\n\n"
    "def bytes_held(c, expect=None, timeout=10.0):\n    keys = list(flatten(c.__dask_keys__()))\n    deadline = time.monotonic() + timeout\n"
    "    while True:\n        held = session.client.run_on_scheduler(_bytes_in_memory, keys)\n"
    "        if expect is None or held == expect or time.monotonic() > deadline:\n            return held\n        time.sleep(0.1)\n"
)


def _lazy_x(client, code):
    """06-2 as in notebook 06 after cell 20: x is the lazy recipe (its persisted copy was dropped)."""
    import dask.array as da

    ns = namespace("06-2", client)
    exec(compile(BYTES_HELD, "<notebook 06, cell 4>", "exec"), ns)
    ns["x"] = da.random.default_rng(61).random((250_000, 10), chunks=(62_500, 10))
    exec(compile(code, "<answer 06-2>", "exec"), ns)
    ns["In"] = ["", code, 'exercises.check("06-2", globals())']
    return ns


PERSISTED_06_2 = [
    WORKERS + "x_p = x.persist()\nwait(x_p)\nfraction = bytes_held(x_p, expect=x.nbytes) / sum(limits)",
    WORKERS + "fraction = bytes_held(x.persist(), expect=x.nbytes) / sum(limits)",  # the persisted copy is dropped: the re-run persists again
    WORKERS + "x_p = x.persist()\nwait(x_p)\nfraction = bytes_held(x_p, expect=x.nbytes) / sum(limits)\ndel x_p",
]


@pytest.mark.parametrize("code", PERSISTED_06_2)
def test_06_2_persisting_x_and_reading_the_bytes_held_is_accepted(code, client):
    """Review 6, item 3: before, "computed x ... brings every value of x to this notebook" (a persist keeps them on the workers)."""
    verdict = judge("06-2", _lazy_x(client, code))
    assert verdict.correct, verdict.message


def test_06_2_computing_x_for_its_size_is_still_told(client):
    verdict = judge("06-2", _lazy_x(client, WORKERS + "fraction = x.compute().nbytes / sum(limits)"))
    assert not verdict.correct and "brings every value of x to this notebook" in verdict.message, verdict.message


def test_01_1_says_only_what_dask_cuda_reads(client):
    """Review 6, item 8: dask-cuda 26.10's LocalCUDACluster reads a float in (0, 1] as a share of the GPU and parses a
    string with parse_bytes ("60%" raises): the hint for 60 suggested a percent string, and "60%" passed unremarked."""
    verdict = judge(
        "01-1", _run_without("workshop_options = kit.ClusterOptions(device_memory_limit=60, rmm_async=True, dashboard_address=':0')", "01-1", client)
    )
    assert not verdict.correct and "percent" not in verdict.message and "float between 0 and 1" in verdict.message, verdict.message
    verdict = judge("01-1", _run_without(RIGHT["01-1"][0], "01-1", client))
    assert verdict.correct and "LocalCUDACluster itself does not read a '%' string" in verdict.message, verdict.message
    assert "0.6" in EXERCISES["01-1"].solution and "%" not in EXERCISES["01-1"].solution


# Review 6, item 6: hints that said something else than what happened (each was the "before" message).
HONEST_03 = [
    (
        "03-1",
        "max_y_by_name = ddf.map_partitions(lambda d: d.groupby('name').y.max()).compute().groupby(level=0).max()",
        "combined here",
        "brought ddf's rows here",
    ),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().compute().reset_index()", "reset_index", "select the one column"),
    ("03-1", "max_y_by_name = ddf.groupby('name').y.max().astype('float32').compute()", "smaller float type", "which column and which aggregation"),
    ("03-1", "max_y_by_name = ddf.partitions[0].groupby('name').y.max().compute()", "one partition", "which column and which aggregation"),
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
]


@pytest.mark.parametrize(("key", "code", "said", "before"), HONEST_03, ids=[f"{k}-{s}" for k, _, s, _ in HONEST_03])
def test_03_hints_say_what_happened(key, code, said, before, client):
    verdict = judge(key, _run_without(code, key, client))
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message and before not in verdict.message, verdict.message


def test_06_1_a_local_persist_is_not_called_lazy(client):
    """06-1 with notebook 06's x (lazy): `.persist(scheduler="sync")` ran the sums in this process; before: "nothing ran yet"."""
    import dask.array as da

    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist(scheduler='sync')\ncol_sums_local = col_sums_persisted.compute()"
    ns = namespace("06-1", client)
    ns["x"] = da.random.default_rng(62).random((1000, 10), chunks=(250, 10))
    exec(compile(code, "<answer 06-1>", "exec"), ns)
    ns["In"] = ["", code, 'exercises.check("06-1", globals())']
    verdict = judge("06-1", ns)
    assert not verdict.correct and "THIS notebook's process" in verdict.message and "nothing ran yet" not in verdict.message, verdict.message


def test_a_local_scheduler_on_cluster_data_is_explained(shell, client):
    """05-2 with scheduler='sync': the answer cell raised "Missing dependency"; the check says why."""
    from tests.test_exercises_cases import FITS

    ns = _cells(shell, "05-2", client, FITS + "x0_results = dask.compute(*lazy_fits, scheduler='sync')")
    verdict = judge("05-2", ns)
    assert not verdict.correct and "only the cluster's scheduler can read" in verdict.message and "Missing dependency" in verdict.message, verdict.message


# Review 6, item 5: 05-1 answers right by chance (the feature with the largest coefficient, or a fixed position).
BY_CHANCE_05_1 = [
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: abs(r[1][0]))[0][0]",
    "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = res[1][0][0]",
]


@pytest.mark.parametrize("code", BY_CHANCE_05_1)
def test_05_1_a_pick_that_is_right_by_chance_is_not_accepted(code, client):
    verdict = judge("05-1", _run_without(code, "05-1", client))
    assert verdict.answered and not verdict.correct and "by chance" in verdict.message, verdict.message


def test_05_1_the_best_fit_kept_first_then_its_name_is_accepted(client):
    code = "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest = max(res, key=lambda r: r[-1])\nbest_single_feature = best[0][0]"
    verdict = judge("05-1", _run_without(code, "05-1", client))
    assert verdict.correct, verdict.message


def test_00_1_a_total_that_merges_as_chunks_is_not_accepted(client):
    """Review 6, item 5: `(a.rechunk(N)**2).sum()` was "Correct" (built from a, but the work ran as one task)."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = (a.rechunk(N) ** 2).sum()"
    verdict = judge("00-1", _run_without(code, "00-1", client))
    assert verdict.answered and not verdict.correct and "rechunk" in verdict.message, verdict.message


def test_a_check_names_only_the_gone_data_the_answer_cell_reads(client):
    """Review 6, item 7 (04): after a restart the check listed every stale name of the notebook (sorted_ddf, scaled, ...),
    when the answer cell needs only ddf."""
    from distributed import futures_of, wait

    from tests.test_exercises_cases import DEMEAN

    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    ns["scaled"] = (ns["ddf"].x * 2).persist()
    wait(ns["scaled"])
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    ns["In"] = ["", "ddf = make().persist()", "scaled = (ddf.x * 2).persist()", code, 'exercises.check("04-1", globals())']
    client.cancel(futures_of(ns["ddf"]) + futures_of(ns["scaled"]))
    verdict = judge("04-1", ns)
    assert not verdict.correct and "`ddf` (In [1])" in verdict.message and "scaled" not in verdict.message, verdict.message


def test_00_1_a_delayed_sum_of_a_python_list_is_told_it_is_not_built_from_a(client):
    """Review 6, item 6: before, "left from an earlier run" (comparing its one-task graph with the re-run's timed out)."""
    code = "a = da.arange(N, chunks=N // 10)\ntotal = dask.delayed(sum)([i ** 2 for i in range(N)])"
    verdict = judge("00-1", _run_without(code, "00-1", client))
    assert not verdict.correct and "not built from a" in verdict.message and "earlier run" not in verdict.message, verdict.message


def test_04_1_a_right_answer_made_before_ddf_was_made_again_is_told_so(client):
    """Review 6, item 6: after set-up cells 2+3 ran again, a right 04-1 answer was told "the data came to this notebook
    and went back"; it was made from the ddf of before."""
    from tests.test_exercises_cases import DEMEAN

    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    ns = namespace("04-1", client)
    exec(compile(code, "<answer 04-1>", "exec"), ns)
    remade = namespace("04-1", client)  # the set-up cells again: a new persisted ddf and its fingerprint
    ns.update(ddf=remade["ddf"], ddf_fingerprint=remade["ddf_fingerprint"])
    ns["In"] = ["", "ddf = make().persist()", code, "ddf = make().persist()", 'exercises.check("04-1", globals())']
    verdict = judge("04-1", ns)
    assert not verdict.correct and "ddf was made again (In [3])" in verdict.message and "went back" not in verdict.message, verdict.message


def test_02_1_after_a_restart_names_only_what_the_answer_cell_reads(client):
    """Review 6, item 6: the list of gone data named `uc` (not used by the answer) and `approx` (made by the answer cell)."""
    from distributed import futures_of, wait

    code = RIGHT["02-1"][1]  # approx = ..., then its error
    ns = namespace("02-1", client)
    ns["uc"] = (ns["u"] * 2).persist()
    wait(ns["uc"])
    exec(compile(code, "<answer 02-1>", "exec"), ns)
    ns["In"] = ["", "x = make().persist()", "u, s, v = dask.persist(*svd(x))", "uc = (u * 2).persist()", code, 'exercises.check("02-1", globals())']
    client.cancel([f for name in ("x", "u", "s", "v", "uc", "approx") for f in futures_of(ns[name])])
    verdict = judge("02-1", ns)
    assert not verdict.correct and "`u`" in verdict.message, verdict.message
    assert "`uc`" not in verdict.message and "`approx`" not in verdict.message, verdict.message


def _no_slot(i):
    raise RuntimeError("No valid workers found for this task's resources")  # as a NoValidWorkerError reads


def test_08_2_tasks_that_failed_are_not_called_cancelled_or_lost(client):
    """Review 6, item 6: `GPU_SLOT: 2` (NoValidWorkerError) was told "cancelled or lost ... re-run" (re-running cannot help)."""
    from distributed import wait

    code = "slot_futures = session.client.map(no_slot, range(4), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = ['a', 'b', 'c', 'd']"
    ns = namespace("08-2", client)
    ns["no_slot"] = _no_slot
    exec(compile(code, "<answer 08-2>", "exec"), ns)
    wait(ns["slot_futures"])
    ns["In"] = ["", code, 'exercises.check("08-2", globals())']
    verdict = judge("08-2", ns)
    assert not verdict.correct and "failed on the cluster (RuntimeError: No valid workers" in verdict.message, verdict.message
    assert "cancelled or lost" not in verdict.message, verdict.message


def test_04_1_after_the_close_cell_the_check_names_ddf_too(client):
    """Review 6, item 7: after the close cell, 04's check said "re-run the set-up cell, then your answer cell": ddf
    (persisted on the closed cluster) must be made again too."""
    import dask
    from distributed import Client, LocalCluster, wait

    from tests.test_exercises_cases import DEMEAN
    from tests.test_exercises_corpus import Session

    code = DEMEAN + "demeaned = ddf.map_partitions(demean)"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        own = Client(cluster, set_as_default=False)
        ns = namespace("04-1", client)
        ns["session"] = Session(own)
        ns["ddf"] = own.persist(dask.datasets.timeseries(start="2000-01-01", end="2000-01-03", freq="3600s", seed=3))
        wait(ns["ddf"])
        exec(compile(code, "<answer 04-1>", "exec"), ns)
        ns["In"] = ["", "session = kit.start_cluster()", "ddf = make().persist()", code, "session.close()", 'exercises.check("04-1", globals())']
        own.close()
    verdict = judge("04-1", ns)
    assert not verdict.correct and "the cluster is closed" in verdict.message and "`ddf` (In [2])" in verdict.message, verdict.message
