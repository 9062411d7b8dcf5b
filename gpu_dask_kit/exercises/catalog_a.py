"""Exercises of notebooks 00-02: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np
from dask.core import flatten
from dask.delayed import Delayed
from dask.utils import key_split
from distributed import futures_of

from .. import scheduler_view
from ..notebook.cellreads import names_read
from .chunks import check_a, chunks_merged
from .elsewhere import same
from .evidence import persisted
from .hidden import require_not_hidden
from .judging import MAX_TASKS, describe, fresh, from_cell, host, is_lazy
from .model import Exercise, Hint
from .own_code import own_trees
from .replay import _assigned, _parse, answer_cell, called_name, rounding_in, typed_in
from .sizes import size_answer
from .spelled import require_each_limit, require_not_spelled
from .svd_error import cell_tree, ran_on_cluster, rank_error, ratio_in_one_run
from .typed import numbers_read
from .values import as_bytes, as_fraction, as_number, close, unit_mixup
from .zeroed import require_contributes, require_no_chooser, require_not_worked_out

# --- 00 · start here ---------------------------------------------------------------------------------


def _lessons_n(ns: dict[str, Any], n: int, answer: str | None) -> bool:
    """True when ``n`` is the N the lesson's own cell sets (its first cell in ``In`` that assigns N, other than the
    answer cell, evaluated again here): an answer cell that writes the same N again changes nothing (learner review 42).

    >>> _lessons_n({"In": ["", "FULL = False", "N = 2_000_000 if FULL else 1_000_000", "N = 1_000_000"], "FULL": False}, 1_000_000, "N = 1_000_000")
    True
    >>> _lessons_n({"In": ["", "N = 1_000_000", "N = 1000"]}, 1000, "N = 1000")
    False
    """
    for source in (str(s) for s in ns.get("In", []) if isinstance(ns.get("In"), list)):
        tree = _parse(source) if source != answer else None
        made = _assigned(tree, "N") if tree is not None else None
        if isinstance(made, ast.Assign):
            if any(isinstance(node, (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.NamedExpr)) for node in ast.walk(made.value)):
                return False  # only a plain expression is worked out again here (no call runs twice)
            try:
                return bool(eval(compile(ast.Expression(made.value), "<N>", "eval"), dict(ns)) == n)
            except Exception:
                return False
    return False


def _judge_00_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    n = int(ns["N"])
    a, total = ans["a"], ans["total"]
    tree = _parse(answer_cell(ns, "a") or "")
    sets_n = _assigned(tree, "N") if tree is not None else None
    if sets_n is not None and not _lessons_n(ns, n, answer_cell(ns, "a")):  # (learner review 41: N = 1000, a checked against that N)
        raise Hint(
            f"your answer cell sets N itself (`{ast.unparse(sets_n).strip()}`): N is the lesson's parameter, set in the cell "
            "near the top, and the question is about that N. Take that line out, run the cell near the top that sets N "
            "again, then your answer cell."
        )
    check_a(a, n)
    made = _assigned(tree, "a") if tree is not None else None
    if made is not None and ("from_array(" in ast.unparse(made) or _data_only(a)):  # (a's own statement: total made so is told otherwise)
        raise Hint(
            "a is made from an array built here in the notebook (from_array of NumPy numbers): the notebook holds all N "
            "numbers first, and Dask only cuts them up. Let Dask make the numbers itself, chunk by chunk (as the lesson's "
            "arrays are made), so that no chunk has to exist here."
        )
    ends = [int(v) for v in host(_ends(a))]
    if ends == [0, 1, 4, (n - 1) ** 2]:  # (learner review 30: a = da.arange(...) ** 2 was told to square a's elements)
        raise Hint(
            "a holds the squares already (its first values are 0, 1, 4): a is the numbers 0 ... N-1 themselves, and total squares them and adds them up."
        )
    pieces = isinstance(total, np.ndarray) and total.dtype == object and total.size > 0 and all(is_lazy(p) for p in total.ravel())
    if pieces:  # (learner review 33: .to_delayed() was told "already computed")
        raise Hint(
            "total is a NumPy array of Delayed objects (to_delayed() splits a Dask array into one delayed piece per chunk): "
            "nothing is computed yet, but it is no longer one Dask expression. Leave total the lazy sum of the squares of a."
        )
    if not is_lazy(total):
        raise Hint(
            f"total is {describe(total)}, already computed (or typed in): leave it lazy, a Dask expression built "
            "from a. The check computes it, after looking at its task graph."
        )
    if futures_of(total) and persisted(total) is None:  # (a lazy sum of a persisted a is a recipe: fine)
        raise Hint(
            "total is persisted: its value was already computed on the workers, and the check wants the recipe. Leave "
            "it lazy (no persist, no compute): the check looks at its task graph, then computes it."
        )
    graph = total.__dask_graph__()
    if len(graph) > MAX_TASKS:
        raise Hint(f"total has {len(graph):,} tasks: build it from a, with its 10 chunks.")
    if not set(flatten(a.__dask_keys__())) <= set(graph.keys()):
        raise Hint(
            "total is not built from a's chunks as they are (its task graph does not hold a's own chunks): it is built "
            "from something else, or a was handed whole to another call (a delayed function, say) that merged its "
            "chunks away. Build total with Dask array operations on a itself."
        )
    if isinstance(total, Delayed):  # (learner review 29: the check itself failed on a Delayed's attributes)
        raise Hint(
            "total is a Delayed (made with dask.delayed), not a Dask array: the exercise builds total with Dask array "
            "operations on a (a delayed function handed the whole of a receives it as ONE array, its chunks merged, in one "
            "task). Build total from a with dask.array operations, so that each chunk gets its own tasks."
        )
    if any(key_split(k).startswith("finalize") for k in graph):  # (learner reviews 40-42: told "not a sum of squares")
        raise Hint(
            "total hands a whole to another call (a delayed function, say): Dask first merges a's chunks into ONE array "
            "in one task (the finalize step in total's graph), and that call squares and sums it in one more task, on one "
            "core. Build total with Dask array operations on a itself, so that each chunk gets its own tasks."
        )
    fresh(ns, ("a", "total"))  # (after: comparing a graph not built from a with its re-run can take long, and says less)
    if any(key_split(k).startswith("rechunk") for k in graph) and chunks_merged(total, a):
        raise Hint(
            "total merges a's chunks before the work (a rechunk in its graph): fewer, bigger chunks, so fewer tasks run "
            "side by side (one chunk: one task, on one core). Build total from a's chunks as they are."
        )
    if getattr(total, "dtype", None) is not None and total.dtype.kind == "f":  # (a**2).sum(dtype=float): as a float `a`
        raise Hint(
            f"total is summed as {total.dtype}: the sum of squares of 0 ... N-1 is far above 2**{np.finfo(total.dtype).nmant + 1}, "
            f"where {total.dtype} cannot hold every integer, so a float sum is not exact. Keep the integers' own dtype."
        )
    if getattr(total, "dtype", None) is not None and total.dtype.kind in "iu" and total.dtype.itemsize < 8:
        raise Hint(f"total is summed as {total.dtype}: the sum of squares overflows {total.dtype.itemsize * 8} bits. Keep 64-bit integers.")
    if getattr(total, "shape", ()) != ():
        raise Hint(f"total has shape {total.shape}: it should be ONE number. Square every element, then add them all up.")
    expected = (n - 1) * n * (2 * n - 1) // 6
    cell = answer_cell(ns, "total")
    require_not_hidden(cell, "total", expected, rel=1e-12)
    require_contributes(cell, "total", ns)  # (a**2).sum() * 0 + a formula: the value is the formula's
    require_no_chooser(cell, "total")  # da.maximum((a**2).sum(), a formula), da.where(..., formula, 0)
    narrow = _narrowed(cell)
    if narrow is not None:
        raise Hint(
            f"your answer cell converts a's numbers to {narrow} before squaring: squares of numbers up to N-1 do not fit "
            f"in {np.dtype(narrow).itemsize * 8} bits, and integers that overflow wrap around silently. Keep a's own "
            "64-bit integers."
        )
    part = _part_of_a(cell)
    if part is not None:  # (learner reviews 55 and 57: (a[:-1] ** 2).sum() was told about formulas and overflow)
        raise Hint(
            f"your answer cell uses {part}, a part of a: the question's numbers are all of a's elements. Square every element of a, then add them all up."
        )
    if _follows_a(total, a) is False:
        raise Hint(
            "total does not behave as a sum of squares of a's elements: the check ran it with every number in a "
            "doubled, then with every number one larger, and it did not come out as the sum of those numbers' squares "
            "(a formula on a few of a's values does not follow them; a square of a sum overflows 64-bit integers and "
            "wraps around). Square every element of a, then add them all up."
        )
    require_not_worked_out(cell, "total", ns, expected)  # a formula handed to another Dask call: the formula's too
    value = total.compute()
    exact = type(value).__module__ in ("numpy", "cupy") and "int" in str(getattr(value, "dtype", ""))
    if not (int(value) == expected if exact else close(as_number(value), expected, rel=1e-12)):
        simple = n * (n - 1) // 2
        why = "that is the plain sum; square each number first" if as_number(value) == simple else "square each element of a, then sum"
        if (int(value) if exact else as_number(value)) == expected + n * n:
            why = "a holds 1 ... N; the question's numbers are 0, 1, ..., N-1 (look at a's first and last values)"
        raise Hint(f"total computes to a different number: {why}.")
    return "a has 10 chunks, and total is a lazy sum of squares built from them."


def _ends(a: Any) -> Any:
    """a's first three values and its last one, computed (four numbers, whatever N is)."""
    import dask.array as da

    return da.concatenate([a[:3], a[-1:]]).compute()


