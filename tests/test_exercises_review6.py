# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Learner review 6: each false accept / false reject the reviewer found, with the reviewer's answer cell.

Item 1 runs the cells in a real IPython shell (``store_history``, as a kernel does), so that ``In`` and the record of
which cells raised are IPython's own.
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from gpu_dask_kit.exercises import judge
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
    ("08-2", RIGHT["08-2"][0], "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\nslot_workers = session.client.gather(slot_futurez)", "NameError"),
    ("09-1", RIGHT["09-1"][1], "futs = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, futz)", "NameError"),
    ("09-1", RIGHT["09-1"][1], "from distributed import get_worker\nsquare_futures = session.client.map(square, range(10))\nget_worker()\ntotal_future = session.client.submit(sum, square_futures)", "ValueError"),
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
