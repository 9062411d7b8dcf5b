"""What the learner's code did on the cluster, read from the scheduler's own records (evidence for the judges).

Nothing here needs a plugin registered before the answer cell ran: the scheduler keeps its recent state
transitions (``Scheduler.story``, the last ``distributed.admin.low-level-log-length`` of them) and the state,
inputs and restrictions of every task a client still holds. Every function returns plain data, or ``None``
where there is no cluster to ask; the judges turn that into a hint.
"""

from __future__ import annotations

import time
from typing import Any

import dask
from dask.core import flatten
from dask.task_spec import Alias, DataNode, Task
from dask.utils import key_split
from distributed import futures_of, get_client, wait
from distributed.metrics import time as metrics_time

from .ledger import ensure, records

__all__ = [
    "cluster_closed",
    "client_of",
    "runs_touching",
    "latest_run",
    "all_runs",
    "scheduler_now",
    "submitted_with",
    "computes",
    "MOVES",
    "persisted",
    "submissions",
    "task_inputs",
    "task_functions",
    "resource_restrictions",
]

WAIT = 60  # seconds a judge waits for the learner's tasks to finish before it reads their records


def client_of(namespace: dict[str, Any], *values: Any) -> Any:
    """The client behind the notebook's ``session``, the futures among ``values``, or the default one; else None."""
    client = _client_of(namespace, *values)
    if client is not None and str(getattr(client, "status", "")) == "running":
        ensure(client)  # from now on the cluster keeps the submissions' records longer than its own log
    return client


def _client_of(namespace: dict[str, Any], *values: Any) -> Any:
    session_client = getattr(namespace.get("session"), "client", None)
    if session_client is not None:
        return session_client
    for value in values:
        try:
            futures = futures_of(value)
        except Exception:
            futures = []
        if futures:
            return futures[0].client
    try:
        return get_client()
    except ValueError:
        return None


def cluster_closed(namespace: dict[str, Any]) -> bool:
    """True when the notebook's ``session`` client is closed, or there is no session and no running client at all."""
    client = getattr(namespace.get("session"), "client", None)
    if client is not None:
        return str(getattr(client, "status", "")) in ("closed", "closing")
    try:
        client = get_client()
    except ValueError:
        return True
    return str(getattr(client, "status", "")) in ("closed", "closing")


def _keys(collection: Any) -> list[Any]:
    return list(flatten(collection.__dask_keys__()))


def _states(dask_scheduler: Any, keys: list[Any]) -> dict[Any, str]:
    return {key: (dask_scheduler.tasks[key].state if key in dask_scheduler.tasks else "unknown") for key in keys}


def persisted(collection: Any) -> str | None:
    """None when every partition of ``collection`` is a result held in worker memory; else what is not.

    A lazy step on top of persisted data (``ddf[ddf.x > 0]`` of a persisted ``ddf``) has futures too
    (``futures_of`` finds its inputs), but its own partitions are still tasks to run: that is "not persisted".
    """
    futures = futures_of(collection)
    graph = collection.__dask_graph__()
    parts = "chunks" if hasattr(collection, "chunks") else "partitions" if hasattr(collection, "npartitions") else "pieces"
    if not futures and graph and not any(isinstance(v, Task) for v in graph.values()):
        return (
            f"its {parts} are data held in THIS notebook's process, not on the workers: values computed here and wrapped "
            "into a Dask collection again (da.from_array(... .compute()), from_pandas), or a persist on the local scheduler "
            "(scheduler='sync' runs the tasks here and keeps the results here)"
        )
    if not futures:
        return (  # (review 31: an array's chunks; review 41: a name set to the recipe again after its persist ran)
            f"none of its {parts} is in worker memory: it is a recipe (a task graph) with no results held (persist() was not "
            "called on it, or the name was set to the recipe again afterwards)"
        )
    held = {f.key for f in futures}
    try:
        wait(futures, timeout=WAIT)
    except TimeoutError:
        pass  # reported below as "not in worker memory (still running)"
    work = [k for k in graph if k not in held and not isinstance(graph[k], (Alias, DataNode))]
    if work:
        return f"{len(work)} of its tasks would run again each time it is used (its inputs are held in memory, it is not)"
    states = futures[0].client.run_on_scheduler(_states, keys=sorted(held, key=str))
    lost = [k for k, s in states.items() if s != "memory"]
    return f"{len(lost)} of its {len(held)} partitions are not in worker memory (still running, or lost)" if lost else None


def _covering_submission(dask_scheduler: Any, keys: list[Any]) -> bool:
    """True when ONE graph submission created every one of ``keys`` (whatever ran before or after it)."""
    made: dict[str, set[Any]] = {}
    for key, start, _finish, stimulus, _stamp in records(dask_scheduler, keys):
        if start == "released":
            made.setdefault(stimulus, set()).add(key)
    return any(len(found) == len(set(keys)) for found in made.values())