def _data_only(a: Any) -> bool:
    """True when a's chunks are data already in the graph (made here, in the notebook), not tasks that make them on a
    worker: ``da.asarray(range(N))``, ``da.from_array(np.arange(N))`` (learner review 21)."""
    from dask.task_spec import Task

    try:
        graph = dict(a.__dask_graph__())
    except Exception:
        return False
    keys = set(flatten(a.__dask_keys__()))
    return bool(keys) and not futures_of(a) and not any(isinstance(v, Task) for v in graph.values())


def _narrowed(cell: str | None) -> str | None:
    """The integer dtype narrower than 64 bits that the answer cell converts to (``a.astype("uint32")``), or None.

    >>> _narrowed("total = (a.astype('uint32') ** 2).sum()"), _narrowed("total = (a.astype(np.int16) ** 2).sum()")
    ('uint32', 'int16')
    >>> _narrowed("total = (a.astype('int64') ** 2).sum()") is None
    True
    """
    tree = _parse(cell or "")
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and node.args):
            continue
        given = node.args[0]
        name = given.value if isinstance(given, ast.Constant) else given.attr if isinstance(given, ast.Attribute) else None
        try:
            dtype = np.dtype(name) if isinstance(name, str) else None
        except TypeError:
            dtype = None
        if dtype is not None and dtype.kind in "iu" and dtype.itemsize < 8:
            return str(dtype)
    return None


def _follows_a(total: Any, a: Any) -> bool | None:
    """Whether total, worked out with every chunk of a doubled (its graph run here, on those chunks), is 4 times what it
    is, and with every number one larger, the sum of their squares: True for a sum of squares of a's elements, False for
    a formula on some of them (``a[-1] * (a[-1] + 1) * ...``, learner review 12; ``a.sum() * (2 * a.max() + a[1]) // 3``,
    review 23); None when the graph cannot be run so."""
    import dask

    try:
        graph = dict(total.__dask_graph__())
        keys = list(flatten(a.__dask_keys__()))
        chunks = dask.compute(*[a.blocks[i] for i in range(a.numblocks[0])], scheduler="sync")
        value = dask.get(graph, total.__dask_keys__())
        doubled = dask.get({**graph, **{k: 2 * c for k, c in zip(keys, chunks, strict=True)}}, total.__dask_keys__())
        shifted = dask.get({**graph, **{k: c + 1 for k, c in zip(keys, chunks, strict=True)}}, total.__dask_keys__())
        while isinstance(value, (list, tuple)) and len(value) == 1:
            value, doubled, shifted = value[0], doubled[0], shifted[0]
        squares = sum(int(((c + 1) ** 2).sum()) for c in chunks)  # every number one larger (review 23: a closed form scales by 4 too)
        return bool(int(doubled) == 4 * int(value) and int(shifted) == squares)
    except Exception:
        return None


def _workers(ns: dict[str, Any]) -> list[dict[str, Any]]:
    return list(scheduler_view.workers(ns["session"].client).values())


