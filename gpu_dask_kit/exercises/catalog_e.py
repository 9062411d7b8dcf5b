"""Exercises of notebooks 08-09: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import re
from typing import Any

import dask
from dask.utils import funcname, key_split
from distributed import Future, futures_of

from .. import scheduler_view
from ..notebook.cellreads import names_read
from .elsewhere import value_when
from .evidence import client_of, gathered_since, resource_restrictions, submitted_with, task_args, task_functions, task_inputs
from .judging import describe, fresh, is_lazy
from .model import Exercise, Hint
from .own_code import own_trees
from .replay import _assigned, _parse, answer_cell, called_name, nodes_making
from .sizes import size_answer
from .values import as_bytes, as_fraction, as_number, close

# --- 08 · scripts and clusters -----------------------------------------------------------------------


def _judge_08_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["script_options"]
    if hasattr(got, "__dict__") and not isinstance(got, dict) and hasattr(got, "n_workers"):
        raise Hint("script_options is the Namespace parse_args returns: hand it to options_from_args for the dict of options.")
    if not isinstance(got, dict):
        raise Hint(f"script_options should be the dict options_from_args returns; {describe(got)} is not.")
    fresh(ns, ("script_options",))
    by_hand = _set_by_hand(ns)
    if by_hand:
        raise Hint(
            f"your answer cell sets {by_hand} by hand after parsing: the parser never read that flag, so a script given "
            "the same command line would not get it. Put every flag in the list parse_args reads."
        )
    cell = answer_cell(ns, "script_options") or ""
    if "Namespace(" in cell and "parse_args" not in cell:
        raise Hint(
            "args was made by hand (argparse.Namespace(...)), not parsed from flags: a script gets its options from its "
            "command line. Give the flags, as strings, to the parser's parse_args, then turn its result into options."
        )
    if isinstance(ns.get("args"), argparse.Namespace) and got == vars(ns["args"]):
        raise Hint(
            "script_options is vars(args): every attribute of the parsed Namespace, also the flags left at their defaults. "
            "The kit has a function that turns args into the options a cluster takes (see the cells above): use it."
        )
    extra = sorted(set(got) - {"n_workers", "memory_limit", "rmm_pool_size", "scheduler_file"})
    if "vars(" in cell and extra and _entries_of_args(got, ns.get("args")):
        raise Hint(  # (learner review 57: vars(args) without its None values was told "give only the four flags")
            f"script_options is made from vars(args): the Namespace holds every flag the parser knows, also those you did "
            f"not pass, filled in with their defaults ({', '.join(extra)}), and not every flag is a cluster option. The kit "
            "has a function that turns args into the options a cluster takes (see the cells above): use it."
        )
    if got.get("memory_limit") is None and "n_workers" in got:
        device = " (--device-memory-limit is another option: the GPU's spill threshold)" if got.get("device_memory_limit") is not None else ""
        raise Hint(
            f"script_options has no memory_limit: the flag for the host memory limit is not in the flags the parser "
            f"read{device}. Add it to the list parse_args reads (the parser's --help lists its flags)."
        )
    if as_number(got.get("n_workers")) != 4:
        if isinstance(got.get("n_workers"), str) and as_number(got.get("n_workers")) is None:
            raise Hint(f"n_workers is {got.get('n_workers')!r}, a word: flags take numbers in digits (the parser passes text on as it is).")
        if got.get("n_workers") is None and as_number(got.get("threads_per_worker")) == 4:  # (learner review 52)
            raise Hint(
                "n_workers is None, and threads_per_worker is the number the question gives for workers: threads are not "
                "workers (each worker is a process with its own memory; its threads share it). Use the flag for the "
                "number of workers (the parser's --help lists its flags)."
            )
        raise Hint(f"n_workers is {got.get('n_workers')!r}: give the number of workers the question names.")
    size_answer(got.get("memory_limit"), 8 * 2**30, "memory_limit", "Pass the host memory limit the question gives (with its unit, or in bytes).")
    pool = as_fraction(got.get("rmm_pool_size"))
    if got.get("rmm_pool_size") is None and got.get("rmm_maximum_pool_size") is not None:  # (learner review 33)
        raise Hint(
            "script_options has no rmm_pool_size: --rmm-maximum-pool-size sets the pool's cap (how large it may grow), "
            "not the pool itself. The question asks for the pool's size: its flag is --rmm-pool-size."
        )
    if not close(pool, 0.5, abs_=1e-9):
        if isinstance(got.get("rmm_pool_size"), str) and "/" in got["rmm_pool_size"]:  # (learner reviews 26-27: "1/2")
            raise Hint(f"rmm_pool_size is {got.get('rmm_pool_size')!r}: a flag's value is text, not arithmetic: write the share as a decimal.")
        if pool is not None and 0 < pool <= 1:  # a share, not the one asked (learner review 32: 0.05)
            raise Hint(f"rmm_pool_size is {got.get('rmm_pool_size')!r}: a share of each GPU, but not the share the question gives for the pool.")
        raise Hint(f"rmm_pool_size is {got.get('rmm_pool_size')!r}: the question asks for a share of each GPU (a fraction between 0 and 1).")
    address = got.get("scheduler_address")
    if got.get("scheduler_file") is None and isinstance(address, str) and not address.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
        raise Hint(  # (learner reviews 36-38: the file's path given to --scheduler-address)
            f"the path {address!r} went to --scheduler-address, which takes the address of a running scheduler "
            "(tls://host:port), not a file: the parser has another flag for a scheduler file (its --help lists it)."
        )
    if got.get("scheduler_file") != "/shared/scheduler.json":
        raise Hint(f"scheduler_file is {got.get('scheduler_file')!r}: it should be the path of the existing scheduler file.")
    if extra:
        raise Hint(f"unexpected options {extra}: give only the four flags asked for.")
    args = ns.get("args")
    if isinstance(args, tuple) and args and isinstance(args[0], argparse.Namespace):
        args = args[0]  # parser.parse_known_args: (the Namespace, the flags it did not know)
    _copied_from_args(got, args, ns["options_from_args"])
    if not isinstance(args, argparse.Namespace) or ns["options_from_args"](args) != got:
        if _args_assigned_again(ns):
            raise Hint(
                "script_options is not what `args` gives now: `args` was assigned again after script_options was made from it, "
                "so the check cannot tell which flags script_options came from. Parse the question's flags into args once, "
                "make script_options from it, and assign nothing to args after that; then run this check again."
            )
        raise Hint(
            "script_options was not made by the script's parser: there is no `args` from parser.parse_args in this "
            "notebook that gives this dict (typed by hand?). A script gets its options by parsing its flags: parse them "
            "into args, then turn args into the dict."
        )
    cell = answer_cell(ns, "script_options") or ""
    written = getattr(_assigned(_parse(cell) or ast.Module(body=[], type_ignores=[]), "script_options"), "value", None)
    if isinstance(written, ast.Dict) and None not in written.keys:  # ({**options_from_args(args)} is a copy)
        raise Hint(  # (learner review 33: the right flags parsed, then the dict written out beside them)
            "script_options is a dict written out in your answer cell, not what the parsed flags give: a script gets its "
            "options from its command line only. Make script_options with the kit's function from args (see the cells above)."
        )
    made = cell.split("options_from_args(")[-1]
    if "options_from_args(" in cell and (re.search(r"\w+\s*=\s*[\d'\"]", made.split(")", 1)[-1]) or re.search(r"[\"']\w+[\"']\s*:", made)):
        raise Hint(
            "your answer cell changes what options_from_args gives (a value written in beside it, such as n_workers=4): "
            "script_options must be what the parsed flags give, so that the flags alone decide the options."
        )
    if _reparsed(ns["parser"], args) != args and "ArgumentParser(" in (answer_cell(ns, "script_options") or ""):
        raise Hint(
            "args comes from another parser, made in your answer cell, not from the notebook's `parser` (the script's "
            "own, which also has the script's flags and their defaults): parse the flags with `parser` itself."
        )
    if _reparsed(ns["parser"], args) != args:
        raise Hint(
            "args was not made by parser.parse_args: parsing the flags it describes gives other values (a Namespace "
            "written by hand? the parser keeps each flag's text, e.g. a pool size as a string). Let the parser read the flags."
        )
    if isinstance(got.get("rmm_pool_size"), str) and got["rmm_pool_size"].strip().endswith("%"):
        return (
            f"four flags, parsed by the same parser a script uses. The kit reads --rmm-pool-size {got['rmm_pool_size']} "
            "as the fraction 0.5 of each GPU's memory; dask-cuda's own `dask cuda worker` wants that fraction written as 0.5."
        )
    return "four flags, parsed by the same parser a script uses."


def _entries_of_args(got: dict[str, Any], args: Any) -> bool:
    """True when every entry of ``got`` is an entry of ``vars(args)`` as the parser left it (``args`` a Namespace)."""
    parsed = vars(args) if isinstance(args, argparse.Namespace) else {}
    return bool(parsed) and all(k in parsed and parsed[k] == v for k, v in got.items())


def _copied_from_args(got: dict[str, Any], args: Any, options_from_args: Any) -> None:
    """A :class:`Hint` when ``got`` holds entries of ``vars(args)`` as the parser left them (text), not converted."""
    if not _entries_of_args(got, args):
        return
    converted = options_from_args(args)
    raw = next((k for k in got if k in converted and converted[k] != got[k]), None)
    if raw is not None:
        raise Hint(
            f"script_options was copied from vars(args): those are the parser's values as it read them from the command "
            f"line ({raw} is {got[raw]!r}, a string), not the options a cluster takes. The kit has a function that turns args "
            "into those options, converting each value (see the cells above): use it."
        )


def _set_by_hand(ns: dict[str, Any]) -> str | None:
    """The first attribute the answer cell stores on an object by hand (``args.x = ...``, ``setattr(args, ...)``,
    ``vars(args)[...] = ...``), in words; None when it stores none (or there is no cell to read)."""
    cell = answer_cell(ns, "script_options")
    tree = ast.parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and ast.unparse(target) == "sys.argv":
                continue  # the command line parse_args() reads when given no list (learner review 25)
            if isinstance(target, ast.Attribute):
                return f"{ast.unparse(target)} (an attribute of the parsed Namespace)"
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call):
                return f"{ast.unparse(target)} (an entry of the parsed Namespace)"
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr":
            return f"{ast.unparse(node)}"
    return None


def _args_assigned_again(ns: dict[str, Any]) -> bool:
    """True when ``args`` is assigned after the statement that made script_options from it: later in the answer cell, or
    in a later cell (learner reviews 31-32: ``args = parser.parse_args([])`` after the answer was taken for one typed by hand)."""
    history = ns.get("In")
    if not isinstance(history, list):
        return False
    trees = [_parse(source) if isinstance(source, str) else None for source in history]
    made = max((i for i, tree in enumerate(trees) if tree is not None and _assigned(tree, "script_options") is not None), default=None)
    if made is None:
        return False
    tree = trees[made]
    assert tree is not None
    statement = max(i for i, node in enumerate(tree.body) if _assigned(ast.Module(body=[node], type_ignores=[]), "script_options") is not None)
    later = [ast.Module(body=tree.body[statement + 1 :], type_ignores=[]), *(t for t in trees[made + 1 :] if t is not None)]
    return any(_assigned(t, "args") is not None for t in later)


def _reparsed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace | None:
    """What the parser makes of the flags ``args`` describes (None: it refuses them); equal to ``args`` when it made it."""
    flags: list[str] = []
    for dest, value in vars(args).items():
        if value is None or value is False or value == parser.get_default(dest):
            continue
        flag = "--" + dest.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return parser.parse_args(flags)
    except SystemExit:
        return None


def _made_from(cell: str | None, name: str, source: str) -> bool:
    """True when a top-level statement of ``cell`` that assigns ``name`` or fills it (``name.append(...)`` in a loop)
    reads ``source`` (True too when there is no cell).

    >>> _made_from("w = []\\nfor f in fs:\\n    w.append(f.result())", "w", "fs"), _made_from("w = c.gather(others)", "w", "fs")
    (True, False)
    """
    tree = _parse(cell) if cell is not None else None
    if tree is None or _assigned(tree, name) is None:
        return True

    def fills(statement: ast.AST) -> bool:  # (learner review 43: a loop appending each result was refused)
        stores = [n for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        methods = [n.func for n in ast.walk(statement) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
        return bool(stores) or any(m.attr in ("append", "extend", "insert") and getattr(m.value, "id", None) == name for m in methods)

    return any(fills(statement) and any(isinstance(n, ast.Name) and n.id == source for n in ast.walk(statement)) for statement in tree.body)


def _futures_made_before(cell: str | None, futures: list[Any], ns: dict[str, Any]) -> str | None:
    """The name of a list of futures (other than slot_futures) that the answer cell reads and that holds some of
    ``futures``: tasks another cell started, reused (learner review 19: ``slot_futures = restricted[:4]``, the lesson's
    own GPU_SLOT futures); None otherwise."""
    if cell is None:
        return None
    keys = {f.key for f in futures}
    tree = _parse(cell)
    # a name the cell itself stores (a loop's `one_task = client.submit(...)`) holds what the cell made (learner review 32)
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} if tree is not None else set()
    for name in sorted(names_read(cell, ns) - {"slot_futures"} - stored):
        value = ns.get(name)
        held = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(f, Future) and f.key in keys for f in held):  # (a list of Delayed has the same keys: review 21)
            return name
    return None


def numbered_where_am_i(i: Any) -> str:
    """Stand-in for notebook 08's ``where_am_i`` when the check runs the answer cell again: its worker's name and the
    task's number (``"with-slot#2"``), so that each task's result can be told apart."""
    from distributed import get_worker

    return f"{get_worker().name}#{i}"


def _follows_each_task(ns: dict[str, Any]) -> bool:
    """A :class:`Hint` when the answer cell, run again with :func:`numbered_where_am_i` for ``where_am_i``, does not give
    each task's result once, in order (learner reviews 42-43: every right value is "with-slot", so a name written out,
    a task gathered twice or another cell's futures looked right). Not judged when the answer cell does not run
    ``where_am_i`` itself (no numbered result comes back): then False; True when each task's result came back once, in order."""
    again = value_when(ns, "slot_workers", {"where_am_i": numbered_where_am_i})
    before = ns.get("slot_workers")
    if isinstance(again, (list, tuple)) and isinstance(before, (list, tuple)) and len(again) < len(before):
        raise Hint(  # (learner review 48: results kept only when they equal this run's name, in a loop or a filter)
            "slot_workers loses results: the check ran your answer cell again with where_am_i also returning its task's "
            f"number, and slot_workers came out with {len(again)} of the {len(before)} results. Something in your cell keeps "
            "only the results that look like this run's (a test on the names?): a task that ran elsewhere would be left "
            "out. Gather the results of all the futures and keep each one."
        )
    if not isinstance(again, (list, tuple)) or not any("#" in str(v) for v in again):
        return False
    numbers = [str(v).rsplit("#", 1)[1] if "#" in str(v) else "-" for v in again]
    if numbers != [str(i) for i in range(4)]:
        raise Hint(
            "slot_workers does not follow the tasks: the check ran your answer cell again with where_am_i also returning "
            f"its task's number, and slot_workers came out as the results of tasks {', '.join(numbers)}"
            + (" ('-': an entry no task returned, such as a name written out)" if "-" in numbers else "")
            + ". Each of the 4 tasks' results belongs in it once, in order: gather the results of slot_futures."
        )
    return True