def _latest_submissions(dask_scheduler: Any, keys: list[Any]) -> dict[Any, str]:
    """Per key, the stimulus id of the latest graph submission that created it (absent: no record)."""
    latest: dict[Any, tuple[float, str]] = {}
    for key, start, _finish, stimulus, stamp in records(dask_scheduler, keys):
        if start == "released" and (key not in latest or stamp > latest[key][0]):
            latest[key] = (stamp, stimulus)
    return {key: stimulus for key, (_, stimulus) in latest.items()}


def submissions(client: Any, lazy: list[Any]) -> tuple[int, int]:
    """(graph submissions that ran the ``lazy`` objects' keys, how many of those keys the scheduler never ran).

    ``dask.compute(*lazy)`` is one submission; ``[l.compute() for l in lazy]`` is ``len(lazy)``; code that never
    used the cluster leaves every key unrecorded.
    """
    keys = [k for obj in lazy for k in _keys(obj)]
    if keys and client.run_on_scheduler(_covering_submission, keys=keys):
        return 1, 0  # an earlier attempt, or a later unrelated cell, does not undo one submission of them all
    found = client.run_on_scheduler(_latest_submissions, keys=keys)
    return len(set(found.values())), len([k for k in keys if k not in found])


#: Task prefixes that only move or assemble data (what a plain .compute() of held data runs): no computation.
MOVES = ("finalize", "repartitiontofewer", "concat", "partitions", "getitem", "alias")


def _runs(dask_scheduler: Any, keys: list[str], since: float = 0.0) -> list[dict[str, Any]]:
    """The graph submissions, oldest first, whose tasks touched any of ``keys`` (str keys; none: every submission) at or
    after ``since`` (the scheduler's clock): prefixes, keys, time."""
    wanted = set(keys)
    found: dict[Any, dict[str, Any]] = {}
    for key, _start, _finish, stimulus, stamp in records(dask_scheduler):
        if stamp >= since:
            run = found.setdefault(stimulus, {"time": stamp, "prefixes": set(), "keys": set(), "own": set()})
            run["prefixes"].add(key_split(key))
            run["keys"].add(str(key))
            if str(key) in wanted:
                run["own"].add(key_split(key))
    hits = [r for r in found.values() if r["keys"] & wanted or not wanted]
    return sorted(({**r, "touched": r["keys"] & wanted} for r in hits), key=lambda r: r["time"])


def runs_touching(client: Any, collection: Any, since: float = 0.0) -> list[dict[str, Any]]:
    """The graph submissions (oldest first) whose tasks used ``collection``'s own keys: {"prefixes", "keys", "touched", "time"}.

    Read from the scheduler's transition log, so code that never used the cluster leaves no run; ``touched``
    says which of the collection's keys (as str) each run used.
    """
    held = [f.key for f in futures_of(collection)]  # persisted: the keys the scheduler holds (the collection may alias them)
    (optimised,) = dask.optimize(collection)  # a lazy frame runs under its optimised (fused) keys, not its own
    return runs_with_keys(client, [*_keys(collection), *held, *_keys(optimised)], since=since)


def runs_with_keys(client: Any, keys: list[Any], since: float = 0.0) -> list[dict[str, Any]]:
    """Every graph submission still in the scheduler's log (from ``since`` on) whose tasks touched any of ``keys``,
    oldest first."""
    return client.run_on_scheduler(_runs, keys=sorted({str(k) for k in keys}), since=since)


def all_runs(client: Any, since: float = 0.0) -> list[dict[str, Any]]:
    """Every graph submission the scheduler's transition log still holds (from ``since`` on), oldest first."""
    return client.run_on_scheduler(_runs, keys=[], since=since)


def _now(dask_scheduler: Any) -> float:
    return metrics_time()


def _unreleased(dask_scheduler: Any, client_id: str, held: list[Any]) -> int:
    kept = set(held)
    state = dask_scheduler.clients.get(client_id)
    return 0 if state is None else sum(1 for ts in state.wants_what if ts.key not in kept)


def _running(dask_scheduler: Any, client_id: str) -> int:
    state = dask_scheduler.clients.get(client_id)
    # (not "no-worker": a task asking for a resource no worker offers waits for ever, as notebook 08 shows)
    return 0 if state is None else sum(1 for ts in state.wants_what if ts.state in ("waiting", "queued", "processing"))


def _undelivered(dask_scheduler: Any, client_id: str, pending: list[Any]) -> int:
    state = dask_scheduler.clients.get(client_id)
    wanted = {ts.key for ts in state.wants_what} if state is not None else set()
    return sum(1 for key in pending if key not in wanted)


