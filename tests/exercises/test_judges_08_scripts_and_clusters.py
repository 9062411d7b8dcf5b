"""Notebook 08's exercise judges: 08-1 (``script_options``, from the script's command line) and 08-2 (``slot_workers``,
tasks restricted to the GPU_SLOT resource), each with answer cells learners wrote in review, and what the check says
after the close cell."""

from __future__ import annotations

import pytest

from gpu_dask_kit.exercises import judge

from ..helpers import cancel_last_made_first
from ..test_exercises_corpus import _run, namespace
from .helpers import RaisedShell, assert_refused, assert_rejected, cells_in_shell, judge_answer_with_ns, judged_cell, notebook_namespace


def test_08_1_the_device_limit_without_the_host_limit_is_named(client):
    flags = "['--n-workers', '4', '--device-memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json']"
    code = f"args = parser.parse_args({flags})\nscript_options = options_from_args(args)"
    ns, verdict = judge_answer_with_ns("08-1", code, client)
    assert_rejected("08-1", ns, verdict, "no memory_limit", "NoneType")
    assert "--device-memory-limit is another option" in verdict.message, verdict.message


def _judged_after_argparse_refused(client, parse_line):
    """08-1's verdict for an answer cell (``parse_line``, then script_options from args) that stopped with argparse's
    ``SystemExit: 2`` in the notebook, so ``args`` and ``script_options`` are still ``...``."""
    ns = notebook_namespace("08-1", client)
    shell = RaisedShell("SystemExit: 2")
    ns.update(args=..., script_options=..., get_ipython=lambda: shell)
    ns["In"] = ["", "import gpu_dask_kit as kit", parse_line + "\nscript_options = options_from_args(args)", 'exercises.check("08-1", globals())']
    return judge("08-1", ns)


def test_08_1_a_flag_with_underscores_is_named_after_argparse_refused_it(client):
    """Review 8b: a mistyped flag got only the generic message."""
    verdict = _judged_after_argparse_refused(client, "args = parser.parse_args(['--n_workers', '4', '--memory-limit', '8GiB'])")
    assert not verdict.correct and "the parser refused the command line" in verdict.message, verdict.message
    assert "--n_workers is written with underscores" in verdict.message and "SystemExit: 2" in verdict.message, verdict.message


def test_08_1_not_answered_yet_names_every_name_the_answer_cell_leaves_unanswered(client):
    ns = notebook_namespace("08-1", client)
    ns.update(args=..., script_options=...)
    ns["In"] = ["", "args = ...\nscript_options = ...", 'exercises.check("08-1", globals())']
    verdict = judge("08-1", ns)
    assert not verdict.answered and "replace the ... of args, script_options in the cell above" in verdict.message, verdict.message


# Review 5, item 14: 08-2 minor false accepts.
@pytest.mark.parametrize(
    "code",
    [
        "slot_futures = session.client.map(where_am_i, range(1, 5), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(slot_futures)",
        "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(restricted[:4])",
        # learner review 11: one result repeated (all four ran on the one worker with the slot) was Correct
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_workers = [session.client.gather(slot_futures)[0]] * 4",
    ],
)
def test_08_2_other_numbers_or_other_futures_are_rejected(code, client):
    ns = _run(code, "08-2", client)
    verdict = judge("08-2", ns)
    assert verdict.answered and not verdict.correct, verdict.message


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


def test_08_after_the_close_cell_the_check_names_the_cells_that_bring_the_cluster_back(client, tmp_path):
    """Review 7b, item 9: in 08 five cells start a cluster, and "re-run the set-up cell (session = kit.start_cluster...)"
    did not say which; the cluster 08-2 needs is the one its cell 11 starts (writing the scheduler file) and a later cell
    connects to. Now the check names them, in order."""
    from distributed import Client

    from ..test_exercises_corpus import Session

    closed = Client(client.scheduler.address)
    closed.close()
    code = "slot_futures = [1]\nslot_workers = ['x']"
    ns = {**notebook_namespace("08-2", client), "session": Session(closed), "SCHEDULER_FILE": str(tmp_path / "gone" / "scheduler.json")}
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