def _judge_00_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import psutil

    limits = [int(w["memory_limit"]) for w in _workers(ns)]
    if isinstance(ans["cluster_memory"], (dict, list, tuple, set)):  # (learner review 30: told it "changes from one run")
        raise Hint(
            f"cluster_memory is {describe(ans['cluster_memory'])}: the question asks for one size, the memory of all the "
            "workers together (a number of bytes, or a size string). Each worker reports its memory_limit in "
            "session.client.scheduler_info(n_workers=-1)['workers']: add them up."
        )
    fresh(ns, ("cluster_memory",))
    expected, value = sum(limits), ans["cluster_memory"]
    look = "Each worker reports its memory_limit in session.client.scheduler_info(n_workers=-1)['workers']: add them up."
    given = as_bytes_or_none(value)
    if len(limits) > 1 and given is not None and close(given, limits[0], rel=0.001):
        raise Hint(f"that is ONE worker's limit; the cluster has {len(limits)} workers. The question asks for all of them together.")
    if given is not None and close(given, psutil.virtual_memory().total, rel=0.01) and not close(given, expected, rel=0.01):
        raise Hint(f"that is this machine's memory, not what the workers may use. {look}")
    machines = [k * psutil.virtual_memory().total for k in range(2, 17)]  # each worker reported the machine's memory
    if given is not None and any(close(given, m, rel=0.01) for m in machines) and not close(given, expected, rel=0.01):
        raise Hint(f"that is this machine's memory counted once per worker (as if each worker could use all of it), not what the workers may use. {look}")
    cell = answer_cell(ns, "cluster_memory")
    require_not_spelled(cell, "cluster_memory")
    own = own_trees(cell, ns, "00-2")  # the learner's own functions the cell calls: read once, by every check below
    numbers_read(cell, None, limits, name="cluster_memory", helpers=own)
    require_each_limit(cell, "cluster_memory", limits, helpers=own)
    _one_value_per_worker(cell, own)
    require_contributes(cell, "cluster_memory", ns)  # * (len(info) // 2): a typed worker count in a factor of 1
    code = "\n".join([cell or "", *(ast.unparse(tree) for _, tree in own)])
    if _run_function_reads_no_limit(cell, own):
        raise Hint(
            "the function your answer cell hands to client.run never asks its worker for the worker's limit (nothing in it "
            "reads memory_limit): what it returns is a value from this notebook, counted once per worker. Let it read "
            f"the worker's own limit (dask_worker.memory_manager.memory_limit). {look}"
        )
    if "get_worker" in code:
        raise Hint(
            "your answer cell reads the limit inside tasks (get_worker() in a task): which worker runs each task is the "
            "scheduler's choice (two tasks may well run on the same worker, and a worker may run none), so that does "
            f"not read each worker's limit once. {look}"
        )
    if "worker_spec" in code:  # (learner reviews 25-26: the start request summed, not the limits the workers report)
        raise Hint(
            "your answer cell reads the cluster's worker_spec: what the cluster was ASKED to start each worker with, not "
            f"the limit each running worker reports (a worker may have joined some other way, or been started with other options). {look}"
        )
    if cell is not None and not _asks_the_cluster(cell, ns):
        raise Hint(
            "your answer cell never asks the cluster (it reads no session or client; an object of your own that looks like one "
            "is not the cluster): the number comes from "
            f"somewhere else (a file, a setting, a value kept from before), not from the workers. {look}"
        )
    size_answer(value, expected, "cluster_memory", look)
    uneven = _with_uneven_limits(cell, code, ns, limits) if cell is not None else None
    again = as_bytes_or_none(uneven[0]) if uneven is not None else None
    each = {*limits, limits[0] + 2**30, phantom_limit(limits)} if limits else set()
    # within 8%: an answer rounded to whole GiB (f"{...:.0f} GiB") is rounded again; the wrong sums are 1/6 away or more
    unchanged = uneven is not None and (same(uneven[0], value) or close(again or 0, given or 0, rel=0.08))
    counted = uneven is not None and any(close(again or 0, (len(limits) + 1) * one, rel=0.08) for one in each)
    if unchanged or counted:
        gave = "the same number" if unchanged else "one worker's limit times the number of workers"
        raise Hint(
            "your answer does not add up each worker's own limit: the check ran your answer cell again with the scheduler "
            f"reporting other, unequal limits, and it gave {gave}. It counts one limit per worker (or "
            f"reads a limit worked out before), which holds only while every worker has the same limit. {look}"
        )
    if uneven is not None and not close(again or 0, uneven[1], rel=0.08):
        raise Hint(
            "your answer does not add up each worker's own limit: the check ran your answer cell again with the scheduler "
            "reporting three workers with unequal limits, and it did not give their sum. It is right for these workers "
            f"only. {look}"
        )
    return f"that is how much host memory the {len(limits)} workers may use together."


#: The address of the worker the unequal-limits re-run adds to what the scheduler reports (see :class:`_UnevenClient`).
PHANTOM = "tcp://unequal-limits-check:1"


def phantom_limit(limits: list[int]) -> int:
    """The added worker's limit: 4 times the largest, and some bytes, so that the three limits' sum is at least 1/6 away
    from one limit times three, from the two largest and from the sum before (an answer rounded to whole GiB still tells)."""
    return 4 * max(limits, default=2**30) + 12_345


class _UnevenClient:
    """A client whose ``scheduler_info`` reports unequal limits: one GiB more for the first worker, and one worker more
    (:func:`phantom_limit`), the cluster's totals to match. Two workers' ``max + min`` is their sum; three unequal ones' is not."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def scheduler_info(self, *args: Any, **kwargs: Any) -> Any:
        import copy

        info = copy.deepcopy(self._client.scheduler_info(*args, **kwargs))
        workers = info.get("workers", {})
        extra = phantom_limit([int(w.get("memory_limit") or 0) for w in workers.values()])
        for worker in list(workers.values())[:1]:
            worker["memory_limit"] = int(worker.get("memory_limit") or 0) + 2**30
            workers[PHANTOM] = {**copy.deepcopy(worker), "memory_limit": extra, "name": "unequal-limits-check", "id": "unequal-limits-check"}
            info["total_memory"] = int(info.get("total_memory") or 0) + 2**30 + extra
            info["n_workers"] = int(info.get("n_workers") or 0) + 1
            info["total_threads"] = int(info.get("total_threads") or 0) + int(worker.get("nthreads") or 0)
        return info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _UnevenSession:
    """The notebook's session, with :class:`_UnevenClient` as its client."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.client = _UnevenClient(session.client)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _with_uneven_limits(cell: str, code: str, ns: dict[str, Any], limits: list[int]) -> Any:
    """What 00-2's answer cell gives when run again with the scheduler reporting unequal limits (:class:`_UnevenClient`:
    one worker's one GiB more, and a third worker): an answer that adds up each worker's limit gives their sum, which
    counting one limit per worker (learner reviews 20-21: ``sum(limit for _ in info)``, ``reduce(...)``,
    ``np.full(len(info), limit).sum()``) or ``max + min`` of two (review 23) does not. Only for a cell that reaches the
    scheduler through the notebook's ``session`` or ``client`` (what the re-run can change; ``code``: the cell's and
    its helpers' code). None when it cannot be run again; else (the value, the sum it should be)."""
    from .elsewhere import value_when

    if any(call in cell for call in ("current_session(", "get_client(", "default_client(", "Client(")):
        return None
    if "scheduler_info" not in code or any(call in code for call in (".run(", "run_on_scheduler(")):
        return None  # (the re-run changes what scheduler_info reports only: client.run asks the workers; review 22)
    changes: dict[str, Any] = {}
    if ns.get("session") is not None and hasattr(ns["session"], "client"):
        changes["session"] = _UnevenSession(ns["session"])
    if ns.get("client") is not None and hasattr(ns["client"], "scheduler_info"):
        changes["client"] = _UnevenClient(ns["client"])
    again = value_when(ns, "cluster_memory", changes) if changes else Ellipsis
    return None if again is Ellipsis else (again, sum(limits) + 2**30 + phantom_limit(limits))


