"""What the exercise-judge tests share: an answer cell run in the corpus' notebook-like namespace
(tests/test_exercises_corpus.py), then judged, and the assertions a rejection must pass."""

from __future__ import annotations

import linecache
import os

import numpy as np
import pandas as pd

from gpu_dask_kit.exercises import judge

from ..test_exercises_cases import REVEALS
from ..test_exercises_corpus import namespace

SUMS = "col_sums = x.sum(axis=0)\n"
LIMITS_06 = "limits = [w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()]\n"


def as_cell(code, ns, filename):
    """Run ``code`` in ``ns`` as IPython runs a cell: its source kept in ``linecache`` under ``filename``, so that
    ``inspect.getsource`` finds the functions it defines (as it does in a kernel)."""
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    exec(compile(code, filename, "exec"), ns)


def answer(ns, key, code):
    """Run ``code`` as the answer cell of ``key`` in ``ns``; IPython's ``In`` holds it, then the check cell."""
    as_cell(code, ns, f"<answer {key} {abs(hash(code))}>")
    ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return ns


def cells_in_shell(shell, key, client, *cells):
    """Run ``cells`` one by one as a kernel does (in the history), in the notebook-like namespace of ``key``."""
    shell.user_ns.update(namespace(key, client))
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    shell.run_cell(f"# exercises.check({key!r}, globals())", store_history=True)
    return shell.user_ns


def run_without(code, key, client, *gone):
    """An answer cell run in a namespace that lacks ``gone`` (cells skipped), as the corpus' ``_run`` does otherwise."""
    ns = namespace(key, client)
    for name in gone:
        del ns[name]
    return answer(ns, key, code)


def judged_with_ns(key, client, code, **extra):
    """(verdict, namespace) for ``code`` run as the answer cell of ``key``, with ``extra`` in the namespace;
    ``{total}``, ``{error}``, ``{rows}`` etc. in ``code`` are filled from the namespace first (never typed in a test)."""
    ns = namespace(key, client)
    ns.update(extra)
    values = {
        "total": (ns["N"] - 1) * ns["N"] * (2 * ns["N"] - 1) // 6 if "N" in ns else None,
        "error": float(np.sqrt((ns["s_host"][10:] ** 2).sum() / (ns["s_host"] ** 2).sum())) if "s_host" in ns else None,
    }
    if key.startswith("04"):
        rows = len(ns["ddf"].partitions[2])
        values.update(rows=rows, rows_less_1=rows - 1, rows_plus_1000=rows + 1000)
    answer(ns, key, code.format(**values))
    return judge(key, ns), ns


def judged(key, client, code, **extra):
    """The verdict of ``judged_with_ns``."""
    return judged_with_ns(key, client, code, **extra)[0]


def not_yet(key, client, code, words):
    """The verdict on ``code``: "Not yet", saying ``words``, and showing none of what would reveal the answer."""
    verdict, ns = judged_with_ns(key, client, code)
    assert verdict.answered and not verdict.correct, (code, verdict.message)
    assert verdict.message.startswith(f"Not yet ({key}): "), verdict.message
    assert words in verdict.message, (code, verdict.message)
    for secret in REVEALS[key](ns):
        assert secret.lower() not in verdict.message.lower(), (secret, verdict.message)
    return verdict


def notebook_namespace(key, client):
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


def judge_answer(key, code, client, ns=None):
    """The verdict on ``code`` as the answer cell of ``key``, in ``ns`` or else the notebook's namespace."""
    ns = ns if ns is not None else notebook_namespace(key, client)
    return judge(key, answer(ns, key, code))


def judge_answer_with_ns(key, code, client, ns=None, drop=()):
    """(namespace, verdict) on ``code`` as the answer cell; ``drop``: names an earlier cell makes, absent (that cell
    skipped). The session knows its worker count, as the kit's session does."""
    ns = ns if ns is not None else notebook_namespace(key, client)
    for name in drop:
        del ns[name]
    ns["session"].n_workers = len(client.scheduler_info(n_workers=-1)["workers"])  # as the kit's session has it
    answer(ns, key, code)
    return ns, judge(key, ns)


def assert_rejected(key, ns, verdict, said, not_said=None):
    """The verdict rejects the answer, says ``said`` (and not ``not_said``), and shows none of what reveals the answer."""
    assert verdict.answered and not verdict.correct, verdict.message
    assert said in verdict.message, verdict.message
    assert not_said is None or not_said not in verdict.message, verdict.message
    assert not [r for r in REVEALS[key](ns) if r in verdict.message], verdict.message


class RaisedShell:
    """What the kit's outcomes record says of In [2], the answer cell: it raised (the cell that makes a name skipped)."""

    def __init__(self, err):
        self._gpu_dask_kit_raised, self._gpu_dask_kit_raised_since = {2: err}, 0


NOTEBOOKS = os.path.join(os.path.dirname(__file__), "..", "..", "notebooks")


def opened_notebook_namespace(key, client):
    """The corpus' notebook namespace with the real notebook of ``key`` open (``__session__``, as JupyterLab sets it)."""
    ns = notebook_namespace(key, client)
    ns["__session__"] = next(os.path.join(NOTEBOOKS, f) for f in sorted(os.listdir(NOTEBOOKS)) if f.startswith(key[:2]) and f.endswith(".ipynb"))
    return ns


def judged_cell(key, client, code, scratch="", in_notebook=False):
    """(namespace, verdict): ``scratch`` run as a cell of the learner's own, then ``code`` as the answer cell of ``key``,
    in the corpus' notebook namespace (``in_notebook``: with the real notebook known, as in JupyterLab)."""
    ns = opened_notebook_namespace(key, client) if in_notebook else notebook_namespace(key, client)
    if key.startswith("08"):
        ns["session"].n_workers = 2  # as the kit's session has it
    as_cell(scratch, ns, f"<scratch {key} {abs(hash(scratch))}>")
    return ns, judge(key, answer(ns, key, code))


def assert_refused(key, client, code, said, not_said=None, scratch=""):
    """``code``, run as the answer cell of ``key`` (see :func:`judged_cell`), is refused saying ``said`` (and not
    ``not_said``), and the hint shows none of what reveals the answer."""
    ns, verdict = judged_cell(key, client, code, scratch)
    assert_rejected(key, ns, verdict, said, not_said)