def test_annotate_is_kept_for_delayed_calls_and_where_a_collection_is_sent(client):
    """What notebook 08 cell 21 says of `with dask.annotate(resources=...)` (review 8b: 08-2 accepts it for delayed
    calls, whose tasks do carry the restriction; review 14: an array or a DataFrame persisted INSIDE the block carries
    it too, one built inside and persisted after does not): the scheduler's record of each task's restrictions."""
    import warnings

    import dask
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd
    from dask import delayed
    from distributed import futures_of, wait

    from gpu_dask_kit.exercises.evidence import resource_restrictions

    with dask.annotate(resources={"GPU_SLOT": 1}):
        lazy = [delayed(abs)(-i) for i in range(4)]
        array = da.ones(40, chunks=10) + 1
        inside = client.persist(da.ones(40, chunks=10) + 2)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            frame = client.persist(dd.from_pandas(pd.DataFrame({"a": range(40)}), npartitions=4) + 1)
    futures = client.compute(lazy)
    held = client.persist(array)
    wait([*futures, held, inside, frame])
    assert all(r["resources"] == {"GPU_SLOT": 1} for r in resource_restrictions(futures)), resource_restrictions(futures)
    assert not any(r["resources"] for r in resource_restrictions(futures_of(held))), resource_restrictions(futures_of(held))
    for sent_inside in (inside, frame):
        assert all(r["resources"] == {"GPU_SLOT": 1} for r in resource_restrictions(futures_of(sent_inside)))
    assert any("Annotations will be ignored" in str(w.message) for w in warned), [str(w.message) for w in warned]
    cancel_last_made_first(client, *futures, held, inside, frame)


def test_08_1_a_value_written_in_beside_the_parsed_options_is_rejected(client):
    """Learner review 13: `dict(options_from_args(args), n_workers=4)` was Correct."""
    from ..test_exercises_cases import RIGHT

    right = RIGHT["08-1"][0]
    code = right.replace("script_options = options_from_args(args)", "script_options = dict(options_from_args(args), n_workers=4)")
    assert code != right
    verdict = judge("08-1", _run(code, "08-1", client))
    assert not verdict.correct and "a value written in beside it" in verdict.message, verdict.message


def test_08_1_a_number_written_as_a_word_is_told_so(client):
    """Learner review 14: `--n-workers four` was told "give the number of workers the question names" (it was named)."""
    from ..test_exercises_cases import RIGHT

    code = RIGHT["08-1"][0].replace("'--n-workers', '4'", "'--n-workers', 'four'")
    assert "'four'" in code
    verdict = judge("08-1", _run(code, "08-1", client))
    assert not verdict.correct and "a word" in verdict.message and "in digits" in verdict.message, verdict.message


def test_08_1_a_pool_size_in_percent_passes_and_is_told_what_dask_cuda_wants(client):
    """Learner review 22/23: `--rmm-pool-size 50%` is read by the kit as 0.5; dask-cuda's own CLI would refuse "50%"."""
    flags = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 50% --scheduler-file /shared/scheduler.json"
    code = f"args = parser.parse_args('{flags}'.split())\nscript_options = options_from_args(args)"
    verdict = judge("08-1", _run(code, "08-1", client))
    assert verdict.correct and "dask cuda worker` wants that fraction written as 0.5" in verdict.message, verdict.message


def test_review_25_08_1_flags_set_in_sys_argv_and_parsed_pass(client):
    flags = '"--n-workers=4", "--memory-limit=8GiB", "--rmm-pool-size=0.5", "--scheduler-file=/shared/scheduler.json"'
    code = (
        f"import sys\nsaved = sys.argv\nsys.argv = ['train.py', {flags}]\n"
        "try:\n    args = parser.parse_args()\nfinally:\n    sys.argv = saved\nscript_options = options_from_args(args)"
    )
    _, verdict = judged_cell("08-1", client, code)
    assert verdict.correct, verdict.message