def _trees(cell: str | None, own: list[tuple[str, ast.AST]]) -> list[ast.AST]:
    """The answer cell's tree (when it parses) and those of the learner's own functions it calls (``own``)."""
    tree = _parse(cell or "")
    return ([tree] if tree is not None else []) + [code for _, code in own]


def _one_value_per_worker(cell: str | None, own: list[tuple[str, ast.AST]]) -> None:
    """A :class:`Hint` when the answer cell (or a function of the learner's own it calls) adds up a value that does not
    read the loop's variable, once per worker: ``sum(limit for _ in workers)`` (one worker's limit, counted as many times
    as there are workers: the product ``limit * len(workers)`` written as a loop; learner review 20)."""
    for node in (n for t in _trees(cell, own) for n in ast.walk(t)):
        if not isinstance(node, (ast.GeneratorExp, ast.ListComp)):
            continue
        loop = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        read = {n.id for n in ast.walk(node.elt) if isinstance(n, ast.Name)}
        if loop and not loop & read and any(isinstance(n, (ast.Name, ast.Subscript, ast.Attribute)) for n in ast.walk(node.elt)):
            raise Hint(
                f"your answer cell adds up the same value once per worker ({ast.unparse(node.elt)}, whatever the loop's "
                "worker is): that is one worker's limit times the number of workers, right only while every worker has "
                "the same limit. Add up the limit the scheduler reports for EACH worker."
            )


def _run_function_reads_no_limit(cell: str | None, helpers: list[tuple[str, ast.AST]]) -> bool:
    """True when a function the answer cell hands to ``client.run`` (a lambda, or a function of the learner's own) reads
    no memory limit of its worker (``client.run(lambda dask_worker: limit)``: learner review 23)."""
    tree = _parse(cell or "")
    own = dict(helpers)
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run" and node.args):
            continue
        func = node.args[0]
        text = ast.unparse(func) if isinstance(func, ast.Lambda) else ast.unparse(own[func.id]) if isinstance(func, ast.Name) and func.id in own else None
        if text is not None and not any(word in text for word in ("memory_limit", "memory_manager")):
            return True
    return False


def _asks_the_cluster(cell: str, ns: dict[str, Any]) -> bool:
    """True when the answer cell reads a session or a client, or gets one (``current_session()``, ``get_client()``).

    >>> _asks_the_cluster("m = int(open('total.txt').read())", {}), _asks_the_cluster("m = get_client().scheduler_info()", {})
    (False, True)
    """
    if any(call in cell for call in ("current_session(", "get_client(", "default_client(")):
        return True
    return any(_a_cluster(ns.get(n)) for n in names_read(cell, ns))


def _a_cluster(value: Any) -> bool:
    """True for a Dask client or cluster, or an object holding a client (the kit's session): not an object of the
    learner's own that only has a ``scheduler_info`` (learner review 18: a hand-made ``Fake`` with typed limits).

    >>> _a_cluster(type("Fake", (), {"scheduler_info": lambda self: {}})())
    False
    """
    from distributed import Client
    from distributed.deploy.cluster import Cluster

    try:
        held = getattr(value, "client", None)
    except Exception:  # a closed session's client
        held = None
    return isinstance(value, (Client, Cluster)) or isinstance(held, Client)


# --- 01 · GPU cluster set-up -------------------------------------------------------------------------