def _judge_08_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    futures, names = ans["slot_futures"], ans["slot_workers"]
    if not isinstance(futures, (list, tuple)) or not futures or not all(hasattr(f, "key") and hasattr(f, "result") for f in futures):
        raise Hint(f"slot_futures should be the futures of the tasks (what the client returns when you submit them); it is {describe(futures)}.")
    kept = _futures_made_before(answer_cell(ns, "slot_futures"), list(futures), ns)
    if kept is not None:
        raise Hint(
            f"slot_futures are futures that `{kept}` already held before your answer cell ran (tasks another cell "
            "started): your answer cell starts no task and asks for no resource itself. Submit where_am_i for range(4) "
            "in your answer cell, asking for the GPU_SLOT resource."
        )
    asked = resource_restrictions(list(futures))
    if any(not a for a in asked):
        raise Hint("the scheduler no longer knows these tasks: run your answer cell again, then this check.")
    if any(a["workers"] and a.get("loose") for a in asked) and not any(a["resources"] for a in asked):
        raise Hint(  # (learner review 39: "may use only those" was false with allow_other_workers=True)
            "the tasks name workers they prefer (workers=..., with allow_other_workers=True: a preference, the scheduler "
            "may still run them elsewhere) and ask for no resource: nothing says what a task NEEDS. Ask for the resource "
            "instead, and let the scheduler find the workers that offer it."
        )
    if any(a["workers"] and not a.get("loose") and a["resources"] for a in asked):
        raise Hint(  # (learner review 40: "whatever they have" was false for workers=[...] beside resources=)
            "the tasks ask for the resource and are also pinned to workers by name (workers=...): the scheduler then uses "
            "only the named workers that also offer it, and on a cluster whose workers have other names none runs. Leave "
            "workers= out: the resource alone picks the workers."
        )
    if any(a["workers"] and not a.get("loose") for a in asked):
        raise Hint(
            "the tasks are pinned to workers by name: the scheduler may use only those, whatever they have. Ask for what "
            "the task NEEDS instead, and let the scheduler find the workers that offer it."
        )
    wanted = [a["resources"] for a in asked]
    if not all(w == {"GPU_SLOT": 1} for w in wanted):
        have = sorted({r for w in scheduler_view.workers(ns["session"].client).values() for r in w.get("resources", {})})
        raise Hint(f"the tasks asked for {wanted[0] or 'no resource'}; they should each need one GPU_SLOT (the workers offer: {', '.join(have) or 'none'}).")
    if len(futures) != 4:
        raise Hint(f"there {'is 1 task' if len(futures) == 1 else f'are {len(futures)} tasks'}; the question asks for one per number in range(4).")
    if isinstance(futures, tuple):  # (learner review 52)
        raise Hint("slot_futures is a tuple: the question asks for the list of futures the client returns when it submits the tasks (keep that list).")
    started = _numbers_mapped(_parse(answer_cell(ns, "slot_futures") or "") or ast.Module(body=[], type_ignores=[]), ns, "where_am_i")
    if started is not None and len(started) != len(futures):  # (learner review 52: map(..., range(8))[:4])
        raise Hint(
            f"your answer cell starts {len(started)} tasks and keeps {len(futures)} of their futures: the others ran for "
            "nothing, on a resource the cluster has little of. Start one task per number in range(4), no more."
        )
    given = task_args(list(futures))
    if all(given) and sorted(a[0] for a in given if a and isinstance(a[0], int)) != [0, 1, 2, 3]:
        raise Hint("the tasks were not given the numbers of range(4) (it starts at 0 and stops before 4): one task per number.")
    waits = _waits_in_the_submitting_loop(answer_cell(ns, "slot_futures"))
    if waits is not None:  # (learner review 33; 09-1 refuses the same habit)
        raise Hint(
            f"your answer cell calls {waits} inside the loop that submits the tasks: it waits for each task's result, and "
            "copies it here, before it submits the next, so the tasks run one after another whatever the cluster offers. "
            "Submit all of them first, then gather their results in one step."
        )
    repeats = _repeats_one(answer_cell(ns, "slot_workers"))
    in_order = False  # the answer cell, run again, gave each task's result once, in order (see _follows_each_task)
    if repeats is not None and "reorders or skips" in repeats:  # (learner review 44: [::-1][::-1] puts them back)
        try:
            in_order = _follows_each_task(ns)
        except Hint:
            in_order = False
        repeats = None if in_order else repeats
    if repeats is not None and "order" in repeats:  # (learner review 42: sorted(...) keeps every result)
        raise Hint(
            f"slot_workers does not keep the results in order ({repeats}): the i-th entry should say where the i-th "
            "task ran. Gather the results of all the futures, in their order."
        )
    if repeats is not None:
        shows = (  # (learner review 57: for set(...) "a task that ran elsewhere would not show" was false)
            "so slot_workers no longer says, task by task, where each of the tasks ran"
            if repeats.startswith("set(")
            else "so a task that ran elsewhere would not show"
        )
        raise Hint(
            f"slot_workers {'loses results' if 'lost' in repeats else 'repeats results'} ({repeats}): each task's own "
            f"answer is not kept, {shows}. Gather the results of all the futures and keep each one."
        )
    if not _made_from(answer_cell(ns, "slot_workers"), "slot_workers", "slot_futures"):
        raise Hint("slot_workers is not made from slot_futures in your answer cell: gather the results of THOSE futures, not of others.")
    if any(hasattr(n, "key") for n in (names if isinstance(names, (list, tuple)) else [names])):
        raise Hint("slot_workers holds futures: gather their results into the notebook.")
    if isinstance(names, tuple):  # (learner review 30)
        raise Hint("slot_workers is a tuple: the question asks for a list of the 4 results (what gather returns for a list of futures).")
    if not isinstance(names, (list, tuple)) or len(names) != 4:
        size = f" of length {len(names)}" if isinstance(names, (list, tuple)) else ""
        raise Hint(f"slot_workers should be the list of the 4 results (worker names, one per task, repeats kept); it is {describe(names)}{size}.")
    fetched = gathered_since(list(futures))
    if [str(n) for n in names] != [str(f.result(timeout=60)) for f in futures]:
        raise Hint("slot_workers is not what the tasks of slot_futures returned: gather those futures.")
    if not in_order:  # (not run again when the step-slice case above already ran it and found them in order)
        _follows_each_task(ns)
    workers = {str(w.get("name")) for w in scheduler_view.workers(ns["session"].client).values()}
    typed = _returns_a_typed_name(answer_cell(ns, "slot_futures"), ns, workers)
    if typed is not None:
        raise Hint(
            f"the tasks run {typed}, which returns a name written out, whichever worker runs it: the results then say "
            "nothing about where each task ran. Run where_am_i, which asks its worker for its name."
        )
    elsewhere = _never_asks_its_worker(answer_cell(ns, "slot_futures"), ns)
    if elsewhere is not None:
        raise Hint(
            f"the tasks run {elsewhere}, which never asks its worker for its name, or asks and returns something else: "
            "what it returns comes from somewhere else (a name set in the notebook, a default), whichever worker runs "
            "it. Run where_am_i, which asks its worker for its name, and return what it gives."
        )
    ran_on = _workers_holding(ns["session"].client, list(futures))
    if ran_on is not None and [str(n) for n in names] != ran_on:
        raise Hint(
            "the tasks' results are not the names of the workers they ran on: they ran another function than "
            "where_am_i (which asks its worker for its name). The question is where each task ran: run where_am_i."
        )
    if fetched is None:
        raise Hint(
            "could not be checked, because the scheduler's record of when these tasks were submitted is gone (it keeps "
            "only its latest steps, and many tasks ran since), so it cannot say whether slot_workers came from them. "
            "Run your answer cell again (pure=False makes new tasks), then this check right after."
        )
    if fetched < len(futures) and not dask.config.get("distributed.client.direct-to-workers", False):
        raise Hint(
            "the names in slot_workers never came from the cluster: the scheduler handed no results of those futures to "
            "this notebook (typed in?). Bring the futures' results back and store what they hold."
        )
    return "every task asked for a GPU_SLOT, and ran where one is offered."