SLOT_MAP = "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (SLOT_MAP + "slot_workers = [slot_futures[0].result() for f in slot_futures]", "does not read the loop's future"),
        (SLOT_MAP + "slot_workers = session.client.gather(slot_futures)[:1] * 4", "a list multiplied by a number"),
        (SLOT_MAP + "slot_workers = session.client.gather(slot_futures)[::-1]", "reorders or skips the results"),
        # learner review 29: sorted (cells 19, 22, 23 print sorted(set(...))), reversed, a rotation
        (SLOT_MAP + "slot_workers = sorted(session.client.gather(slot_futures))", "sorted(...) reorders the results"),
        (SLOT_MAP + "slot_workers = list(reversed(session.client.gather(slot_futures)))", "reversed(...) reorders the results"),
        (SLOT_MAP + "slot_workers = session.client.gather(slot_futures)\nslot_workers.sort()", "slot_workers.sort(...) reorders the results"),
        (SLOT_MAP + "slot_workers = session.client.gather(slot_futures[1:] + slot_futures[:1])", "puts the results in another order"),
        # learner review 30
        (SLOT_MAP + "slot_workers = sorted(set(session.client.gather(slot_futures)))", "loses results (set(...) keeps each name once"),
        (SLOT_MAP + "slot_workers = tuple(session.client.gather(slot_futures))", "slot_workers is a tuple"),
    ],
)
def test_review_26_08_2_one_result_repeated_is_refused(code, said, client):
    assert_refused("08-2", client, code, said)


def _judged_after_no_valid_worker(client, answer):
    """08-2 judged after ``answer`` (its cell) raised NoValidWorkerError when it ran."""
    ns = notebook_namespace("08-2", client)
    shell = RaisedShell("NoValidWorkerError: Attempted to run task on a cluster ... timed out after 10.00 s waiting for a valid worker.")
    ns.update(slot_futures=..., slot_workers=..., get_ipython=lambda: shell)
    ns["In"] = ["", "import gpu_dask_kit as kit", answer, 'exercises.check("08-2", globals())']
    return judge("08-2", ns)


def test_review_27_08_2_a_failed_resource_request_says_the_futures_are_reused(client):
    """Learner review 27: resources= corrected, the cell run again, and map handed back the failed futures (pure keys)."""
    answer = "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1})\nslot_workers = session.client.gather(slot_futures)"
    verdict = _judged_after_no_valid_worker(client, answer)
    assert not verdict.correct and "add pure=False" in verdict.message and "worker.. when" not in verdict.message, verdict.message


def test_review_30_08_2_a_request_larger_than_any_worker_with_pure_false_is_not_told_to_add_it(client):
    """Learner review 30: resources={'GPU_SLOT': 2}, pure=False was told to add pure=False."""
    answer = (
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 2}, pure=False)\nslot_workers = session.client.gather(slot_futures)"
    )
    verdict = _judged_after_no_valid_worker(client, answer)
    # (learner review 36: "2 asked, 1 offered" is what to say; the corpus' workers offer one GPU_SLOT each)
    said = "your tasks each ask for 2 of GPU_SLOT, and no worker offers that much (1 at most"
    assert not verdict.correct and said in verdict.message and "add pure=False" not in verdict.message, verdict.message


def test_review_37_08_2_other_workers_allowed_for_a_resource_task_is_named(shell, client):
    """Learner review 37: `workers=["plain"], allow_other_workers=True` with resources= ended in a raw
    `KeyError: 'GPU_SLOT'` and "failed when it last ran (KeyError: 'GPU_SLOT')" only."""
    code = (
        "slot_futures = session.client.map(where_am_i, range(4), pure=False, resources={'GPU_SLOT': 1}, workers=['plain'], "
        "allow_other_workers=True)\nraise KeyError('GPU_SLOT')  # what the worker without the resource raises\nslot_workers = []"
    )
    verdict = judge("08-2", cells_in_shell(shell, "08-2", client, code))
    assert "allow_other_workers=True let the scheduler put a task that asks for GPU_SLOT on a worker" in verdict.message, verdict.message


def test_review_27_08_1_a_share_written_as_arithmetic_is_told_to_use_a_decimal(client):
    flags = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 1/2 --scheduler-file /shared/scheduler.json"
    verdict = judge("08-1", _run(f"args = parser.parse_args('{flags}'.split())\nscript_options = options_from_args(args)", "08-1", client))
    assert not verdict.correct and "write the share as a decimal" in verdict.message, verdict.message


def test_review_32_08_2_a_loop_keeping_each_future_in_a_name_passes(client):
    """Learner review 32: the loop's own temporary name was taken for futures "another cell started"."""
    code = (
        "slot_futures = []\nfor i in range(4):\n    one_task = session.client.submit(where_am_i, i, resources={'GPU_SLOT': 1}, pure=False)\n"
        "    slot_futures.append(one_task)\nslot_workers = session.client.gather(slot_futures)"
    )
    _, verdict = judged_cell("08-2", client, code)
    assert verdict.correct, verdict.message