def _judge_01_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    from .. import ClusterOptions

    opts = ans["workshop_options"]
    fresh(ns, ("workshop_options",))
    if "start_cluster(" in (answer_cell(ns, "workshop_options") or ""):
        raise Hint(
            "your answer cell starts a cluster (start_cluster), which replaces the lesson's one, to read its options back: "
            "the question asks for the options alone. kit.ClusterOptions(...) checks them and starts nothing."
        )
    if not isinstance(opts, ClusterOptions) and isinstance(opts, dict) and "ClusterOptions(" in (answer_cell(ns, "workshop_options") or ""):
        raise Hint(  # (learner review 57: `kit.ClusterOptions(...).to_dict()` was told "build it with kit.ClusterOptions")
            "workshop_options is a dict made from a ClusterOptions (to_dict() or the like): the question asks for the "
            "ClusterOptions itself, the object the kit checks and starts a cluster from."
        )
    if not isinstance(opts, ClusterOptions):
        raise Hint(f"workshop_options is {describe(opts)}: build it with kit.ClusterOptions(...), which checks each option by name.")
    if opts.device == "cpu":
        raise Hint(
            "workshop_options asks for CPU workers (device='cpu'): on the GPU node the prompt describes, the workers would "
            "then leave the GPUs unused, and the GPU options (the spilling limit, the allocator) only act on GPU workers. "
            "Where to look: leave device out ('auto' picks GPU workers where there are GPUs), or ask for GPU workers."
        )
    limit = opts.device_memory_limit
    pool = as_fraction(opts.rmm_pool_size) if opts.rmm_pool_size is not None else None
    if pool is not None and pool <= 1 and close(pool, 0.6, abs_=1e-9) and not close(as_fraction(limit), 0.6, abs_=1e-9):
        raise Hint(
            "the share went into rmm_pool_size: a pool is memory RMM reserves up front for allocations, not the point "
            "where a worker starts moving data to host memory. That is another option of ClusterOptions (see help)."
        )
    fraction = as_fraction(limit)
    host_share = as_fraction(opts.memory_limit) if isinstance(opts.memory_limit, (int, float, str)) else None
    if not close(fraction if fraction is not None else -1.0, 0.6, abs_=1e-9) and host_share is not None and close(host_share, 0.6, abs_=1e-9):
        raise Hint(
            "that share went into memory_limit, which sets each worker's HOST (CPU) memory limit. The point where a GPU "
            "worker starts moving data off the GPU is another option of ClusterOptions (see help)."
        )
    if fraction is None or fraction > 1:
        raise Hint(
            f"device_memory_limit should be a SHARE of each GPU's memory: {limit!r} is an amount (dask-cuda reads an int as "
            "bytes, a string with a unit as a size), or no limit at all. dask-cuda's LocalCUDACluster reads a float between "
            "0 and 1 as a share of each GPU's total memory."
        )
    if not close(fraction, 0.6, abs_=1e-9):
        raise Hint("device_memory_limit is a share of the GPU, but not the share the question names: read it again.")
    if opts.rmm_pool_size is not None:
        raise Hint("there is a pool size: the question asks for the async allocator and NO pool (dask-cuda warns about the pair).")
    if opts.rmm_async is not True:
        raise Hint("the allocator is not the one asked for: look for the ClusterOptions flag that turns on RMM's asynchronous allocator.")
    if "dashboard_address" not in (answer_cell(ns, "workshop_options") or "dashboard_address"):  # (learner review 40)
        raise Hint(
            "your answer leaves dashboard_address out: the kit happens to default to a free port, but LocalCUDACluster "
            "itself (and a plain distributed cluster) defaults to port 8787. The question asks you to choose the port: "
            "set it."
        )
    if opts.dashboard_address is None:  # (learner review 37: False was named "None", the value the options store)
        raise Hint(
            "dashboard_address turns the dashboard off (None or False): the question wants it on a port; which port number asks the system for any free one?"
        )
    if not str(opts.dashboard_address).endswith(":0"):
        raise Hint(f"dashboard_address is {opts.dashboard_address!r}, a fixed port: which port number asks the system for any free one?")
    # threads_per_worker=1 is LocalCUDACluster's own default (one thread per GPU worker): not a choice (learner review 26)
    pinned = [
        f"{n}={getattr(opts, n)!r}"
        for n in ("CUDA_VISIBLE_DEVICES", "n_workers", "threads_per_worker")
        if getattr(opts, n) is not None and not (n == "threads_per_worker" and getattr(opts, n) == 1)
    ]
    if pinned:
        raise Hint(
            f"workshop_options also fixes {' and '.join(pinned)}: that ties the cluster to some GPUs (or a worker or thread "
            "count) you chose, and the question asks for options for the whole node, whatever GPUs it has. Left out, "
            "LocalCUDACluster starts one worker on each GPU it finds: keep only what the question asks for."
        )
    if opts.enable_cudf_spill:  # (learner review 26: a second spilling mechanism beside the device limit was "Correct")
        raise Hint(
            "workshop_options also turns on enable_cudf_spill, cuDF's own spilling: a second mechanism beside the "
            "worker's device_memory_limit, which the question does not ask for (notebook 09 shows why the two are not "
            "mixed). Keep only what the question asks for."
        )
    if opts.memory_limit != "auto":  # (learner review 25: memory_limit=0.6 beside the device limit was "Correct")
        raise Hint(
            f"workshop_options also sets memory_limit={opts.memory_limit!r}: that is each worker's HOST (CPU) memory "
            "limit, not the GPU's, and the question does not ask to change it. The GPU's spilling point is "
            "device_memory_limit alone: keep only what the question asks for."
        )
    if opts.protocol != "tcp":
        raise Hint(
            f"workshop_options also asks for protocol={opts.protocol!r}: UCX needs the distributed-ucxx package and a "
            "fast interconnect (NVLink, InfiniBand) to pay off, which the question does not say this node has. "
            "Keep only what the question asks for."
        )
    percent = _percent_given(answer_cell(ns, "workshop_options"), "device_memory_limit")
    note = " (ClusterOptions turned your percent string into the float dask-cuda reads; LocalCUDACluster itself does not read a '%' string)" if percent else ""
    bare_zero = re.search(r"dashboard_address\s*=\s*0\b", answer_cell(ns, "workshop_options") or "") is not None
    port = (  # (learner review 39: distributed itself reads a bare 0 as "no address given" and takes 8787)
        " (the kit reads dashboard_address=0 as a free port; distributed's own clusters read a bare 0 as no address and take 8787: write ':0' there)"
        if bare_zero
        else ""
    )
    return f"spill above a share of each GPU{note}, the async allocator without a pool, the dashboard on a free port{port}."


def _percent_given(cell: str | None, option: str) -> bool:
    """True when the answer cell passes ``option`` as a percent string (``device_memory_limit="60%"``)."""
    try:
        tree = ast.parse(cell or "")
    except SyntaxError:
        return False
    given = (k.value for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == option)
    return any(isinstance(v, ast.Constant) and isinstance(v.value, str) and "%" in v.value for v in given)


def _judge_01_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    fresh(ns, ("spill_at",))
    expected = int(0.6 * 16 * 2**30)
    if isinstance(ans["spill_at"], str) and unit_mixup(as_bytes(ans["spill_at"]), expected):
        raise Hint(
            "spill_at is written in a decimal unit (MB or GB: powers of 1000 bytes), while the GPU size in the prompt is in "
            "a binary unit (GiB: powers of 1024 bytes): the two differ by about 7%. Where to look: work in the prompt's "
            "unit, or give the bytes."
        )
    size_answer(
        ans["spill_at"],
        expected,
        "spill_at",
        "device_memory_limit is a share of each GPU's memory: apply it to the GPU size the prompt gives, in its unit; answer in bytes or with a unit.",
    )
    return "the worker starts moving data from GPU to host memory above that many bytes."


# --- 02 · arrays and SVD -----------------------------------------------------------------------------


def _norm_per_row_or_column(cell: str | None) -> bool:
    """True when the cell calls a norm with an ``axis``: ``norm(x - approx, axis=1)``."""
    tree = _parse(cell) if cell is not None else None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)] if tree is not None else []
    return any(called_name(c.func) == "norm" and any(k.arg == "axis" for k in c.keywords) for c in calls)