def _waits_in_the_submitting_loop(cell: str | None) -> str | None:
    """ "fut.result()": a ``.result()`` or gather written in the body of a loop that also submits tasks (each task waited
    for before the next is submitted); None otherwise.

    >>> _waits_in_the_submitting_loop("for i in range(4):\\n    f = c.submit(g, i)\\n    out.append(f.result())")
    'f.result()'
    >>> _waits_in_the_submitting_loop("fs = [c.submit(g, i) for i in range(4)]\\nout = c.gather(fs)") is None
    True
    """
    tree = _parse(cell) if cell is not None else None
    for loop in (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))) if tree is not None else ():
        called = [(n, n.func.attr) for stmt in loop.body for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
        waits = [call for call, attr in called if attr in ("result", "gather")]
        if waits and any(attr in ("submit", "map") for _, attr in called):
            return ast.unparse(waits[0])
    return None


def _returns_a_typed_name(cell: str | None, ns: dict[str, Any], workers: set[str]) -> str | None:
    """How the answer cell's tasks return a string written out (``lambda i: "with-slot"``, or a function of the
    learner's own whose every ``return`` is a string literal: learner review 20), or a task function with a worker's
    name written in it (``lambda i: max(where_am_i(i), "with-slot")``: review 21); None otherwise."""
    tree = _parse(cell or "")
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Lambda) and isinstance(node.body, ast.Constant) and isinstance(node.body.value, str):
            return f"`{ast.unparse(node)}`"
        if isinstance(node, ast.Lambda) and any(isinstance(c, ast.Constant) and c.value in workers for c in ast.walk(node.body)):
            return f"`{ast.unparse(node)}`"
    for name, code in own_trees(cell, ns, "08-2"):
        if any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in workers for c in ast.walk(code)):
            return f"`{name}`"
        returns = [n.value for n in ast.walk(code) if isinstance(n, ast.Return)]
        lambdas = [n.body for n in ast.walk(code) if isinstance(n, ast.Lambda)]
        values = returns + lambdas
        if values and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            return f"`{name}`"
    return None