def test_review_32_08_2_a_pin_to_a_worker_without_the_resource_is_named(client):
    answer = (
        "slot_futures = session.client.map(where_am_i, [0, 1, 2, 3], resources={'GPU_SLOT': 1}, workers=['plain'], pure=False)\n"
        "slot_workers = session.client.gather(slot_futures)"
    )
    verdict = _judged_after_no_valid_worker(client, answer)
    assert not verdict.correct and "pinned to workers by name" in verdict.message, verdict.message


def test_review_32_08_1_a_pool_share_that_is_not_the_one_asked_is_told_so(client):
    """`--rmm-pool-size 0.05` was told "the question asks for a share of each GPU (a fraction)": 0.05 is one."""
    flags = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 0.05 --scheduler-file /shared/scheduler.json"
    code = f"args = parser.parse_args('{flags}'.split())\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code, "a share of each GPU, but not the share the question gives")
    assert_refused("08-1", client, code.replace("0.05", "4GiB"), "(a fraction between 0 and 1)")


def test_review_32_08_1_args_assigned_again_after_the_answer_is_named_not_taken_for_a_dict_typed_by_hand(client):
    flags = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 0.5 --scheduler-file /shared/scheduler.json"
    code = f"args = parser.parse_args('{flags}'.split())\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code + "\nargs = parser.parse_args([])", "`args` was assigned again after script_options was made from it", "typed by hand")
    typed = "script_options = {'n_workers': 4, 'memory_limit': '8GiB', 'rmm_pool_size': 0.5, 'scheduler_file': '/shared/scheduler.json'}"
    assert_refused("08-1", client, typed, "typed by hand", "assigned again")


FLAGS_08_1 = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 0.5 --scheduler-file /shared/scheduler.json"


def test_review_33_08_1_the_maximum_pool_flag_is_named_as_the_cap(client):
    code = f"args = parser.parse_args('{FLAGS_08_1.replace('--rmm-pool-size', '--rmm-maximum-pool-size')}'.split())\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code, "--rmm-maximum-pool-size sets the pool's cap")


def test_review_33_08_1_a_dict_written_out_beside_the_right_flags_is_named_as_written_out(client):
    typed = "{'n_workers': 4, 'memory_limit': '8GiB', 'rmm_pool_size': '0.5', 'scheduler_file': '/shared/scheduler.json'}"
    code = f"args = parser.parse_args('{FLAGS_08_1}'.split())\nscript_options = {typed}"
    assert_refused("08-1", client, code, "a dict written out in your answer cell", "options_from_args gives (a value written in")
    _, verdict = judged_cell("08-1", client, f"args = parser.parse_args('{FLAGS_08_1}'.split())\nscript_options = {{**options_from_args(args)}}")
    assert verdict.correct, verdict.message


def test_review_33_08_2_a_loop_that_waits_for_each_task_before_the_next_is_refused(client):
    code = (
        "slot_futures, slot_workers = [], []\nfor i in range(4):\n"
        "    fut = session.client.submit(where_am_i, i, resources={'GPU_SLOT': 1}, pure=False)\n"
        "    slot_futures.append(fut)\n    slot_workers.append(fut.result())"
    )
    assert_refused("08-2", client, code, "calls fut.result() inside the loop that submits the tasks")