def _part_of_a(cell: str | None) -> str | None:
    """The first slice of ``a`` in the cell that leaves elements out (``a[:-1]``, ``a[1:]``, ``a[::2]``), as written.

    >>> _part_of_a("total = (a[:-1] ** 2).sum()"), _part_of_a("total = (a[:] ** 2).sum()"), _part_of_a("t = (a**2).sum()")
    ('a[:-1]', None, None)
    """
    tree = _parse(cell) if cell is not None else None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "a" and isinstance(node.slice, ast.Slice):
            if any(bound is not None for bound in (node.slice.lower, node.slice.upper, node.slice.step)):
                return ast.unparse(node)
    return None


def _judge_02_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import numpy as np

    value = ans["rank10_error"]
    if is_lazy(value):
        raise Hint("rank10_error is still lazy (a Dask object): compute it and store the number.")
    if isinstance(value, str):
        raise Hint("rank10_error is a str (text): the question asks for the number itself, a plain Python float.")
    if type(value).__module__.startswith("cupy"):  # (H100, fourteenth session: `.compute()` on a GPU session)
        raise Hint(
            "rank10_error is a CuPy array holding one number, in GPU memory (what .compute() gives on a GPU session), not "
            "a plain Python float: float(...) of it brings the number to this notebook."
        )
    number = as_number(value)
    if number is None:
        raise Hint(f"rank10_error should be one number (a float); {describe(value)} is not.")
    blockwise = ".blocks[" in (answer_cell(ns, "rank10_error") or "") or ".partitions[" in (answer_cell(ns, "rank10_error") or "")
    if blockwise and re.search(r"\bfor\b", answer_cell(ns, "rank10_error") or ""):
        raise Hint(
            "your answer cell goes through x block by block (.blocks[...] in a loop), one computation per block, and "
            "puts the pieces together here: Dask does that itself, on every block at once, when it is handed the whole "
            "expression. Write the ratio for the whole x and the whole approximation, and compute it once."
        )
    if blockwise:
        raise Hint(
            "your answer cell computes the error from part of x (one block, or a few): the question is about the whole "
            "matrix. Use x and the whole approximation."
        )
    if "svd_compressed" in (answer_cell(ns, "rank10_error") or ""):  # before the re-run: a randomized SVD differs each run
        raise Hint(
            "svd_compressed is a randomized, approximate SVD: its factors are not the exact ones this lesson computed, so "
            "its error is another number (and, unless seeded, another one each run). Build approx from the lesson's u, s and v."
        )
    _matrix_brought_here(answer_cell(ns, "rank10_error"), ns)
    found = from_cell(ns, ("rank10_error",), values=("rank10_error",))
    require_contributes(found.cell if found is not None else answer_cell(ns, "rank10_error"), "rank10_error", ns)
    require_no_chooser(found.cell if found is not None else answer_cell(ns, "rank10_error"), "rank10_error")
    note = None
    if found is None:  # not in IPython (no input history): the scheduler's latest computation
        ran_on_cluster(ns)
    else:
        note = ratio_in_one_run(found, ns)
    s = np.asarray(ns["s_host"], dtype=float)
    # the shortcut written out in NumPy after a Dask run (which it overwrites), or times D / D: worked out here
    require_not_worked_out(found.cell if found is not None else answer_cell(ns, "rank10_error"), "rank10_error", ns, rank_error(s, 10), whole=True)
    expected = rank_error(s, 10)  # what theory says (Eckart-Young)
    asked = rounding_in(answer_cell(ns, "rank10_error"))
    if close(number, expected, rel=1e-6, abs_=1e-6) and asked is not None and round(number, asked) == number:  # (review 26)
        raise Hint(
            f"that is the relative error of the rank-10 approximation rounded to {asked} decimals: a rounded number is not accepted. Store the computed value."
        )
    # 1e-9: theory and the two norms agree to float64 precision (a GPU too); a constant added (+ 1e-6) is no rounding
    if close(number, expected, rel=1e-9, abs_=1e-12):  # (learner review 30)
        made = _parse(answer_cell(ns, "rank10_error") or "")
        read = _read_making(made, {"rank10_error"}, ns) if made is not None else names_read(answer_cell(ns, "rank10_error") or "", ns)
        shape = getattr(ns.get("x"), "shape", None)
        approximated = bool(read & {"u", "v"}) or any(n != "x" and is_lazy(ns.get(n)) and getattr(ns.get(n), "shape", None) == shape for n in read)
        if not approximated and "s" in read:  # (review 22: sqrt((s[10:] ** 2).sum()) / norm(x): the theory's numerator)
            built = made is not None and any(names_read(ast.unparse(st), ns) & {"u", "v"} for st in made.body)
            how = "builds an approximation, but rank10_error does not use it" if built else "never builds the approximation (it reads neither u nor v)"
            raise Hint(
                f"your answer cell {how}: the numerator comes from the "
                "singular values (the theory's shortcut), not from norm(x - approx) computed from the matrices. Build "
                "approx from u, s and v, and compute norm(x - approx) / norm(x)."
            )
        if made is not None and _divides_by_the_singular_values(made, ns):
            raise Hint(
                "your answer cell divides by a norm of the singular values: by theory it equals norm(x), but that is the "
                "shortcut, not the norm Dask computes from x. Divide by da.linalg.norm(x)."
            )
        in_approx = made is not None and any(
            {"s_host"} <= r and r & {"u", "v"} for r in (names_read(ast.unparse(n), ns) for n in ast.walk(made) if isinstance(n, ast.BinOp))
        )
        if "s_host" in read and in_approx:  # (review 24: u[:, :10] * s_host[:10]; both norms by Dask)
            raise Hint(
                "your answer cell builds the approximation with s_host, the NumPy copy of the singular values in this "
                "notebook, beside u and v, which are Dask arrays on the workers: on a GPU their blocks are CuPy arrays, "
                "and CuPy does not mix with NumPy arrays (it raises a TypeError). Use s, the singular values on the workers."
            )
        if "s_host" in read:  # (review 21: norm(x) from s_host)
            raise Hint(
                "your answer cell reads s_host, the singular values already in this notebook: what it works out from "
                "them (norm(x) as the root of their sum of squares, say) is the theory's shortcut done here, not the "
                "norms Dask computes from x. Compute both norms with Dask, from x and the approximation."
            )
        said = "the rank-10 approximation's relative error, as theory predicts from the singular values."
        return f"{said} {note}" if note else said
    ranks = [k for k in range(1, len(s)) if k != 10 and close(number, rank_error(s, k), rel=1e-6, abs_=1e-6)]
    if ranks:
        raise Hint(f"that is the error of a rank-{ranks[0]} approximation: count the singular values you keep (the first 10).")
    if close(number, expected**2, rel=1e-6, abs_=1e-6):
        raise Hint("that is the square of the relative error: a norm is the square ROOT of the sum of squares.")
    if close(number, 1 - expected, rel=1e-6, abs_=1e-6):
        raise Hint("that is 1 minus the error: the question asks for norm(x - approx) / norm(x) itself.")
    if close(number, 100 * expected, rel=1e-6):  # (learner review 30: told "above 1: check the slices")
        raise Hint("that is the relative error times 100 (a percentage written as a plain number): the question asks for the ratio itself.")
    kept, whole = float(np.sqrt((s[:10] ** 2).sum())), float(np.sqrt((s**2).sum()))  # norm(approx), norm(x): by theory
    if close(number, expected * whole / kept, rel=1e-6, abs_=1e-9):  # (learner review 29)
        raise Hint("that divides norm(x - approx) by the norm of approx: a relative error is relative to x, the matrix approximated. Divide by norm(x).")
    if close(number, 1 - kept / whole, rel=1e-6, abs_=1e-9):
        raise Hint(
            "that is 1 minus norm(approx) / norm(x): a difference of two norms, not the norm of the difference. "
            "Compute norm(x - approx), then divide it by norm(x)."
        )
    if _norm_per_row_or_column(answer_cell(ns, "rank10_error")):  # (learner review 56: told "part of the matrix")
        raise Hint(
            "your answer cell takes norms along an axis (per row or per column) and combines those: the relative error is "
            "ONE ratio, of the norms of the whole matrices x - approx and x (da.linalg.norm's default for a matrix)."
        )
    digits = next((d for d in range(1, 8) if number == round(expected, d)), None)
    rounds = rounding_in(answer_cell(ns, "rank10_error")) is not None
    if digits is None and not rounds and close(number, expected, rel=1e-4):  # (learner review 30: + 1e-6 passed)
        raise Hint(
            "that is close to the rank-10 approximation's relative error, but off in the later digits: another formula "
            "(a norm per row, another norm) or something added after the ratio. Compute norm(x - approx) / norm(x), "
            "both with da.linalg.norm's default norm for a matrix, and store it as computed."
        )
    if digits is None and not rounds and close(number, expected, rel=1e-3):  # (review 21: half the rows, told "rounded")
        raise Hint(
            "that is close to the rank-10 approximation's relative error, but not it: computed on part of the matrix, "
            "or with a slightly different approximation? Use the whole x and the whole approximation."
        )
    if digits is not None or close(number, expected, rel=1e-3):
        some = f"rounded to {digits} decimals" if digits is not None else "to a few digits only"
        raise Hint(f"that is the relative error of the rank-10 approximation {some}: a rounded number is not accepted. Store the computed value.")
    divides = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in ast.walk(cell_tree(found, ns)))
    if close(number, 1.0, rel=1e-9) and divides:  # (learner reviews 24-25: norm(r) / norm(r) was told "check the slices")
        raise Hint("that is exactly 1: the numerator and the denominator are the same norm. The relative error divides norm(x - approx) by norm(x).")
    if number > 1 and not divides:
        raise Hint("a relative error above 1 means the difference is larger than x: divide norm(x - approx) by norm(x).")
    if number > 1:
        raise Hint(
            "that relative error is above 1: norm(x - approx) is larger than norm(x), so approx is not close to x at all. "
            "Check the slices of u, s and v you keep (the first 10 columns of u, values of s, rows of v)."
        )
    if "ord=" in (answer_cell(ns, "rank10_error") or ""):
        raise Hint(
            "that is a relative error in another norm (ord= picks which one): the question's is the default norm of "
            "da.linalg.norm for a matrix (Frobenius: the square root of the sum of squares). Leave ord= out."
        )
    raise Hint(
        "that is not the relative error of the rank-10 approximation: check the formula (norm(x - approx) / norm(x), "
        "both with da.linalg.norm's default norm for a matrix) and the slices of u, s and v you keep (the first 10 "
        "columns of u, values of s, rows of v)."
    )


