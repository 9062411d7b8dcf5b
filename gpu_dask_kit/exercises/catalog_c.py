"""Exercises of notebooks 06-09: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any

import dask
from dask.utils import funcname

from .evidence import all_runs, client_of, gathered_since, resource_restrictions, submitted_with, task_inputs
from .judging import from_cell, host, is_lazy, kind, require_computed, require_persisted, size_answer, streak
from .model import Exercise, Hint
from .replay import answer_cell, typed_in
from .values import as_bytes, as_fraction, as_number, close

# --- 06 · persist vs compute -------------------------------------------------------------------------


def _judge_06_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import numpy as np

    persisted, local = ans["col_sums_persisted"], ans["col_sums_local"]
    require_persisted(persisted, "col_sums_persisted", "Keep the values on the workers: ask Dask to compute them there and hold them.")
    require_computed(local, "col_sums_local")
    if type(local).__module__.startswith("cupy"):
        raise Hint("col_sums_local is a CuPy array: its values are in GPU memory. Bring them to host memory (to_host) for a NumPy array.")
    if not isinstance(local, np.ndarray):
        raise Hint(f"col_sums_local should be a NumPy array (the values, here in the notebook); {kind(local)} is not.")
    n_cols = int(ns["N_COLS"])
    if local.shape != (n_cols,):
        raise Hint(f"col_sums_local has shape {local.shape}; there is one sum per column ({n_cols}): sum over the rows.")
    expected = host(ns["x"].sum(axis=0).compute())
    if not np.allclose(local, expected):
        raise Hint("col_sums_local has one value per column, but not the column sums of x.")
    if not np.allclose(host(persisted.compute()), expected):
        raise Hint("col_sums_persisted is persisted, but does not hold the column sums of x.")
    found = from_cell(ns, ("col_sums_local", "col_sums_persisted"), values=("col_sums_local",))
    summed = [r for r in found.runs_for("col_sums_local") if any("sum" in p for p in r["prefixes"])] if found is not None else [None]
    held = [v for v in (found.reads["col_sums_local"].values() if found is not None else ()) if is_lazy(v) and getattr(v, "shape", None) == (n_cols,)]
    if not summed and not held:  # neither summed on the cluster nor read from the (held) sums: x came here
        raise Hint(
            "col_sums_local was added up in this notebook: your answer cell brought x's values here (all of x, or block "
            "by block) and NumPy summed them on one core. Let the workers compute the sums; bring back only the small result."
        )
    if len(summed) >= 3:
        raise Hint(
            f"your answer cell computed the sums in {len(summed)} separate computations (one per column or block): one "
            "Dask expression over x gives every column's sum in a single computation."
        )
    return f"the {n_cols} sums are held on the workers, and a NumPy copy is in the notebook."


def _judge_06_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import psutil

    value = ans["fraction"]
    require_computed(value, "fraction")
    given = as_fraction(value)
    limits = [int(w["memory_limit"]) for w in ns["session"].client.scheduler_info(n_workers=-1)["workers"].values()]
    x = ns["x"]
    expected = x.nbytes / sum(limits)
    if given is None:
        raise Hint(f"fraction should be a number (a fraction) or a percent string; {kind(value)} is not.")
    cell = answer_cell(ns, "fraction")
    if cell is not None and typed_in(cell, "fraction"):
        raise Hint("fraction is typed into the answer cell (a number written out): compute it from x and the workers' memory limits.")
    if close(given, expected, rel=1e-6):
        return "x's share of the workers' memory limits together."
    if cell is not None and isinstance(value, str) and _rounded_as_shown(value, expected):
        return "x's share of the workers' memory limits together (computed, and rounded as shown)."
    wrong = {
        "a percentage written as a plain number: add a '%' sign, or give the fraction": given / 100,
        "the memory limits divided by x, upside down": 1 / given if given else 0,
        "x's share of ONE worker's limit; the question asks for all workers together": given * limits[0] / sum(limits),
        "a count of elements, not bytes: take x's size in bytes": given * x.nbytes / x.size,
        "x's share of this machine's memory, not of the workers' limits": given * psutil.virtual_memory().total / sum(limits),
    }
    for why, meant in wrong.items():
        if close(meant, expected, rel=1e-6):
            raise Hint(f"that looks like {why}.")
    raise Hint(
        "that is not it (a typed or rounded number is not accepted either): x's size in bytes, divided by "
        "the workers' memory limits added up (see scheduler_info)."
    )


def _rounded_as_shown(text: str, expected: float) -> bool:
    """True when a computed string such as "1.9%" is ``expected`` rounded to the digits it shows (not rounded to zero)."""
    body = text.strip().rstrip("%").strip()
    scale = 100 if text.strip().endswith("%") else 1
    digits = body.replace("-", "").replace(".", "").lstrip("0")
    decimals = len(body.split(".")[1]) if "." in body else 0
    given = as_number(body)
    if given is None or not digits or "e" in body.lower():
        return False
    return abs(given - expected * scale) <= 0.5 * 10**-decimals + 1e-12


# --- 07 · multi-GPU ETL ------------------------------------------------------------------------------


#: Task-prefix words of a count per group on the cluster (groupby size/count, value_counts' shuffle).
COUNTING = ("size", "count", "value", "shuffle")
OTHER_REDUCTIONS = ("mean", "var", "std", "sum")  # a mean also counts (count-tree): its own prefixes tell it apart


def _counted_on_cluster(ns: dict[str, Any]) -> None:
    """A :class:`Hint` unless the answer cell's computation read the Parquet AND counted there, in one go.

    The answer cell is run again (``from_cell``); outside IPython, the latest computation on the cluster is read."""
    found = from_cell(ns, ("rows_per_name",), values=("rows_per_name",))
    client = client_of(ns)
    runs = found.runs_for("rows_per_name") if found is not None else all_runs(client) if client is not None else []
    last = runs[-1]["prefixes"] if runs else set()
    if not any(p.startswith("read_parquet") for p in last):
        raise Hint(
            "your answer's computation on the cluster did not read the processed Parquet: rows_per_name was counted some "
            "other way (pandas in this notebook, or data read earlier). Read it with dask.dataframe; the workers count."
        )
    if streak(runs) >= 3:
        raise Hint("the data was counted in many separate computations, one after another: one groupby answers it in one computation.")
    counted = any(word in p for p in last for word in COUNTING) and not any(p.startswith(OTHER_REDUCTIONS) for p in last)
    if not counted:
        raise Hint(
            "your answer's computation on the cluster did not count rows: the processed data came back to this notebook (or "
            "was read here) and was counted here, on one core. Let the workers count per code; bring back only the counts."
        )


def _judge_07_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["rows_per_name"]
    require_computed(got, "rows_per_name")
    if hasattr(got, "columns"):
        raise Hint("rows_per_name is a DataFrame (a count per column): count rows per group, one number per code.")
    if not (hasattr(got, "index") and hasattr(got, "sum")):
        raise Hint(f"rows_per_name should be a Series with one count per name code; {kind(got)} is not.")
    got = host(got)
    if not got.index.is_unique:
        raise Hint(
            "rows_per_name has some codes more than once: each partition was counted on its own and the partial counts "
            "were never combined. A Dask groupby (or value_counts) on the whole frame does both steps."
        )
    codes = set(ns["lookups"]["name"].values())
    if not set(got.index) <= codes:
        if set(got.index) <= set(ns["lookups"]["name"]):
            raise Hint("the index holds the names as text: count the PROCESSED data (where names became codes), not the raw input.")
        raise Hint("the index is not the name codes: the rows were grouped by another column. Group by the column of name codes.")
    if len(got) != len(codes):
        raise Hint(f"rows_per_name has {len(got)} entries; there are {len(codes)} name codes. Group by the name column.")
    total = int(got.sum())
    if total != int(ns["N_INPUT_ROWS"]):
        raise Hint("the counts do not add up to the number of rows: count rows (not distinct values, not a column's sum).")
    _counted_on_cluster(ns)
    return f"one count per code, {len(codes)} codes, every row counted once."


def _judge_07_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    medians = ns["medians"]
    n = max(medians)
    expected = medians[min(medians)] / medians[n]
    value = ans["speed_up"]
    require_computed(value, "speed_up")
    given = None if isinstance(value, str) else as_number(value)
    if given is None:
        raise Hint(f"speed_up should be a plain number (how many times faster), computed from medians; {kind(value)} is not.")
    cell = answer_cell(ns, "speed_up")
    if cell is not None and typed_in(cell, "speed_up"):
        raise Hint("speed_up is typed into the answer cell (a number written out): compute it from the times in medians.")
    if close(given, expected, rel=1e-9):
        return f"the measured speed-up on {n} workers (ideal: {n}); efficiency is speed-up / workers."
    if close(given, 1 / expected, rel=0.005):
        raise Hint("that is the inverse: a speed-up above 1 means faster, so the time on ONE worker goes on top.")
    if close(given, expected / n, rel=0.005):
        raise Hint("that is the efficiency (speed-up per worker); the question asks for the speed-up itself.")
    if close(given, medians[min(medians)] - medians[n], rel=0.005):
        raise Hint("that is a difference of seconds; a speed-up is a ratio of times.")
    raise Hint(
        "that is not the ratio computed from medians (a typed or rounded number is not it either): use the "
        "median times in medians, one worker against the largest cluster."
    )


# --- 08 · scripts and clusters -----------------------------------------------------------------------


def _judge_08_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got = ans["script_options"]
    if hasattr(got, "__dict__") and not isinstance(got, dict) and hasattr(got, "n_workers"):
        raise Hint("script_options is the Namespace parse_args returns: hand it to options_from_args for the dict of options.")
    if not isinstance(got, dict):
        raise Hint(f"script_options should be the dict options_from_args returns; {kind(got)} is not.")
    if as_number(got.get("n_workers")) != 4:
        raise Hint(f"n_workers is {got.get('n_workers')!r}: give the number of workers the question names.")
    size_answer(got.get("memory_limit"), 8 * 2**30, "memory_limit", "Give the host memory limit exactly as the question writes it.")
    pool = as_fraction(got.get("rmm_pool_size"))
    if not close(pool, 0.5, abs_=1e-9):
        raise Hint(f"rmm_pool_size is {got.get('rmm_pool_size')!r}: the question asks for a share of each GPU (a fraction).")
    if got.get("scheduler_file") != "/shared/scheduler.json":
        raise Hint(f"scheduler_file is {got.get('scheduler_file')!r}: it should be the path of the existing scheduler file.")
    extra = sorted(set(got) - {"n_workers", "memory_limit", "rmm_pool_size", "scheduler_file"})
    if extra:
        raise Hint(f"unexpected options {extra}: give only the four flags asked for.")
    args = ns.get("args")
    if not isinstance(args, argparse.Namespace) or ns["options_from_args"](args) != got:
        raise Hint(
            "script_options was not made by the script's parser: there is no `args` from parser.parse_args in this "
            "notebook that gives this dict (typed by hand?). A script gets its options by parsing its flags: parse them "
            "into args, then turn args into the dict."
        )
    if _reparsed(ns["parser"], args) != args:
        raise Hint(
            "args was not made by parser.parse_args: parsing the flags it describes gives other values (a Namespace "
            "written by hand? the parser keeps each flag's text, e.g. a pool size as a string). Let the parser read the flags."
        )
    return "four flags, parsed by the same parser a script uses."


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


def _judge_08_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    futures, names = ans["slot_futures"], ans["slot_workers"]
    if not isinstance(futures, (list, tuple)) or not futures or not all(hasattr(f, "key") and hasattr(f, "result") for f in futures):
        raise Hint(f"slot_futures should be the futures of the tasks (what the client returns when you submit them); it is {kind(futures)}.")
    asked = resource_restrictions(list(futures))
    if any(not a for a in asked):
        raise Hint("the scheduler no longer knows these tasks: run your answer cell again, then this check.")
    if any(a["workers"] for a in asked):
        raise Hint(
            "the tasks are pinned to workers by name: the scheduler may use only those, whatever they have. Ask for what "
            "the task NEEDS instead, and let the scheduler find the workers that offer it."
        )
    wanted = [a["resources"] for a in asked]
    if not all(w == {"GPU_SLOT": 1} for w in wanted):
        have = sorted({r for w in ns["session"].client.scheduler_info(n_workers=-1)["workers"].values() for r in w.get("resources", {})})
        raise Hint(f"the tasks asked for {wanted[0] or 'no resource'}; they should each need one GPU_SLOT (the workers offer: {', '.join(have) or 'none'}).")
    if len(futures) != 4:
        raise Hint(f"there are {len(futures)} tasks; the question asks for one per number in range(4).")
    if any(hasattr(n, "key") for n in (names if isinstance(names, (list, tuple)) else [names])):
        raise Hint("slot_workers holds futures: gather their results into the notebook.")
    if not isinstance(names, (list, tuple)) or len(names) != 4:
        raise Hint(f"slot_workers should be the list of the 4 results (worker names); it is {kind(names)}.")
    fetched = gathered_since(list(futures))
    if [str(n) for n in names] != [str(f.result(timeout=60)) for f in futures]:
        raise Hint("slot_workers is not what the tasks of slot_futures returned: gather those futures.")
    if fetched < len(futures) and not dask.config.get("distributed.client.direct-to-workers", False):
        raise Hint(
            "the names in slot_workers never came from the cluster: the scheduler handed no results of those futures to "
            "this notebook (typed in?). Bring the futures' results back and store what they hold."
        )
    return "every task asked for a GPU_SLOT, and ran where one is offered."


# --- 09 · GPU-first ----------------------------------------------------------------------------------


def _judge_09_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    total = ans["total_future"]
    if is_lazy(total):
        raise Hint("total_future is lazy (a Dask object): nothing was submitted yet. The question wants the Future the client returns when it submits a task.")
    if isinstance(total, (list, tuple)) and total and all(hasattr(f, "key") for f in total):
        raise Hint(
            f"total_future is a list of {len(total)} futures, one per number: the question wants ONE future, of a task "
            "on a worker that takes those futures as its input and adds them up."
        )
    if not (hasattr(total, "result") and hasattr(total, "key")):
        raise Hint(
            f"total_future is {kind(total)}: the value is here in the notebook. The question wants the Future "
            "of a task that adds up on a worker, without calling .result() or gathering."
        )
    inputs = task_inputs(total)
    if inputs is None:
        raise Hint("the scheduler does not know that future's task any more: run your answer cell again, then this check.")
    square = funcname(ns["square"]) + "-"
    computed = [k for k in inputs if str(k).startswith(square)]
    if not inputs:
        raise Hint(
            "that task takes no futures as input: its inputs are plain values sent from this notebook (squares that came "
            "back here first), or it computes the squares itself inside one function. Make the squares as futures on "
            "the cluster first, then pass those futures to the summing task."
        )
    if len(computed) != len(inputs):
        raise Hint("that task's inputs were not made by square on the cluster (scattered from the notebook, or another computation).")
    if len(submitted_with(total, inputs)) < 2:
        raise Hint(
            "the squares and their sum went to the cluster as one graph (a lazy recipe computed at once): the question "
            "is about futures, submitted first, then handed to a second task without coming back. Start the squares "
            "with the client, as in the section above."
        )
    if len(computed) != 10:
        raise Hint(f"the sum adds {len(computed)} squares; the question asks for one per number in range(10).")
    value = as_number(total.result(timeout=60))
    if value != sum(i * i for i in range(10)):
        ranges = {sum(i * i for i in range(a, b)) for a in range(3) for b in range(8, 13)}
        if value in ranges:
            raise Hint("the task adds the squares of another range of numbers: range(10) is 0, 1, ..., 9. Check the numbers you squared.")
        raise Hint("the summing task returns something else than the sum of the ten squares: check the function it runs on its inputs.")
    return "the squares stayed on the workers and a task there added them up."


def _judge_09_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    given = as_bytes(ans["partition_bytes"]) if not is_lazy(ans["partition_bytes"]) else None
    if given is not None and close(given, 32 * 2**30, rel=0.001):
        raise Hint("that is the whole GPU; a partition takes a fraction of it (NVTabular's default is in the prompt).")
    size_answer(ans["partition_bytes"], 4 * 2**30, "partition_bytes", "Take NVTabular's fraction of the GPU's 32 GiB (GiB = 2**30 bytes).")
    return "partitions this size leave room for their copies and a shuffle's buffers."


EXERCISES = [
    Exercise(
        "06-1",
        ("col_sums_persisted", "col_sums_local"),
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute())\n",
        _judge_06_1,
        "one of them stays a Dask array held on the workers; the other comes back to the notebook.",
    ),
    Exercise(
        "06-2",
        ("fraction",),
        'workers = session.client.scheduler_info(n_workers=-1)["workers"].values()\nfraction = x.nbytes / sum(w["memory_limit"] for w in workers)\n',
        _judge_06_2,
        "x's size in bytes, and the workers' memory limits from scheduler_info.",
    ),
    Exercise(
        "07-1",
        ("rows_per_name",),
        'rows_per_name = dd.read_parquet(PROCESSED).groupby("name").size().compute()\n',
        _judge_07_1,
        "read the processed Parquet with dask.dataframe, group, count, compute.",
    ),
    Exercise("07-2", ("speed_up",), "speed_up = medians[1] / medians[max(medians)]\n", _judge_07_2, "a ratio of two entries of medians.", cluster=False),
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
    Exercise("09-2", ("partition_bytes",), 'partition_bytes = "4GiB"  # 32 GiB / 8\n', _judge_09_2, "a size: bytes as an int, or a string with a unit.", cluster=False),
]