#: What a task function calls to learn which worker runs it.
ASKS_ITS_WORKER = ("where_am_i", "get_worker", "dask_worker", "thread_state")


def _never_asks_its_worker(cell: str | None, ns: dict[str, Any]) -> str | None:
    """The task function of the answer cell's ``.map``/``.submit`` when nothing in it (nor in the notebook's functions
    it calls) asks the worker for its name: its result is then a value from elsewhere (``lambda i: NAME``, a default, a
    closure over a name worked out here: learner review 22); None otherwise, or when it cannot be told."""
    tree = _parse(cell or "")
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("map", "submit") and node.args):
            continue
        func = node.args[0]
        if isinstance(func, ast.Lambda):
            text = ast.unparse(func)
            reads = names_read(text, ns)
        elif isinstance(func, ast.Name) and callable(ns.get(func.id)):
            text = func.id
            reads = names_read(func.id, ns)
        else:
            continue
        if not any(word in reads or word in text for word in ASKS_ITS_WORKER):
            return f"`{text}`"
        names = [n for n in reads if isinstance(ns.get(n), str)]  # get_worker() called, then a name set here returned
        if names:
            return f"`{text}` (it returns `{names[0]}`, set in this notebook)"
    return None


def _workers_holding(client: Any, futures: list[Any]) -> list[str] | None:
    """Per future, the name of the worker holding its result (where the task ran); None when the scheduler cannot say."""
    try:
        where = client.who_has(futures)
        names = {address: str(info.get("name")) for address, info in scheduler_view.workers(client).items()}
        return [names[where[f.key][0]] for f in futures]
    except Exception:
        return None