def _read_making(tree: ast.Module, names: set[str], ns: dict[str, Any]) -> set[str]:
    """The names read by the statements that make ``names``, followed back through the names they read (only
    assignments make a name: ``approx = u @ da.diag(s) @ v`` does not make ``da``, which the replay's dependency reading would
    take for a change to ``da``; learner review 24)."""
    needed, read = set(names), set()
    for statement in reversed(tree.body):
        stores = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if stores & needed:
            got = names_read(ast.unparse(statement), ns)
            read |= got
            needed |= got
    return read


def _divides_by_the_singular_values(tree: ast.Module, ns: dict[str, Any]) -> bool:
    """True when a division in the answer cell has a divisor made from ``s`` and not from ``x`` (``norm(x - approx) /
    da.linalg.norm(s)``, or a name made so: the theory's norm(x); learner review 24)."""
    for node in ast.walk(tree):
        divisor = node.right if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) else None
        divisor = node.value if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div) else divisor
        if divisor is None:
            continue
        read = names_read(ast.unparse(divisor), ns)
        read |= _read_making(tree, read - {"s", "x"}, ns)
        if "s" in read and "x" not in read:
            return True
    return False


def _matrix_brought_here(cell: str | None, ns: dict[str, Any]) -> None:
    """A :class:`Hint` when the answer cell (or a function of the learner's own that it calls) brings a Dask array the
    size of x (x, approx, x - approx, u of a tall matrix) whole to the notebook: ``x.compute()``, ``dask.compute(x)``,
    ``np.asarray(x)``, ``to_host(x)`` (learner review 19: ``xh = x.compute()``, then ``da.linalg.norm(xh - approx)``
    sends it back inside the graph; ``da.from_array(x.compute())``)."""
    trees = _trees(cell, own_trees(cell, ns, "02-1"))
    shape = getattr(ns.get("x"), "shape", ())

    def large(node: ast.AST) -> str | None:
        """The expression's text when it is a lazy array of x's shape (evaluated when it calls nothing: lazy, cheap)."""
        if isinstance(node, ast.Name):
            value = ns.get(node.id)
        elif isinstance(node, ast.expr) and not any(isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr)) for n in ast.walk(node)):
            try:
                value = eval(compile(ast.Expression(node), "<answer>", "eval"), {"__builtins__": {}}, dict(ns))  # no calls
            except Exception:
                return None
        else:
            return None
        return ast.unparse(node) if is_lazy(value) and getattr(value, "shape", None) == shape else None

    for node in (n for t in trees for n in ast.walk(t)):
        brought = _blockwise_here(node, large)
        if brought:
            raise Hint(
                f"your answer cell brings {brought} to this notebook block by block (each block computed and kept here): "
                "every value of that matrix comes here, and NumPy works on it on one core. Keep the matrices on the "
                "workers: build the whole expression with Dask and compute only the final number."
            )
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called == "compute" and isinstance(func, ast.Attribute):
            brought = large(func.value) or next((n for n in map(large, node.args) if n), None)
        elif called in ("asarray", "array", "to_host") and node.args:
            brought = large(node.args[0])
        if brought:
            raise Hint(
                f"your answer cell brings {brought} whole to this notebook ({ast.unparse(node)}): every value of that "
                "matrix comes here, and used in a Dask expression again it goes back to the workers inside the task "
                "graph (the 'Sending large graph' warning). Keep the matrices on the workers: build the whole "
                "expression with Dask and compute only the final number."
            )


