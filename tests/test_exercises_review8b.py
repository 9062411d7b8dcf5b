"""Learner review 8b (notebooks 05-09): each false accept / false reject / misdiagnosing hint the reviewer found, with
the reviewer's answer cell, run in the corpus' notebook-like namespace on its in-process cluster (as in review 7b's
tests), where the corpus format cannot say it (a name an earlier cell makes removed, what the hint must say)."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge
from tests.test_exercises_cases import REVEALS
from tests.test_exercises_corpus import corpus_client  # noqa: F401  (the `client` fixture, used here)
from tests.test_exercises_review7b import _ns


def _judge(key, code, client, ns=None, drop=()):
    """The verdict on ``code`` as the answer cell; ``drop``: names an earlier cell makes, absent (that cell skipped)."""
    ns = ns if ns is not None else _ns(key, client)
    for name in drop:
        del ns[name]
    ns["session"].n_workers = len(client.scheduler_info(n_workers=-1)["workers"])  # as the kit's session has it
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return ns, judge(key, ns)


def _rejected(key, ns, verdict, said, not_said=None):
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message
    assert not_said is None or not_said not in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


FRAME_05_1 = "single_fits = [fit_ols(df, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"
FRAME_05_2 = "lazy_fits = [fit_ols(df, ('x0', f)) for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"
SCATTER_EACH = (
    "single_fits = [fit_ols(session.client.scatter(df), (f,)) for f in features]\nres = dask.compute(*single_fits)\n"
    "best_single_feature = max(res, key=lambda r: r[3])[0][0]"
)
# 05 (what kept it below 5): with the scatter cell skipped (no data_future), df itself in the graph was Correct
WRONG_05 = [
    ("05-1", FRAME_05_1, ("data_future",), "inside their task graph", "run the cell above that scatters df"),
    ("05-2", FRAME_05_2, ("data_future",), "inside their task graph", "run the cell above that scatters df"),
    ("05-1", FRAME_05_1, (), "inside their task graph", "Pass the future the lesson scattered."),
    ("05-1", SCATTER_EACH, ("data_future",), "its own copy of the data, scattered for that call", "scatters df"),
    ("05-1", SCATTER_EACH, (), "its own copy of the data, scattered for that call", "a scatter inside the loop"),
]


@pytest.mark.parametrize(("key", "code", "drop", "said", "also"), WRONG_05)
def test_05_the_frame_in_the_graph_or_a_copy_per_call_is_rejected_with_or_without_data_future(key, code, drop, said, also, client):
    ns, verdict = _judge(key, code, client, drop=drop)
    _rejected(key, ns, verdict, said)
    assert also in verdict.message, verdict.message


def test_05_one_copy_scattered_in_the_answer_cell_is_accepted_when_data_future_is_missing(client):
    code = (
        "data = session.client.scatter(df, broadcast=True)\nsingle_fits = [fit_ols(data, (f,)) for f in features]\n"
        "res = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"
    )
    _, verdict = _judge("05-1", code, client, drop=("data_future",))
    assert verdict.correct, verdict.message


LIMITS_06 = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"
# 06 (what kept it below 5): worker counts typed in a slice or assumed by equal limits; hints that blamed the wrong thing
WRONG_06 = [
    ("06-2", LIMITS_06 + "fraction = x.nbytes / sum(limits[:2])", "the slice :2", "GiB"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / (session.n_workers * min(limits))", "every worker has the same limit", "typed"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / (len(limits) * limits[0])", "every worker has the same limit", "typed"),
    ("06-2", LIMITS_06 + "fraction = round(x.nbytes / sum(limits), 2)", "rounded so far", "GiB"),
    ("06-2", LIMITS_06 + 'fraction = f"{100*x.nbytes/sum(limits):.0f}%"', "rounded so far", "GiB"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**20 / (sum(limits) / 2**30)", "MiB", "typed"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**30 / (sum(limits) / 2**20)", "MiB", "typed"),
]


@pytest.mark.parametrize(("key", "code", "said", "not_said"), WRONG_06)
def test_06_2_typed_worker_counts_and_what_the_hints_blame(key, code, said, not_said, client):
    ns, verdict = _judge(key, code, client)
    _rejected(key, ns, verdict, said, not_said)


def test_06_1_sums_computed_here_and_wrapped_are_told_so_not_only_a_local_persist(client):
    code = "col_sums = x.sum(axis=0)\ncol_sums_persisted = da.from_array(col_sums.compute())\ncol_sums_local = to_host(col_sums.compute())"
    ns, verdict = _judge("06-1", code, client)
    _rejected("06-1", ns, verdict, "da.from_array(... .compute())")


# 07 (what kept it below 5): worker counts that match the sizes measured only on this CPU machine
WRONG_07_2 = [
    ("speed_up = medians[1] / medians[len(medians)]", "a count of entries"),
    ("n = len(medians)\nspeed_up = medians[1] / medians[n]", "a count of entries"),
    ('speed_up = medians[1] / medians[CPU_CLUSTER["n_workers"]]', "CPU cluster request"),
    ("speed_up = medians[1] / medians[2]", "a cluster size written out"),
    ("speed_up = all_times[1][0] / all_times[2][0]", "a cluster size written out"),
]


@pytest.mark.parametrize(("code", "said"), WRONG_07_2)
def test_07_2_a_cluster_size_that_matches_only_here_is_rejected(code, said, client):
    ns = _ns("07-2", client)
    ns.update(CPU_CLUSTER={"n_workers": 2, "threads_per_worker": 1, "memory_limit": "2GiB"}, all_times={1: [3.1, 3.2], 2: [1.9, 2.0]})
    ns, verdict = _judge("07-2", code, client, ns)
    _rejected("07-2", ns, verdict, said)


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
    ns = _ns("07-2", client)
    ns["WORKER_COUNTS"] = sorted(ns["medians"])
    _, verdict = _judge("07-2", code, client, ns)
    assert verdict.correct, verdict.message


def test_07_2_the_one_worker_time_over_the_fastest_is_told_what_it_takes(client):
    ns, verdict = _judge("07-2", "speed_up = medians[1] / min(medians.values())", client)
    _rejected("07-2", ns, verdict, "the smallest of the median times", "the largest and the smallest")


class _Shell:
    """What the kit's outcomes record says of In [2], the answer cell: it raised (the cell that makes a name skipped)."""

    def __init__(self, err):
        self._gpu_dask_kit_raised, self._gpu_dask_kit_raised_since = {2: err}, 0