#: Calls that keep only some items of what they are given.
FILTERS = ("filter", "filterfalse", "compress", "takewhile", "dropwhile")


def _repeats_one(cell: str | None) -> str | None:
    """How the statements making slot_workers repeat one result, in words, or None: a list multiplied (``[names[0]] *
    4``, ``gather(futures)[:1] * 4``; learner reviews 11, 26), or a comprehension whose element does not read its loop's
    future (``[slot_futures[0].result() for f in slot_futures]``: review 26, a one-letter slip)."""
    tree = _parse(cell) if cell is not None else None
    if tree is None:
        return None
    made = list(nodes_making(tree, "slot_workers"))
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "set" for n in made):  # (review 30)
        return "set(...) keeps each name once: the repeats, one per task, are lost"
    for n in made:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            sides = (n.left, n.right)
            if any(isinstance(x, (ast.List, ast.ListComp, ast.Subscript, ast.Call)) for x in sides) and any(
                isinstance(x, (ast.Constant, ast.Name)) for x in sides
            ):
                return "a list multiplied by a number"
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) and n.slice.step is not None:  # (review 27: [::-1])
            return f"{ast.unparse(n)} reorders or skips the results, so the i-th entry need not be the i-th task's"
        func = n.func if isinstance(n, ast.Call) else None
        if (isinstance(func, ast.Name) and func.id in ("sorted", "reversed")) or (isinstance(func, ast.Attribute) and func.attr in ("sort", "reverse")):
            return f"{ast.unparse(func)}(...) reorders the results, so the i-th entry need not be the i-th task's"  # (review 29)
        sliced = lambda x: isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Slice)  # noqa: E731
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and sliced(n.left) and sliced(n.right):
            return f"{ast.unparse(n)} puts the results in another order, so the i-th entry need not be the i-th task's"
        tests = [t for g in getattr(n, "generators", []) for t in g.ifs] if isinstance(n, (ast.ListComp, ast.GeneratorExp)) else []
        if tests:  # (learner review 47: `[w for w in gather(...) if w == "with-slot"]` hides a task that ran elsewhere)
            return f"a filter (if {ast.unparse(tests[0])}) keeps only the results that pass it: the others are lost"
        kept = next((c for c in ast.walk(n) if isinstance(c, ast.Call) and called_name(c.func) in FILTERS), None)
        if kept is not None:  # (learner review 48: `list(filter(lambda w: w == "with-slot", gather(...)))`)
            return f"a filter ({called_name(kept.func)}(...)) keeps only the results that pass it: the others are lost"
        if isinstance(n, (ast.ListComp, ast.GeneratorExp)):
            loop = {v.id for g in n.generators for v in ast.walk(g.target) if isinstance(v, ast.Name)}
            read = {v.id for v in ast.walk(n.elt) if isinstance(v, ast.Name)}
            if loop and not loop & read:
                return f"the same value for every future: {ast.unparse(n.elt)} does not read the loop's future"
    return None


# --- 09 · GPU-first ----------------------------------------------------------------------------------