def wait_for_running(client: Any, limit: float) -> None:
    """Wait, at most ``limit`` seconds, until the scheduler has every graph this client sent (the client's futures
    still pending are tasks it wants) and no task this client wants is still to run: an answer cell that returns at
    once (``client.compute(...)``, a persist) may still be computing when its check starts, or its graph may still be on
    the client's batched stream (which this call's own messages can overtake), and those tasks' records would be read
    as the check's own run of the cell (learner review 24 and a loaded test run: "the scheduler received 2")."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        pending = [key for key, state in list(client.futures.items()) if getattr(state, "status", None) == "pending"]
        if not client.run_on_scheduler(_undelivered, client_id=client.id, pending=pending) and not client.run_on_scheduler(_running, client_id=client.id):
            return
        time.sleep(0.05)


def wait_for_releases(client: Any, limit: float) -> None:
    """Wait, at most ``limit`` seconds, until the scheduler has this client's batched "release these keys" messages:
    it wants no key for the client that the client no longer holds a future of."""
    deadline = time.monotonic() + limit
    while client.run_on_scheduler(_unreleased, client_id=client.id, held=list(client.futures)) and time.monotonic() < deadline:
        time.sleep(0.02)


def scheduler_now(client: Any) -> float:
    """The scheduler's clock (the one its transition log is stamped with)."""
    return client.run_on_scheduler(_now)


def latest_run(client: Any) -> dict[str, Any] | None:
    """The latest graph submission on the cluster (what the answer cell right before the check ran), or None."""
    found = all_runs(client)
    return found[-1] if found else None


def computes(run: dict[str, Any]) -> bool:
    """True when a run did more than move held data to the client (a reduction, a map, ...)."""
    return any(not p.startswith(MOVES) for p in run["prefixes"] - run["own"])


def _inputs(dask_scheduler: Any, key: Any) -> list[Any] | None:
    ts = dask_scheduler.tasks.get(key)
    if ts is None:
        return None
    spec = getattr(ts.run_spec, "dependencies", None) or ()
    return sorted({d.key for d in ts.dependencies} | set(spec), key=str)


def task_inputs(future: Any) -> list[Any] | None:
    """The keys the task behind ``future`` took as inputs (None: the scheduler does not know the task)."""
    try:
        wait([future], timeout=WAIT)  # the submission reaches the scheduler on another connection than this question
    except TimeoutError:
        pass
    return future.client.run_on_scheduler(_inputs, key=future.key)


def _args(dask_scheduler: Any, keys: list[Any]) -> list[list[Any]]:
    out = []
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        args = getattr(ts.run_spec, "args", None) if ts is not None else None
        out.append([a for a in args if isinstance(a, (int, float, str))] if isinstance(args, tuple) else [])
    return out


def _functions(dask_scheduler: Any, keys: list[Any]) -> list[str | None]:
    out: list[str | None] = []
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        func = getattr(getattr(ts, "run_spec", None), "func", None) if ts is not None else None
        out.append(getattr(func, "__name__", None) if func is not None else None)
    return out


def task_functions(client: Any, keys: list[Any]) -> list[str | None]:
    """Per key: the name of the function its task ran (None: unknown task, or data rather than a call)."""
    return client.run_on_scheduler(_functions, keys=list(keys))


def task_args(futures: list[Any]) -> list[list[Any]]:
    """Per future: the plain values (numbers, strings) its task was called with (empty: unknown task or none)."""
    return futures[0].client.run_on_scheduler(_args, keys=[f.key for f in futures])


def submitted_with(future: Any, keys: list[Any]) -> set[str] | None:
    """The distinct graph submissions that created ``future``'s task and the tasks of ``keys`` (one: a single graph);
    None when the record of any of them is gone (then nothing can be said)."""
    found = future.client.run_on_scheduler(_latest_submissions, keys=[future.key, *keys])
    return set(found.values()) if len(found) == len({future.key, *keys}) else None


def _gathered(dask_scheduler: Any, keys: list[Any]) -> int | None:
    started = [stamp for *_, stamp in records(dask_scheduler, keys)]
    if not started:
        return None  # the record of their submission is gone: nothing to count from
    since = min(started)
    events = dask_scheduler.get_events("all")
    return sum(int(m.get("count", 0)) for stamp, m in events if isinstance(m, dict) and m.get("action") == "gather" and stamp >= since)


def gathered_since(futures: list[Any]) -> int | None:
    """How many results the client fetched through the scheduler since these futures were submitted (its "gather" events);
    None when the record of their submission is gone (nothing can be said).

    The client fetches through the scheduler unless ``distributed.client.direct-to-workers`` is set.
    """
    return futures[0].client.run_on_scheduler(_gathered, keys=[f.key for f in futures])


def _restrictions(dask_scheduler: Any, keys: list[Any]) -> list[dict[str, Any]]:
    out = []
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        out.append(
            {}
            if ts is None
            else {
                "resources": dict(ts.resource_restrictions or {}),
                "workers": sorted(ts.worker_restrictions or ()),
                "loose": bool(ts.loose_restrictions),  # allow_other_workers=True: the workers named are a preference
                "known": True,
            }
        )
    return out


def resource_restrictions(futures: list[Any]) -> list[dict[str, Any]]:
    """Per future: the resources its task asked for and the workers it was pinned to (empty dict: unknown task).

    Tasks that ask for a resource no worker has never finish, so this does not wait for them to end; it asks
    again for a few seconds while the scheduler has not received them yet.
    """
    for _ in range(50):
        asked = futures[0].client.run_on_scheduler(_restrictions, keys=[f.key for f in futures])
        if all(asked):
            return asked
        time.sleep(0.1)
    return asked