def test_review_35_08_1_a_memory_limit_up_to_1_is_named_as_a_share_not_as_bytes(client):
    """`--memory-limit 0.5` was told "read as a few bytes" (Dask reads a number up to 1 as a share of the machine's memory)."""
    code = f"args = parser.parse_args('{FLAGS_08_1.replace('8GiB', '0.5')}'.split())\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code, "looks like a fraction (Dask reads a memory limit up to 1 as a share", not_said="a few bytes")


def test_review_38_08_1_the_file_given_to_scheduler_address_is_named(client):
    """Learner reviews 36-38: `--scheduler-address /shared/scheduler.json` was told only "scheduler_file is None"."""
    flags = "--n-workers 4 --memory-limit 8GiB --rmm-pool-size 0.5 --scheduler-address /shared/scheduler.json"
    code = f"args = parser.parse_args('{flags}'.split())\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code, "went to --scheduler-address, which takes the address of a running scheduler")


def test_review_39_08_2_preferred_workers_are_not_said_to_be_the_only_ones(client):
    """Learner review 39: `workers=[...], allow_other_workers=True` without resources was told "the scheduler may use only
    those" (false: allow_other_workers makes the names a preference)."""
    code = (
        "slot_futures = session.client.map(where_am_i, range(4), workers=['plain'], allow_other_workers=True, pure=False)\n"
        "slot_workers = session.client.gather(slot_futures)"
    )
    assert_refused("08-2", client, code, "a preference, the scheduler may still run them elsewhere", not_said="may use only those")
    pinned = "slot_futures = session.client.map(where_am_i, range(4), workers=['plain'], pure=False)\nslot_workers = session.client.gather(slot_futures)"
    assert_refused("08-2", client, pinned, "may use only those")


def test_review_40_08_2_a_pin_beside_the_resource_is_not_said_to_ignore_it(client):
    """Learner review 40: `resources={"GPU_SLOT": 1}, workers=[...]` was told "the scheduler may use only those, whatever
    they have" (false: distributed applies both restrictions, so a named worker without the slot is not used)."""
    code = (
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, workers=['with-slot'], pure=False)\n"
        "slot_workers = session.client.gather(slot_futures)"
    )
    assert_refused("08-2", client, code, "the resource alone picks the workers", not_said="whatever they have")


def test_review_41_08_1_one_string_given_to_parse_args_is_named(client):
    """Learner review 41: `parser.parse_args("--n-workers 4 ...")` (one string: argparse reads its characters) was told
    "a flag it does not know, or a flag without its value"."""
    verdict = _judged_after_argparse_refused(client, 'args = parser.parse_args("--n-workers 4 --memory-limit 8GiB")')
    assert not verdict.correct and "parse_args wants a list of strings, one per word" in verdict.message, verdict.message
    assert "a flag it does not know" not in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("made", "tasks"),
    [
        ("slot_workers = session.client.gather(slot_futures)[:3] + ['with-slot']", "0, 1, 2, -"),
        ("slot_workers = session.client.gather(slot_futures[:2]) + session.client.gather(slot_futures[:2])", "0, 1, 0, 1"),
        ("slot_workers = session.client.gather(slot_futures[0:1]) + session.client.gather(restricted[:3])", "0, -, -, -"),
        # learner review 43: the same pieces written without +
        ("slot_workers = [*session.client.gather(slot_futures)[:3], 'with-slot']", "0, 1, 2, -"),
        ("slot_workers = session.client.gather(slot_futures)[:3]\nslot_workers.append('with-slot')", "0, 1, 2, -"),
        ("import itertools\ng = session.client.gather\nslot_workers = list(itertools.chain(g(slot_futures[:2]), g(slot_futures[:2])))", "0, 1, 0, 1"),
        ("slot_workers = [slot_futures[i].result() for i in (0, 1, 2, 2)]", "0, 1, 2, 2"),
    ],
)
def test_review_42_08_2_results_pieced_together_are_refused(made, tasks, client):
    """Learner reviews 42-43: slot_workers pieced together from a name written out, a task gathered twice, or another
    cell's futures was "Correct" (every right value is "with-slot"): the check runs the answer cell again with tasks
    that also return their number."""
    scratch = "restricted = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)"
    assert_refused("08-2", client, SLOT_MAP + made, f"came out as the results of tasks {tasks}", scratch=scratch)


@pytest.mark.parametrize(
    "made",
    [
        "slot_workers = []\nfor f in slot_futures:\n    slot_workers.append(f.result())",
        "slot_workers = session.client.gather(slot_futures[:2]) + session.client.gather(slot_futures[2:])",
    ],
)
def test_review_43_08_2_a_loop_appending_each_result_and_two_halves_in_order_pass(made, client):
    """Learner review 43: the beginner's loop of `.append(f.result())` was told it was not made from slot_futures;
    two halves gathered in order were told they were pieced together."""
    _, verdict = judged_cell("08-2", client, SLOT_MAP + made)
    assert verdict.correct, verdict.message


def test_review_42_08_2_sorted_results_are_not_said_to_lose_a_task(client):
    """Learner review 42: sorted(...) keeps every result; it was told "a task that ran elsewhere would not show"."""
    code = SLOT_MAP + "slot_workers = sorted(session.client.gather(slot_futures))"
    assert_refused("08-2", client, code, "the i-th entry should say where the i-th task ran", not_said="would not show")