def _brought_here(tree: ast.Module) -> str | None:
    """``.result()`` or a gather written in the answer cell (a learner's way to look at the squares first); None otherwise."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("result", "gather"):
            return f".{node.func.attr}()"
    return None


def _only_the_total_brought_here(tree: ast.Module) -> bool:
    """True when every ``.result()``/gather of the answer cell is ``total_future.result()`` (the sum, after it is made)."""
    funcs = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("result", "gather")]
    return bool(funcs) and all(
        f.attr == "result" and isinstance(f.value, ast.Name) and f.value.id == "total_future" for f in funcs if isinstance(f, ast.Attribute)
    )


def _judge_09_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    total = ans["total_future"]
    if is_lazy(total) and futures_of(total):  # (learner review 29: dask.delayed(sum)(...).persist() was told "nothing submitted")
        raise Hint(
            "total_future is a persisted Dask object (a Delayed or a collection whose task runs on the cluster), not a "
            "Future: the question is about the client's futures API. Submit the squares and their sum with the client "
            "(client.submit / client.map), which return futures."
        )
    if is_lazy(total):
        raise Hint("total_future is lazy (a Dask object): nothing was submitted yet. The question wants the Future the client returns when it submits a task.")
    if isinstance(total, (list, tuple)) and total and all(hasattr(f, "key") for f in total):
        raise Hint(
            f"total_future is a list of {len(total)} future{'s' if len(total) != 1 else ''}{', one per number' if len(total) == 10 else ''}: "
            "the question wants ONE future (not in a list), of a task "
            "on a worker that takes those futures as its input and adds them up."
        )
    if not (hasattr(total, "result") and hasattr(total, "key")):
        raise Hint(
            f"total_future is {describe(total)}: the value is here in the notebook. The question wants the Future "
            "of a task that adds up on a worker, without calling .result() or gathering."
        )
    cell = answer_cell(ns, "total_future")
    tree = (_parse(cell) if cell is not None else None) or ast.Module(body=[], type_ignores=[])
    made = getattr(_assigned(tree, "total_future"), "value", None)
    if isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "scatter":
        raise Hint(
            "total_future is data sent from this notebook with scatter: the value was made here, and no task on a worker "
            "added anything. The question wants the future of a task that adds up the squares' futures on a worker."
        )
    pulled = _brought_here(tree)
    if pulled is not None and _only_the_total_brought_here(tree):  # (learner review 24: print(total_future.result()))
        raise Hint(
            "your answer cell calls total_future.result(), which waits for the sum and copies it into this notebook: the "
            "exercise's answer cell only starts the tasks and keeps total_future a future. Leave .result() out of that "
            "cell (look at the value in a cell of its own, after the check)."
        )
    if pulled is not None:
        raise Hint(
            f"your answer cell calls {pulled}, which brings results from the cluster into this notebook (it waits for them "
            "and copies them here). The question is about futures that never come here: hand the squares' futures "
            "themselves to the summing task, and keep total_future a future."
        )
    inputs = task_inputs(total)
    if inputs is None:
        raise Hint("the scheduler does not know that future's task any more: run your answer cell again, then this check.")
    square = funcname(ns["square"]) + "-"
    computed = [k for k in inputs if str(k).startswith(square)]
    if inputs and len(computed) != len(inputs):  # keys of the learner's own naming (key=[...]): the function says
        ran = task_functions(total.client, list(inputs))
        computed = [k for k, f in zip(inputs, ran, strict=True) if str(k).startswith(square) or f == square[:-1]]
    if not inputs and str(total.key).startswith(square):  # (learner review 29: total_future = sq[-1])
        raise Hint(
            "total_future is the future of one square (a task of square), not of a task that adds them up: start one "
            "more task, on the cluster, that takes the squares' futures and sums them."
        )
    if not inputs:
        raise Hint(
            "that task takes no futures as input: what it adds up is plain values from this notebook (typed in, or squares "
            "that came back here first) or is made inside that one function. Make the squares as futures on the cluster "
            "first, then pass those futures to the summing task."
        )
    wrapped = [k for k in inputs if k not in computed and key_split(k) == "lambda"]
    if wrapped:  # (learner review 35: lambda i: square(i) was told "partial sums", or "not made by square")
        raise Hint(
            "that task's inputs come from tasks that run a lambda (lambda i: square(i)?): the scheduler sees only "
            "`lambda`, so the check cannot tell they are squares made by square. Map square itself over the numbers."
        )
    if any(key_split(k) == key_split(total.key) for k in inputs):
        raise Hint(
            "that task adds partial sums, made by more summing tasks: one more round of tasks than needed. Hand the "
            "squares' futures themselves to ONE summing task."
        )
    collection = next((c for c in ("from_sequence", "from_delayed", "from_array") if f".{c}(" in ast.unparse(tree)), None)
    if len(computed) != len(inputs) and collection is not None:  # (learner review 43: a dask.bag was told "not made by square")
        raise Hint(
            f"total_future is the result of a Dask collection ({collection}(...), computed at once): the squares and their "
            "sum went to the cluster as one graph. The question is about futures, submitted first, then handed to a "
            "second task without coming back. Start the squares with the client, as in the section above."
        )
    if len(computed) != len(inputs):
        raise Hint("that task's inputs were not made by square on the cluster (scattered from the notebook, or another computation).")
    graphs = submitted_with(total, inputs)
    if graphs is None:
        raise Hint(
            "could not be checked, because the scheduler's record of how these tasks were submitted is gone (it keeps only "
            "its latest steps, and many tasks ran since). Add pure=False to the calls in your answer cell (new tasks, "
            "new records), run it, then this check right after."
        )
    if len(graphs) < 2:
        raise Hint(
            "the squares and their sum went to the cluster as one graph (a lazy recipe computed at once): the question "
            "is about futures, submitted first, then handed to a second task without coming back. Start the squares "
            "with the client, as in the section above."
        )
    mapped = _numbers_mapped(tree, ns)  # (said first: learner review 42, [3] * 10 was told "the sum adds 1 squares")
    distinct = len(set(map(str, mapped))) if mapped is not None else 10
    if mapped is not None and distinct < len(mapped):  # (learner review 37: [0, ..., 9, 0] with pure=True)
        raise Hint(
            f"square is started for {len(mapped)} numbers, only {distinct} of them distinct, not for each number of "
            "range(10) once (a number twice, with the default pure=True, is one task whose future is handed over twice): "
            "map square over range(10)."
        )
    if mapped is not None and sorted(map(str, mapped)) != sorted(map(str, range(10))):  # (learner review 44: range(1, 10))
        raise Hint(
            f"square is started for the {len(mapped)} numbers of another range, not for those of range(10) (0, 1, ..., "
            "9; range(a, b) starts at a and stops before b): map square over range(10)."
        )
    if len(computed) != 10:
        raise Hint(f"the sum adds {len(computed)} square{'s' if len(computed) != 1 else ''}; the question asks for one per number in range(10).")
    value = as_number(total.result(timeout=60))
    squares_sum = sum(i * i for i in range(10))
    repeated = _handed_repeated(tree, ns)
    if value != squares_sum and repeated is not None:  # (learner review 42: map(...) * 2 to the sum)
        raise Hint(
            f"the summing task is handed `{repeated}`: a list of futures repeated or joined, so it adds some squares more "
            "than once. Hand it each square's future once."
        )
    if repeated is not None:  # (learner review 43: `map(...) + [0]`, a number written out beside the futures)
        raise Hint(
            f"the summing task is handed `{repeated}`: the squares' futures joined with something else (a value written "
            "out, futures handed twice); here the sum comes out the same, but it is not the sum of the squares' futures "
            "alone. Hand the summing task the squares' futures, each once, and nothing else."
        )
    if value != squares_sum:
        ranges = {sum(i * i for i in range(a, b)) for a in range(3) for b in range(8, 13)}
        if value in ranges and not _squares_right(inputs, ns):
            raise Hint("the task adds the squares of another range of numbers: range(10) is 0, 1, ..., 9. Check the numbers you squared.")
        if _squares_right(inputs, ns):  # (learner review 24: a task that filters some squares out was told "another range")
            raise Hint(
                "the squares are right, but the summing task does not add each of them once (it leaves some out, is "
                "handed some twice, or changes them): check the list of futures it is handed, and the function it runs."
            )
        raise Hint("the summing task returns something else than the sum of the ten squares: check the function it runs on its inputs.")
    _adds_its_inputs(made, ns)
    if any(
        isinstance(n, ast.Constant) and not isinstance(n.value, bool) and str(n.value).strip() in (str(squares_sum), f"{squares_sum}.0") for n in ast.walk(tree)
    ):
        raise Hint(  # (learner review 50: `submit(sum, sq) if len(sq) == 10 else submit(int, <the sum>)` was Correct)
            "the answer itself is written out in your answer cell (typed, even where that part does not run, as in an "
            "`if ... else`): total_future must come from the tasks alone. Remove the typed number."
        )
    return "the squares stayed on the workers and a task there added them up."


def _handed_repeated(tree: ast.Module, ns: dict[str, Any] | None = None) -> str | None:
    """A list multiplied or joined (``futures * 2``, ``a + a``) given to a ``submit`` call in ``tree``, as written; None
    when there is none, or when it hands each future of the notebook's lists once (``sq[::2] + sq[1::2]``, see
    :func:`_each_once`; ``ns``: the notebook's namespace).

    >>> _handed_repeated(ast.parse("t = c.submit(sum, c.map(square, range(10)) * 2)")), _handed_repeated(ast.parse("t = c.submit(sum, sq)"))
    ('c.map(square, range(10)) * 2', None)
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "submit":
            for arg in node.args[1:]:
                if not isinstance(arg, ast.BinOp) or not isinstance(arg.op, (ast.Mult, ast.Add)):
                    continue
                one = isinstance(arg.op, ast.Mult) and any(isinstance(x, ast.Constant) and x.value == 1 for x in (arg.left, arg.right))
                if not one and not _split_in_order(arg) and not (ns is not None and _each_once(arg, ns)):
                    return ast.unparse(arg)  # (review 44: `* 1` repeats nothing; 45: sq[:5] + sq[5:]; 53: sq[::2] + sq[1::2])
    return None


