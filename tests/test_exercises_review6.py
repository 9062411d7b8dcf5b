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
