"""Self-checks for the notebooks' exercises: judge an answer by meaning, never raise, always hint.

In a notebook an exercise is four cells: the prompt (markdown), the answer cell, which assigns each answer
name to ``...`` until the learner replaces it, and the self-check::

    from gpu_dask_kit import exercises
    exercises.check("00-1", globals())

A plain "Run All" therefore leaves every answer ``...`` and the check reports "not answered yet". The
reference answer is never in a cell that Run All would execute: ``exercises.solution("00-1")`` prints it on
request. CI sets ``GPU_DASK_KIT_SOLVE_EXERCISES=1``: then a check that finds no answer runs the reference
solution in the notebook's namespace first, so every solution is executed and judged in its notebook.

Judges look at what the answer DID on the cluster where that is the idea (``evidence``: the scheduler's record
of graph submissions, the keys it holds in memory, a task's inputs and resource requests, a fingerprint of
persisted data taken at set-up), not only at the value. A wrong answer gets a hint in steps: what sort of
mistake it is, then where to look; never the answer itself.

Evidence belongs to the answer itself: a Dask object is judged by its own keys; a plain value (a float, a Series)
by its answer cell, which ``replay`` finds in IPython's ``In`` history and runs again, statement by statement, while
it reads the scheduler's log: an earlier correct run, or an unrelated cell run since, changes nothing, and a value
typed into the cell is seen as typed. Outside IPython (no ``In``) the scheduler's latest record is read instead.

``check`` leaves the answer names in the namespace (the learner keeps ``ddf_fast``, ``x0_results`` ...): it
judges whatever they hold now. When the notebook's cluster is closed, a check says so and names the cell to re-run.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from ..notebook import outcomes
from ..notebook.cellreads import names_read
from ..notebook.rerun import cause_of, cells_making, futures_in, restart_cell, restart_steps
from .broken import broken_cell, raised_cell
from .cancels import own_cancel
from .elsewhere import VALUES_WRITTEN_OUT, require_made_in_cell
from .evidence import client_of, cluster_closed
from .fingerprint import fingerprint
from .model import Exercise, Hint, Verdict
from .replay import CELL, _assigned, _parse, answer_cell, changed_after
from .stale import cluster_state, no_cluster, remake_steps
from .zeroed import only_decides

__all__ = ["Exercise", "Hint", "Verdict", "SOLVE_ENV", "EXERCISES", "judge", "check", "solution", "keys", "fingerprint"]

#: What a check says when the notebook's cluster is gone (closed, or the kernel lost it): no raw error text.
CLOSED = (
    "Could not be checked ({key}): the cluster is closed: re-run the set-up cell{start}, then {cells}your answer cell, then "
    "this check. (The notebook's close cell ran, or the cluster stopped.)"
)
CLOSED_SIGNS = ("IOLoop is closed", "No clients found", "ClosedClientError", "CancelledError", "CommClosedError", "Client is closed")
#: What a check says when the cluster runs but the data an answer holds is gone (its answer cell ran before).
GONE = "Could not be checked ({key}): {what}: re-run {cells}your answer cell, then this check."
#: The same when the judge only learns it from an error (which data is not known).
LOST = (
    "Could not be checked ({key}): data your answer uses is no longer on the cluster (cancelled or released by a later "
    "cell, lost in a restart, or made on a cluster closed since): re-run {cells}your answer cell, then this check."
)

#: The same when the answer cell itself cancels them: running it again cannot help.
CANCELS = (
    "Not yet ({key}): your answer's results on the workers were cancelled or lost, and your answer cell itself drops them "
    "({call}), so running it again cannot help. Remove that call, run the cell, then this check."
)

#: What a check says when a name an earlier cell of the notebook makes (not an answer name) is not in the kernel.
NOT_MADE = (
    "Could not be checked ({key}): this check reads `{name}`, which a cell above your answer cell makes, and this "
    "kernel does not have it (that cell was skipped, or the kernel restarted since): run {cells}, then your answer "
    "cell, then this check."
)

#: Environment variable that makes ``check`` run the reference solution when no answer was given (CI).
SOLVE_ENV = "GPU_DASK_KIT_SOLVE_EXERCISES"


def _catalog() -> dict[str, Exercise]:
    from .catalog_a import EXERCISES as first
    from .catalog_b import EXERCISES as second
    from .catalog_c import EXERCISES as third
    from .catalog_d import EXERCISES as fourth
    from .catalog_e import EXERCISES as fifth

    return {e.key: e for e in (*first, *second, *third, *fourth, *fifth)}


EXERCISES: dict[str, Exercise] = _catalog()
outcomes.install()  # from the first check on, a cell that raises is known as such (start_cluster's extension does it earlier)


def keys() -> list[str]:
    """Every exercise key, in notebook order.

    >>> keys()[:3]
    ['00-1', '00-2', '01-1']
    """
    return sorted(EXERCISES)


def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise KeyError(f"exercise key {key!r} is unknown; the keys are {', '.join(keys())}")
    return EXERCISES[key]


def judge(key: str, namespace: dict[str, Any]) -> Verdict:
    """Judge the answers found in ``namespace``; never raises for any answer.

    >>> judge("01-2", {"spill_at": ...}).answered
    False
    >>> print(judge("01-2", {"spill_at": 0.6 * 16 * 2**30}))
    Correct (01-2): the worker starts moving data from GPU to host memory above that many bytes.
    >>> judge("01-2", {"spill_at": [1, 2]}).correct
    False
    """
    exercise = _exercise(key)
    unreadable = broken_cell(namespace, exercise.names)
    if unreadable:
        return Verdict(False, True, f"Not yet ({key}): {unreadable}")
    answers = {name: namespace.get(name, Ellipsis) for name in exercise.names}
    unfilled = [name for name, value in answers.items() if value is Ellipsis]
    if unfilled and exercise.early is not None and len(unfilled) < len(answers):
        try:
            exercise.early({n: v for n, v in answers.items() if v is not Ellipsis})
        except Hint as hint:
            return _not_yet(key, hint)
    raised = raised_cell(namespace, exercise.names)
    if raised:
        return Verdict(False, True, f"Could not be checked ({key}): {raised}")
    missing = [name for name in exercise.names if name not in namespace]
    if missing:
        return Verdict(
            False, False, f"Not answered yet ({key}): run your answer cell first; it defines {', '.join(exercise.names)} (not found: {', '.join(missing)})."
        )
    if unfilled:
        return Verdict(
            False,
            False,
            f"Not answered yet ({key}): replace the ... of {', '.join(_also_unfilled(namespace, exercise.names) + unfilled)} in the "
            f"cell above and run it, then this check. Stuck? exercises.solution({key!r}) prints an answer.",
        )
    if exercise.cluster and cluster_state(namespace) == "none":
        return Verdict(False, True, no_cluster(key, namespace))
    if exercise.cluster and cluster_closed(namespace):
        return Verdict(False, True, CLOSED.format(key=key, start=_start(namespace), cells=_remake(namespace, exercise.names, after_start=True)))
    if exercise.cluster:
        client_of(namespace, *answers.values())  # adds the submissions' ledger to the cluster (see ledger.py) if not there yet
    gone = _gone(answers)
    if gone and own_cancel(namespace, exercise.names):
        return Verdict(False, True, CANCELS.format(key=key, call=own_cancel(namespace, exercise.names)))
    if gone:
        return Verdict(False, True, GONE.format(key=key, what=gone, cells=_remake(namespace, exercise.names)))
    try:
        _not_changed_after(namespace, exercise.names, key)
        text = exercise.judge(answers, namespace)
    except Hint as hint:
        return _not_yet(key, hint)
    except Exception as err:  # a wrong type or a broken computation: a hint, never a raw traceback
        first = (str(err).strip().splitlines() or [""])[0][:300]
        if _not_made(err, namespace):
            return Verdict(False, True, NOT_MADE.format(key=key, name=err.args[0], cells=_making(namespace, err.args[0])))
        if (exercise.cluster and cluster_closed(namespace)) or cause_of(err) in ("closed", "session-closed"):  # (01 after close)
            return Verdict(False, True, CLOSED.format(key=key, start=_start(namespace), cells=_remake(namespace, exercise.names, after_start=True)))
        if exercise.cluster and own_cancel(namespace, exercise.names) and "Cancelled" in type(err).__name__:
            return Verdict(False, True, CANCELS.format(key=key, call=own_cancel(namespace, exercise.names)))
        if exercise.cluster and any(s in f"{type(err).__name__}: {err}" for s in CLOSED_SIGNS):
            return Verdict(False, True, LOST.format(key=key, cells=_remake(namespace, exercise.names)))
        return Verdict(
            False,
            True,
            f"Not yet ({key}): your answer could not be checked ({type(err).__name__}: {first}). Where to look: {exercise.hint} "
            f"Stuck? exercises.solution({key!r}) prints an answer.",
        )
    return Verdict(True, True, f"Correct ({key}): {text}")


#: Exercises whose answer is no Dask computation's result (worked out from the prompt's numbers, read from the
#: scheduler, a ratio of measured times, parsed flags): their hints speak of no "Dask computation" (learner review 19).
NO_DASK_STEP = VALUES_WRITTEN_OUT | {"00-2", "06-2", "07-2", "08-1"}


def _not_changed_after(namespace: dict[str, Any], names: tuple[str, ...], key: str = "") -> None:
    """A :class:`Hint` when the answer cell writes values into an answer after making it (``m[:] = ...``): the values
    then come from that later line, whatever made the answer first (learner review 11: a pandas groupby of every row
    written into the Series a Dask groupby had made was "Correct")."""
    for name in names:
        cell = answer_cell(namespace, name)
        decides = only_decides(cell, name, namespace)
        if decides is not None and key in NO_DASK_STEP:
            if key in VALUES_WRITTEN_OUT:  # a typed value is fine there: the test around it is the fault
                decides = decides.replace(" (a typed answer, whichever branch runs, wherever it runs)", "")
            raise Hint(f"the statement that makes {name} {decides}: write {name} as one expression, without a test around it.")
        if decides is not None:
            # a typed fallback is typed wherever the if/else runs (a task's lambda too: learner reviews 22-24)
            where = "" if "written out" in decides else " (worked out in this notebook)"
            raise Hint(
                f"the Dask computation of your answer cell does not make {name}: the statement that makes it {decides}"
                f"{where}. Let the Dask computation's result itself be {name}."
            )
        require_made_in_cell(cell, name, key, names, namespace)
        if changed_after(cell, name) is not None:
            raise Hint(
                f"your answer cell changes {name} after making it (a later line writes into it: `{name}[...] = ...` or "
                f"`{name}.update(...)`): the values it holds then come from that later line, not from the computation "
                f"that made {name}. Make {name} in one step, and leave it as it comes."
            )


def _also_unfilled(namespace: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """Other names the answer cell leaves ``...`` (08-1's ``args``), in the cell's order: the unanswered message names them too.

    >>> _also_unfilled({"In": ["", "args = ...\\nscript_options = ..."], "args": ...}, ("script_options",))
    ['args']
    """
    cell = answer_cell(namespace, names[0])
    tree = _parse(cell) if cell is not None else None
    found = [
        t.id
        for node in (tree.body if tree is not None else [])
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis
        for t in node.targets
        if isinstance(t, ast.Name) and t.id not in names and namespace.get(t.id) is Ellipsis
    ]
    return found


def _labelled(key: str, hint: str) -> str:
    """A hint with one label: "Could not be checked (key): ..." for a hint that says so, "Not yet (key): ..." otherwise.

    >>> _labelled("02-1", "could not be checked: the cell raised NameError.")
    'Could not be checked (02-1): the cell raised NameError.'
    """
    for opening in ("could not be checked: ", "could not be checked, because "):
        if hint.startswith(opening):
            return f"Could not be checked ({key}): {hint[len(opening) :]}"
    return f"Not yet ({key}): {hint}"


def _not_yet(key: str, hint: Hint) -> Verdict:
    """The verdict for a hint: one label (:func:`_labelled`)."""
    return Verdict(False, True, _labelled(key, str(hint)))


def _not_made(err: Exception, namespace: dict[str, Any]) -> bool:
    """True for the KeyError of a judge reading a notebook name (``ns["s_host"]``) that the kernel does not have."""
    name = err.args[0] if isinstance(err, KeyError) and err.args else None
    return isinstance(name, str) and name.isidentifier() and name not in namespace


def _making(namespace: dict[str, Any], name: str) -> str:
    """ "the cell that sets `s_host` (In [15] last time)": the notebook cell to run for ``name``."""
    numbers = cells_making([str(s) for s in namespace.get("In", [])] if isinstance(namespace.get("In"), list) else [], name)
    return f"the cell above that sets `{name}`" + (f" (In [{numbers[-1]}] in this kernel's history)" if numbers else "")


def _start(namespace: dict[str, Any]) -> str:
    """ ": the cell that starts the cluster (In [2])", with the cells making files it reads that are gone (08's scheduler file)."""
    steps = restart_steps(namespace) if isinstance(namespace.get("In"), list) else None
    return f": {steps}" if steps else " (the one with `session = kit.start_cluster(...)`)"


def _remake(namespace: dict[str, Any], answer_names: tuple[str, ...], after_start: bool = False) -> str:
    """ "the cells that make `x` (In [3]), then ": what to re-run before the answer cell (empty: only the answer cell).
    ``after_start``: the sentence names the start cell first, so that cell is not named again (learner review 32, 02)."""
    cell = answer_cell(namespace, answer_names)  # the latest cell that assigns any of them (a def is no assignment)
    reads = names_read(cell, namespace) if cell is not None else None  # only what the answer cell needs (not all the notebook's)
    start = restart_cell(namespace) if after_start and isinstance(namespace.get("In"), list) else None
    history = [str(s) for s in namespace["In"]] if isinstance(namespace.get("In"), list) else []
    # earlier answer cells of this exercise are not named (learner reviews 38-39: `ddf = ddf.assign(z=1)` in a wrong answer
    # was listed among the cells that make ddf, and running it again would break ddf again): "then your answer cell" says it
    answered = tuple(
        number
        for number, source in enumerate(history[:-1])
        if (tree := _parse(source)) is not None and any(_assigned(tree, name) is not None for name in answer_names)
    )
    steps = remake_steps({k: v for k, v in namespace.items() if k not in answer_names}, reads, named=((start,) if start else ()) + answered)
    return f"{steps} (their data is gone), then " if steps else ""


def _gone(answers: dict[str, Any]) -> str | None:
    """What happened to the data an answer holds on the cluster, when it is gone (None: nothing is gone)."""
    for name, value in answers.items():
        futures = futures_in(value)
        if any(str(f.client.status) in ("closed", "closing") for f in futures):
            return (
                f"{name} holds data of a cluster that has been closed (made before the close, or from data made before "
                "it: this notebook's session is a newer cluster, which does not have it)"
            )
        failed = next((f for f in futures if f.status == "error"), None)
        if failed is not None:
            return f"{name}'s tasks failed on the cluster ({_failure(failed)}): fix your answer cell so that its tasks can run"
        if any(f.status in ("cancelled", "lost") for f in futures):
            return (
                f"{name}'s results on the workers were cancelled or lost after they were made (a cancel or release in your "
                "answer cell or a later one, or a cluster restart); keep them"
            )
    return None


def _failure(future: Any) -> str:
    """ "NoValidWorkerError: ...": why a future's task failed (its exception, first line)."""
    try:
        err = future.exception(timeout=5)
    except Exception as other:  # the exception itself could not be fetched
        err = other
    text = (str(err).strip().splitlines() or [""])[0][:200]
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def check(key: str, namespace: dict[str, Any]) -> None:
    """Print the verdict for the answers in ``namespace`` (pass ``globals()``); the answers stay where they are.

    With ``GPU_DASK_KIT_SOLVE_EXERCISES=1`` and no answer given, the reference solution runs first (CI, the venue
    check); a reference solution not judged correct then raises RuntimeError, so that a run of the notebook fails.
    Returns nothing, so the cell shows only the printed line; tests use :func:`judge`.
    """
    exercise = _exercise(key)
    unanswered = all(namespace.get(name, Ellipsis) is Ellipsis for name in exercise.names)
    if unanswered and os.environ.get(SOLVE_ENV) == "1":
        exec(compile(exercise.solution, f"<solution {key}>", "exec"), namespace)
        verdict = judge(key, {**namespace, CELL: exercise.solution})  # the solution is the answer cell
        print(verdict.message)
        if not verdict.correct:  # (H100, fourteenth session: 06-1's and 07-2's verdicts were "Not yet" on a GPU, unseen)
            raise RuntimeError(
                f"{SOLVE_ENV}=1: the reference solution of {key} was not judged correct on this machine (the verdict is "
                "printed above). That is a defect of gpu-dask-kit's check, not of the notebook: report it with this output."
            )
        return
    print(judge(key, namespace).message)


def solution(key: str) -> None:
    """Print a reference answer for ``key``, to copy into the answer cell. Nothing runs."""
    exercise = _exercise(key)
    print(f"# A reference answer for exercise {key}: copy it into your answer cell, run that cell, then the check.")
    print(exercise.solution.rstrip())