def _each_once(node: ast.expr, ns: dict[str, Any]) -> bool:
    """True when ``node``, evaluated with each list of the notebook it reads replaced by the positions of its items,
    gives every position of one list once, in any order (``sq[::2] + sq[1::2]``: a sum does not mind the order).

    >>> _each_once(ast.parse("sq[::2] + sq[1::2]", mode="eval").body, {"sq": list("abcd")})
    True
    >>> _each_once(ast.parse("sq[::2] + sq[::2]", mode="eval").body, {"sq": list("abcd")})
    False
    """
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(ns.get(n.id), list)}
    if len(names) != 1:
        return False
    (name,) = names
    try:
        got = eval(compile(ast.Expression(node), "<handed>", "eval"), {"__builtins__": {}}, {name: list(range(len(ns[name])))})
    except Exception:
        return False
    return isinstance(got, list) and sorted(got) == list(range(len(ns[name])))


def _split_in_order(node: ast.BinOp) -> bool:
    """True for ``x[:k] + x[k:]`` (one list cut in two and joined back, in order).

    >>> _split_in_order(ast.parse("sq[:5] + sq[5:]", mode="eval").body), _split_in_order(ast.parse("sq[:5] + sq[:5]", mode="eval").body)
    (True, False)
    """
    left, right = node.left, node.right
    if not (isinstance(node.op, ast.Add) and isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript)):
        return False
    if not (isinstance(left.slice, ast.Slice) and isinstance(right.slice, ast.Slice)) or ast.unparse(left.value) != ast.unparse(right.value):
        return False
    cut, start = left.slice.upper, right.slice.lower
    whole = left.slice.lower is None and right.slice.upper is None and left.slice.step is None and right.slice.step is None
    return whole and cut is not None and start is not None and ast.unparse(cut) == ast.unparse(start)


def _all_in_memory(dask_scheduler: Any, keys: list[Any]) -> bool:
    return all(k in dask_scheduler.tasks and dask_scheduler.tasks[k].state == "memory" for k in keys)