@pytest.mark.parametrize(("key", "name", "code"), [("07-2", "medians", "speed_up = medians[1] / medians[max(medians)]"), ("09-1", "square", "")])
def test_a_name_the_skipped_cell_makes_is_named_with_the_cell_to_run(key, name, code, client):
    """07-2 with the timing cell skipped, 09-1 with cell 23 (def square) skipped: the answer cell raised NameError."""
    ns = _ns(key, client)
    del ns[name]
    answer = code or "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)"
    shell = _Shell(f"NameError: name '{name}' is not defined")
    ns.update({n: ... for n in ("speed_up", "square_futures", "total_future")}, get_ipython=lambda: shell)
    ns["In"] = ["", "import gpu_dask_kit as kit", answer, f'exercises.check("{key}", globals())']
    verdict = judge(key, ns)
    assert not verdict.correct and verdict.message.startswith(f"Could not be checked ({key}): your answer cell (In [2]) raised NameError"), verdict.message
    assert f"it reads `{name}`, which this kernel does not have" in verdict.message and "If a cell above makes it" in verdict.message, verdict.message


def test_07_1_after_the_clean_up_cell_the_check_names_the_cells_that_write_the_files(client, tmp_path):
    import shutil

    ns = _ns("07-1", client)
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
    ns, verdict = _judge("07-1", code, client)
    _rejected("07-1", ns, verdict, said, not_said)