def test_review_44_08_2_two_reversals_pass_and_the_legend_is_said_only_when_needed(client):
    """Learner review 44: `gather(slot_futures[::-1])[::-1]` (every task once, in order) was refused as reordered; the
    '-' legend was printed for tasks 0, 1, 0, 1."""
    _, verdict = judged_cell("08-2", client, SLOT_MAP + "slot_workers = session.client.gather(slot_futures[::-1])[::-1]")
    assert verdict.correct, verdict.message
    code = SLOT_MAP + "slot_workers = session.client.gather(slot_futures[:2]) + session.client.gather(slot_futures[:2])"
    assert_refused("08-2", client, code, "results of tasks 0, 1, 0, 1. Each of the 4", not_said="('-'")


def test_review_47_08_2_a_filter_on_the_results_is_refused(client):
    """Learner review 47: `[str(w) for w in gather(slot_futures) if w == "with-slot"]` (it drops nothing here, and would
    hide a task that ran elsewhere) was "Correct"."""
    code = SLOT_MAP + "slot_workers = [str(w) for w in session.client.gather(slot_futures) if w == 'with-slot']"
    assert_refused("08-2", client, code, "slot_workers loses results (a filter (if w == 'with-slot')")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            "slot_workers = list(filter(lambda w: w == 'with-slot', session.client.gather(slot_futures)))",
            "slot_workers loses results (a filter (filter(...)) keeps only",
        ),
        (
            "slot_workers = []\nfor w in session.client.gather(slot_futures):\n    if w == 'with-slot':\n        slot_workers.append(w)",
            "came out with 0 of the 4 results",
        ),
    ],
)
def test_review_48_08_2_a_filter_written_otherwise_is_said_to_lose_results(client, code, said):
    """Learner review 48: `list(filter(lambda w: ..., gather(...)))` was refused as tasks that "run" the lambda (it runs
    in the notebook); the same test in a loop that appends was not looked at."""
    assert_refused("08-2", client, SLOT_MAP + code, said, not_said="the tasks run")


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (
            "slot_futures = tuple(session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False))\n"
            "slot_workers = session.client.gather(list(slot_futures))",
            "slot_futures is a tuple",
        ),
        (
            "slot_futures = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)[:4]\n"
            "slot_workers = session.client.gather(slot_futures)",
            "your answer cell starts 8 tasks and keeps 4 of their futures",
        ),
    ],
)
def test_review_52_08_2_a_tuple_of_futures_and_extra_tasks_sliced_off_are_refused(code, said, client):
    """Learner review 52 (contrived): both were "Correct"."""
    assert_refused("08-2", client, code, said)


def test_review_52_08_1_threads_given_for_workers_are_named(client):
    """Learner review 52: `--threads-per-worker 4` for `--n-workers 4` got only "n_workers is None"."""
    flags = "['--threads-per-worker', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json']"
    code = f"args = parser.parse_args({flags})\nscript_options = options_from_args(args)"
    assert_refused("08-1", client, code, "threads are not workers")


def test_review_57_08_1_vars_of_args_without_its_none_values_is_named_as_vars(client):
    """Learner review 57: `{k: v for k, v in vars(args).items() if v is not None}` was told "unexpected options
    ['rows']: give only the four flags asked for" (the learner had: rows is the parser's default)."""
    code = f"args = parser.parse_args('{FLAGS_08_1}'.split())\nscript_options = {{k: v for k, v in vars(args).items() if v is not None}}"
    rows = 'parser.add_argument("--rows", type=int, default=10_000)'  # as notebook 08's parser has it
    assert_refused("08-1", client, code, "script_options is made from vars(args)", not_said="give only the four flags", scratch=rows)


def test_review_57_08_2_a_set_of_the_results_is_not_said_to_hide_a_task_that_ran_elsewhere(client):
    """Learner review 57: `set(gather(slot_futures))` was told "a task that ran elsewhere would not show" (it would)."""
    code = (
        "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"
        "slot_workers = set(session.client.gather(slot_futures))"
    )
    assert_refused("08-2", client, code, "no longer says, task by task, where each of the tasks ran", not_said="would not show")