def _blockwise_here(node: ast.AST, large: Any) -> str | None:
    """The matrix a comprehension brings here block by block (``[b.compute() for b in (x - approx).blocks]``,
    ``dask.compute(*[b for b in m.blocks])``: each block itself, not a reduction of it; learner review 20), or None."""
    if not isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return None
    for generator in node.generators:
        source = generator.iter
        while isinstance(source, ast.Call) and (
            (isinstance(source.func, ast.Attribute) and source.func.attr in ("ravel", "flatten", "to_delayed"))
            or (isinstance(source.func, ast.Name) and source.func.id in ("list", "tuple", "iter") and source.args)
        ):
            source = source.func.value if isinstance(source.func, ast.Attribute) else source.args[0]
        if isinstance(source, ast.Attribute) and source.attr == "blocks":
            source = source.value
        elif not (isinstance(generator.iter, ast.Call) and "to_delayed" in ast.unparse(generator.iter)):
            continue
        matrix = large(source)
        loop = {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
        elt = node.elt
        itself = isinstance(elt, ast.Name) and elt.id in loop
        fetched = False
        if isinstance(elt, ast.Call):
            func = elt.func
            computes = isinstance(func, ast.Attribute) and func.attr == "compute" and isinstance(func.value, ast.Name) and func.value.id in loop
            first = elt.args[0] if elt.args else None
            converts = isinstance(first, ast.Name) and first.id in loop and ast.unparse(func).split(".")[-1] in ("asarray", "array", "to_host")
            fetched = computes or converts
        if matrix and (itself or fetched):
            return matrix
    return None


def _judge_02_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import dask

    fresh(ns, ("spill_threshold",))
    limit = 600 * 2**20
    fractions = {name: float(dask.config.get(f"distributed.worker.memory.{name}")) for name in ("target", "spill", "pause", "terminate")}
    given = as_bytes_or_none(ans["spill_threshold"])
    if given is not None and close(given, limit, rel=0.001):
        raise Hint("that is the whole memory limit; a CPU worker starts writing to disk earlier, at a fraction of it.")
    for name, fraction in fractions.items():
        if name != "target" and close(given, fraction * limit, rel=0.001):
            raise Hint(f"that is the '{name}' threshold (distributed.worker.memory.{name}); the question asks about 'target'.")
    size_answer(
        ans["spill_threshold"],
        int(fractions["target"] * limit),
        "spill_threshold",
        "Read the fraction from dask.config (distributed.worker.memory.target) and take it of the 600 MiB limit.",
    )
    note = _target_read(answer_cell(ns, "spill_threshold"), fractions["target"])
    return f"the 'target' fraction of the 600 MiB limit: above it a CPU worker writes its least recently used data to disk.{note}"


def _target_read(cell: str | None, target: float) -> str:
    """A note for a right size reached without reading the fraction from dask.config: the size typed in, or the
    target fraction written out (learner review 9). Accepted (the value is the idea here: target times the limit),
    but said, because code that reads the setting stays right when the configuration changes."""
    if cell is None:
        return ""
    tree = _parse(cell)
    written = tree is not None and any(
        isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool) and close(float(n.value), target, rel=1e-9)
        for n in ast.walk(tree)
    )
    if typed_in(cell, "spill_threshold") or (written and "config" not in cell and "target" not in cell):
        return (
            " (Worked out by hand, which is fine for this question; in code, read the fraction with dask.config.get, "
            "so the number follows the settings the workers really use.)"
        )
    return ""


def as_bytes_or_none(value: Any) -> int | None:
    """Bytes from an answer, or None (also for a lazy Dask object, which is not read here)."""
    return None if is_lazy(value) else as_bytes(value)


EXERCISES = [
    Exercise(
        "00-1",
        ("a", "total"),
        "import dask.array as da\n\na = da.arange(N, chunks=N // 10)  # chunk SIZE\ntotal = (a ** 2).sum()\n",
        _judge_00_1,
        "a is made with dask.array's arange; `chunks=` is the size of one chunk. total is built from a and left lazy.",
    ),
    Exercise(
        "00-2",
        ("cluster_memory",),
        'workers = session.client.scheduler_info(n_workers=-1)["workers"].values()\ncluster_memory = sum(w["memory_limit"] for w in workers)\n',
        _judge_00_2,
        "every worker's memory_limit is in session.client.scheduler_info(n_workers=-1)['workers'].",
    ),
    Exercise(
        "01-1",
        ("workshop_options",),
        'workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address=":0")\n',
        _judge_01_1,
        "kit.ClusterOptions takes the same keywords as kit.start_cluster; help(kit.ClusterOptions) lists them.",
        cluster=False,
    ),
    Exercise("01-2", ("spill_at",), 'spill_at = "9.6GiB"  # 0.6 * 16 GiB\n', _judge_01_2, "a size: bytes as an int, or a string with a unit.", cluster=False),
    Exercise(
        "02-1",
        ("rank10_error",),
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())\n",
        _judge_02_1,
        "build approx from u, s and v, then the ratio of two da.linalg.norm values, computed, as a float.",
    ),
    Exercise(
        "02-2",
        ("spill_threshold",),
        'import dask\n\nspill_threshold = dask.config.get("distributed.worker.memory.target") * 600 * 2**20\n',
        _judge_02_2,
        "dask.config.get('distributed.worker.memory.target') is a fraction of the memory limit.",
        cluster=False,
    ),
]