# 08 (what kept it below 5): parse_known_args rejected as 'typed by hand?'; a mistyped flag got only the generic message
FLAG_LIST = "['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json']"


# right answers: 06-2 a factor that changes nothing, a unit on both sides; 08-1 parse_known_args (the script's parser too)
RIGHT_8B = [
    ("06-2", LIMITS_06 + "fraction = x.nbytes / sum(limits) * 100 / 100"),
    ("06-2", LIMITS_06 + "fraction = x.nbytes / 2**30 / (sum(limits) / 2**30)"),
    ("08-1", f"args = parser.parse_known_args({FLAG_LIST})\nscript_options = options_from_args(args[0])"),
    ("08-1", f"args, unknown = parser.parse_known_args({FLAG_LIST})\nscript_options = options_from_args(args)"),
]


@pytest.mark.parametrize(("key", "code"), RIGHT_8B)
def test_review_8b_right_answers_are_accepted(key, code, client):
    _, verdict = _judge(key, code, client)
    assert verdict.correct, verdict.message


def test_08_1_the_device_limit_without_the_host_limit_is_named(client):
    flags = "['--n-workers', '4', '--device-memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json']"
    code = f"args = parser.parse_args({flags})\nscript_options = options_from_args(args)"
    ns, verdict = _judge("08-1", code, client)
    _rejected("08-1", ns, verdict, "no memory_limit", "NoneType")
    assert "--device-memory-limit is another option" in verdict.message, verdict.message


def test_08_1_a_flag_with_underscores_is_named_after_argparse_refused_it(client):
    ns = _ns("08-1", client)
    answer = "args = parser.parse_args(['--n_workers', '4', '--memory-limit', '8GiB'])\nscript_options = options_from_args(args)"
    shell = _Shell("SystemExit: 2")
    ns.update(args=..., script_options=..., get_ipython=lambda: shell)
    ns["In"] = ["", "import gpu_dask_kit as kit", answer, 'exercises.check("08-1", globals())']
    verdict = judge("08-1", ns)
    assert not verdict.correct and "the parser refused the command line" in verdict.message, verdict.message
    assert "--n_workers is written with underscores" in verdict.message and "SystemExit: 2" in verdict.message, verdict.message


def test_08_1_not_answered_yet_names_every_name_the_answer_cell_leaves_unanswered(client):
    ns = _ns("08-1", client)
    ns.update(args=..., script_options=...)
    ns["In"] = ["", "args = ...\nscript_options = ...", 'exercises.check("08-1", globals())']
    verdict = judge("08-1", ns)
    assert not verdict.answered and "replace the ... of args, script_options in the cell above" in verdict.message, verdict.message


def test_09_2_the_examples_tenth_is_told_it_is_the_examples_setting(client):
    ns, verdict = _judge("09-2", "partition_bytes = int(32 * 2**30 * 0.1)", client)
    _rejected("09-2", ns, verdict, "the part_mem_fraction NVTabular's example sets", "smaller than it should be")


def test_annotate_is_kept_for_delayed_calls_and_lost_for_a_persisted_array(client):
    """What notebook 08 cell 21 says of `with dask.annotate(resources=...)` (review 8b: 08-2 accepts it for delayed
    calls, whose tasks do carry the restriction): the scheduler's record of each task's resource restrictions."""
    import dask
    import dask.array as da
    from dask import delayed
    from distributed import futures_of, wait

    from gpu_dask_kit.exercises.evidence import resource_restrictions

    with dask.annotate(resources={"GPU_SLOT": 1}):
        lazy = [delayed(abs)(-i) for i in range(4)]
        array = da.ones(40, chunks=10) + 1
    futures = client.compute(lazy)
    held = client.persist(array)
    wait([*futures, held])
    assert all(r["resources"] == {"GPU_SLOT": 1} for r in resource_restrictions(futures)), resource_restrictions(futures)
    assert not any(r["resources"] for r in resource_restrictions(futures_of(held))), resource_restrictions(futures_of(held))
    client.cancel([*futures, held])