def _squares_right(inputs: list[Any], ns: dict[str, Any]) -> bool:
    """True when the summing task's inputs hold the squares of 0 ... 9 (read from the cluster by key; False when they
    cannot be read)."""
    from distributed import Future, wait

    client = client_of(ns)
    if client is None or len(inputs) != 10:
        return False
    try:
        if not client.run_on_scheduler(_all_in_memory, keys=list(inputs)):
            return False  # (a future of a key the scheduler has forgotten would wait for ever)
        futures: list[Any] = [Future(k, client) for k in inputs]
        wait(futures, timeout=10)
        values = [as_number(v) for v in client.gather(futures)]
        return sorted(v for v in values if v is not None) == [float(i * i) for i in range(10)]
    except Exception:
        return False


def _numbers_mapped(tree: ast.Module, ns: dict[str, Any], function: str = "square") -> list[Any] | None:
    """The numbers the answer cell maps ``function`` over (``client.map(square, ITERABLE)``, the iterable evaluated in
    the notebook's namespace); None when there is no such call or it cannot be evaluated here."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "map" and len(node.args) == 2:
            if ast.unparse(node.args[0]) != function:
                continue
            try:
                return list(eval(compile(ast.Expression(node.args[1]), "<numbers>", "eval"), dict(ns)))
            except Exception:
                return None
    return None


def _adds_its_inputs(made: ast.AST | None, ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the summing task's function does not add up what it is given (``lambda fs: 285``), or the
    task is also handed a value made in this notebook (``submit(lambda xs, total: total, futures, sum(...))``): its
    result then does not come from the squares' futures. The function is tried on small numbers here."""
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "submit" and made.args):
        return
    func, data = made.args[0], made.args[1:]
    if len(data) > 1 and not all(isinstance(a, ast.Starred) for a in data):
        for extra in data:
            try:
                value = eval(compile(ast.Expression(extra), "<argument>", "eval"), dict(ns)) if not isinstance(extra, ast.Starred) else None
            except Exception:
                continue
            start = isinstance(value, (int, float)) and value == 0 and extra is data[1] and ast.unparse(func) in ("sum", "builtins.sum")
            if start:  # sum(squares, 0): sum's own start value, the answer's
                continue
            if value is not None and not callable(value) and not hasattr(value, "key") and not isinstance(value, (list, tuple)):
                raise Hint(
                    "the summing task is handed a value made in this notebook beside the squares' futures, so what it "
                    "returns need not come from the squares. Hand it the futures only."
                )
        return  # a function passed along (functools.reduce(operator.add, ...)): judged by its result above
    try:
        add = eval(compile(ast.Expression(func), "<summing function>", "eval"), dict(ns))
        starred = bool(data) and isinstance(data[0], ast.Starred)
        lists = ([1, 2, 3], list(range(1, 11)), [7] * 12, [0, 2, 5], [0, 1, 4, 9, 16, 25, 36, 49, 64, 82], [-3, 5, 2])  # whole numbers, as squares are
        tries = [(list(numbers), sum(numbers)) for numbers in lists]  # short and long, from 0, other than the squares
        wrong = [want for numbers, want in tries if as_number(add(*numbers) if starred else add(numbers)) != want]
    except Exception:
        return  # not a function the check can try here (it may need the worker): judged by its result above
    if wrong:
        raise Hint(
            "the summing task's function does not add up what it is given (tried here on a few lists of numbers, it does "
            "not always return their sum): its result comes from somewhere else (written into it, or passed in). Let it "
            "add up the squares it receives."
        )


def _judge_09_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    fresh(ns, ("partition_bytes",))
    given = as_bytes(ans["partition_bytes"]) if not is_lazy(ans["partition_bytes"]) else None
    if given is not None and close(given, 32 * 2**30, rel=0.001):
        raise Hint("that is the whole GPU; a partition takes a fraction of it (NVTabular's default is in the prompt).")
    if given is not None and close(given, 32 * 2**30 / 10, rel=0.001):
        raise Hint(
            "that is 1/10 of the GPU: the part_mem_fraction NVTabular's example sets (the text above gives it in brackets), "
            "not NVTabular's default, which the question asks about. Read the default in the same sentence."
        )
    limit = ns.get("limit")
    if given is not None and isinstance(limit, (int, float)) and limit and close(given, limit / 8, rel=0.001):
        whose = (
            "host memory limit of this notebook's GPU workers"
            if getattr(ns.get("session"), "mode", "") == "gpu"
            else "memory limit of this notebook's CPU workers"
        )
        raise Hint(f"that is 1/8 of `limit`, the {whose} (from scheduler_info), not of the 32 GiB GPU the question is about.")
    size_answer(ans["partition_bytes"], 4 * 2**30, "partition_bytes", "Take NVTabular's fraction of the GPU's 32 GiB (GiB = 2**30 bytes).")
    return "partitions this size leave room for their copies and a shuffle's buffers."


EXERCISES = [
    Exercise(
        "08-1",
        ("script_options",),
        'args = parser.parse_args(["--n-workers", "4", "--memory-limit", "8GiB", "--rmm-pool-size", "0.5",\n'
        '                          "--scheduler-file", "/shared/scheduler.json"])\n'
        "script_options = options_from_args(args)\n",
        _judge_08_1,
        "parser.parse_args takes the flags as a list of strings; options_from_args turns the result into a dict.",
        cluster=False,
    ),
    Exercise(
        "08-2",
        ("slot_futures", "slot_workers"),
        'slot_futures = session.client.map(where_am_i, range(4), resources={"GPU_SLOT": 1}, pure=False)\nslot_workers = session.client.gather(slot_futures)\n',
        _judge_08_2,
        "session.client.map takes the same scheduling keywords as the cells above; gather brings results back.",
    ),
    Exercise(
        "09-1",
        ("total_future",),
        "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)\n",
        _judge_09_1,
        "session.client.map returns futures; a task may take a list of futures as its input.",
    ),
    Exercise(
        "09-2",
        ("partition_bytes",),
        'partition_bytes = "4GiB"  # 32 GiB / 8\n',
        _judge_09_2,
        "a size: bytes as an int, or a string with a unit.",
        cluster=False,
    ),
]
