# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""Notebook 02's exercise judges: 02-1 (``rank10_error``, the rank-10 approximation's error computed on the workers),
with answer cells learners wrote in review, and what the check says after a restart."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_dask_kit.exercises import judge

from ..helpers import cancel_last_made_first
from ..test_exercises_cases import RIGHT
from ..test_exercises_corpus import _run, namespace
from .helpers import assert_refused, cells_in_shell, judge_answer_with_ns, judged_cell, notebook_namespace, run_without


# Review 5, item 6: answers judged inconsistently, and hints that misdiagnose.
def test_02_1_the_theory_computed_on_the_workers_is_rejected_like_the_numpy_one(client):
    """Before: "Correct ... as theory predicts" (the NumPy version got the "build approx" hint)."""
    for code in [
        "rank10_error = float(da.sqrt((s[10:]**2).sum()/(s**2).sum()).compute())",
        "rank10_error = float(np.sqrt((s_host[10:] ** 2).sum() / (s_host ** 2).sum()))",
    ]:
        verdict = judge("02-1", _run(code, "02-1", client))
        assert not verdict.correct and "from the singular values alone" in verdict.message, verdict.message


def test_02_1_svd_compressed_is_named_as_an_approximate_svd(client):
    code = "u2, s2, v2 = da.linalg.svd_compressed(x, k=10)\napprox = (u2 * s2) @ v2\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())"
    verdict = judge("02-1", _run(code, "02-1", client))
    assert not verdict.correct and "randomized" in verdict.message and "typed" not in verdict.message, verdict.message


def test_02_1_after_a_restart_names_the_data_that_is_gone_and_its_cells(client):
    """Review 5, item 5: data that is gone is named with the cells that make it. Review 9: in the notebook x and the
    SVD are made in two cells, and the check named only the SVD's (which reads the lost x: re-running it alone fails)."""
    right = RIGHT["02-1"][1]
    ns = _run(right, "02-1", client)
    make_x, make_svd = "x = da.random.default_rng(12).random((400, 30), chunks=(100, 30)).persist()", "u, s, v = dask.persist(*da.linalg.svd(x))"
    ns["In"] = ["", make_x, make_svd, right, 'exercises.check("02-1", globals())']
    cancel_last_made_first(client, ns["x"], ns["u"], ns["s"], ns["v"])
    verdict = judge("02-1", ns)
    assert verdict.answered and not verdict.correct, verdict.message
    assert "the cell that makes `x` (In [1]), then the cell that makes `s`, `u`, `v` (In [2])" in verdict.message, verdict.message
    assert "closed:" not in verdict.message and "raised" not in verdict.message, verdict.message


def test_a_skipped_earlier_cell_is_named_not_reported_as_a_key_error(client):
    """Review 6, item 4: 02-1 with cell 15 (s_host) skipped said "could not be checked (KeyError: 's_host')"."""
    verdict = judge("02-1", run_without(RIGHT["02-1"][1], "02-1", client, "s_host"))
    assert verdict.answered and not verdict.correct, verdict.message
    assert "KeyError" not in verdict.message and "reads `s_host`" in verdict.message and "the cell above that sets `s_host`" in verdict.message, verdict.message


def test_02_1_after_a_restart_names_only_what_the_answer_cell_reads(client):
    """Review 6, item 6: the list of gone data named `uc` (not used by the answer) and `approx` (made by the answer cell)."""
    from distributed import futures_of, wait

    code = RIGHT["02-1"][1]  # approx = ..., then its error
    ns = namespace("02-1", client)
    ns["uc"] = (ns["u"] * 2).persist()
    wait(ns["uc"])
    exec(compile(code, "<answer 02-1>", "exec"), ns)
    ns["In"] = ["", "x = make().persist()", "u, s, v = dask.persist(*svd(x))", "uc = (u * 2).persist()", code, 'exercises.check("02-1", globals())']
    cancel_last_made_first(client, *(ns[name] for name in ("x", "u", "s", "v", "uc", "approx") if futures_of(ns[name])))
    verdict = judge("02-1", ns)
    assert not verdict.correct and "`u`" in verdict.message, verdict.message
    assert "`uc`" not in verdict.message and "`approx`" not in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("code", "noted"),
    [
        ("spill_threshold = 0.6 * 600 * 2**20", True),
        ("spill_threshold = '360MiB'", True),
        ("spill_threshold = dask.config.get('distributed.worker.memory.target') * 600 * 2**20", False),
    ],
)
def test_02_2_a_size_worked_out_by_hand_is_accepted_with_a_note(code, noted, client):
    """Learner review 9: the target fraction written out (0.6) and the size typed in passed without a word. The value is
    the idea here (target times the limit), so they pass, saying that code should read the fraction from dask.config."""
    import dask

    if dask.config.get("distributed.worker.memory.target") != 0.6:
        pytest.skip("the answers are written for distributed's default target (0.6)")
    _, verdict = judge_answer_with_ns("02-2", code, client)
    assert verdict.correct, verdict.message
    assert ("Worked out by hand" in verdict.message) is noted, verdict.message


@pytest.mark.parametrize("typed", ["'361MiB'", "'359MiB'", "'0.35 GiB'", "3.8e8"])
def test_02_2_a_size_a_digit_off_or_rounded_to_two_digits_is_refused(typed, client):
    """Learner reviews 25-26: "361MiB", "359MiB" and "0.35 GiB" passed as the 360 MiB threshold (a 0.5% tolerance)."""
    import dask

    if dask.config.get("distributed.worker.memory.target") != 0.6:
        pytest.skip("the answers are written for distributed's default target (0.6)")
    assert_refused("02-2", client, f"spill_threshold = {typed}", "by less than 1%")


@pytest.mark.parametrize("typed", ["'0.352 GiB'", "'360.4MiB'", "377000000"])
def test_02_2_a_size_rounded_to_three_digits_passes(typed, client):
    import dask

    if dask.config.get("distributed.worker.memory.target") != 0.6:
        pytest.skip("the answers are written for distributed's default target (0.6)")
    _, verdict = judge_answer_with_ns("02-2", f"spill_threshold = {typed}", client)
    assert verdict.correct, verdict.message


@pytest.mark.parametrize(
    ("formula", "said"),
    [
        ("float(da.linalg.norm(x - approx) / da.linalg.norm(approx))", "by the norm of approx"),
        ("1 - float(da.linalg.norm(approx) / da.linalg.norm(x))", "a difference of two norms"),
    ],
)
def test_02_1_the_wrong_norms_are_named_not_the_slices(formula, said, client):
    """Learner reviews 26-29: both were told "check the slices of u, s and v" (the slices were right)."""
    code = f"approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = {formula}"
    assert_refused("02-1", client, code, said, not_said="check the slices")


REVIEW_24_02_1 = [
    # an approximation built with the module's functions (da.diag, da.dot) but unused: the numerator from s
    ("approx = u[:, :10] @ da.diag(s[:10]) @ v[:10]\nrank10_error = float(da.linalg.norm(s[10:]) / da.linalg.norm(x))", "rank10_error does not use it"),
    ("approx = da.dot(u[:, :10] * s[:10], v[:10])\nrank10_error = float(da.linalg.norm(s[10:]) / da.linalg.norm(x))", "rank10_error does not use it"),
    (
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = float(da.linalg.norm(x - approx) / da.linalg.norm(s))",
        "divides by a norm of the singular values",
    ),
    (
        "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = float(da.linalg.norm(x - approx) / da.sqrt((s ** 2).sum()))",
        "divides by a norm of the singular values",
    ),
    ("approx = (u[:, :10] * s_host[:10]) @ v[:10]\nrank10_error = float(da.linalg.norm(x - approx) / da.linalg.norm(x))", "CuPy does not mix with NumPy"),
]


@pytest.mark.parametrize(("code", "said"), REVIEW_24_02_1, ids=range(len(REVIEW_24_02_1)))
def test_review_24_02_1_the_theorys_shortcuts_are_named(code, said, client):
    assert_refused("02-1", client, code, said)


def test_review_24_02_1_the_two_norms_in_two_computations_pass_with_a_note(client):
    code = "k = 10\napprox = u[:, :k] @ da.diag(s[:k]) @ v[:k]\nrank10_error = float(da.linalg.norm(x - approx))\nrank10_error /= float(da.linalg.norm(x))"
    _, verdict = judged_cell("02-1", client, code)
    assert verdict.correct and "one after the other" in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("formula", "said"),
    [
        ("float(da.linalg.norm(x - approx) / da.linalg.norm(x) + 1e-6)", "off in the later digits"),
        ("float(da.linalg.norm(x - approx) / da.linalg.norm(x)) * 100", "times 100"),
        ("float(abs(x - approx).sum() / abs(x).sum())", "check the formula"),
    ],
)
def test_review_30_02_1_refused_for_what_the_cell_did(formula, said, client):
    code = f"approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = {formula}"
    assert_refused("02-1", client, code, said)


def test_review_32_02_1_after_the_close_the_start_cell_that_also_makes_the_data_is_named_once(client):
    """After the close cell, the check said "the cell that starts the cluster (In [6]), then the cell that makes `s`, `u`,
    `v` (In [6])": the cell that starts the cluster again (notebook 02's "Back to the first cluster") makes them too."""
    import dask
    import dask.array as da
    from distributed import Client

    from gpu_dask_kit.exercises import judge

    from ..test_exercises_corpus import Session

    answer = "rank10_error = float((da.linalg.norm(x - (u[:, :10] * s[:10]) @ v[:10, :]) / da.linalg.norm(x)).compute())"
    ns = _run(answer, "02-1", client)
    other = Client(client.scheduler.address, set_as_default=False)
    try:
        x = other.persist(da.random.default_rng(3).random((400, 30), chunks=(100, 30)))
        u, s, v = other.persist(list(da.linalg.svd(x)))
    finally:
        other.close()
    again = (
        "big = None\nsession = kit.start_cluster()\nx = random_array((400, 30), chunks=(100, 30), seed=12).persist()\nu, s, v = dask.persist(*da.linalg.svd(x))"
    )
    history = ["", "import gpu_dask_kit as kit", "session = kit.start_cluster()", "x = random_array((400, 30), chunks=(100, 30), seed=12)", "x = x.persist()"]
    history += ["u, s, v = dask.persist(*da.linalg.svd(x))", again, answer, 'exercises.check("02-1", globals())']
    ns.update(x=x, u=u, s=s, v=v, dask=dask, session=Session(other), In=history)
    verdict = judge("02-1", ns)
    assert "the cell that starts the cluster (In [6]), then your answer cell" in verdict.message, verdict.message


@pytest.mark.parametrize("biggest", ["float(da.max(da.abs(x - approx)) / da.max(da.abs(x)))", "float(abs(x - approx).max() / abs(x).max())"])
def test_review_36_02_1_a_max_abs_ratio_is_named_as_another_norm(biggest, client):
    """Told "not computed by Dask's blockwise work on the workers ... or nothing ran on the cluster": it was, with another norm."""
    code = f"approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = {biggest}"
    assert_refused("02-1", client, code, "the largest absolute entries (a max of abs)", not_said="blockwise")


def test_02_1_a_cupy_scalar_is_not_a_plain_python_float(client):
    """H100, fourteenth session: `rank10_error = (norm(x - approx) / norm(x)).compute()` is a 0-d CuPy array on a GPU
    session, and it was "Correct" though the question asks for a plain Python float (on CPU it is a NumPy float64, a
    float). A stand-in of CuPy's type (CuPy needs a GPU)."""
    ns = notebook_namespace("02-1", client)
    error = float(np.sqrt((ns["s_host"][10:] ** 2).sum() / (ns["s_host"] ** 2).sum()))
    scalar = type("ndarray", (), {"__module__": "cupy._core.core", "__float__": lambda self: error})()
    code = "approx = (u[:, :10] * s[:10]) @ v[:10, :]\nrank10_error = gpu_value"
    _, verdict = judge_answer_with_ns("02-1", code, client, ns={**ns, "gpu_value": scalar})
    assert not verdict.correct and "CuPy array holding one number" in verdict.message and "float(...)" in verdict.message, verdict.message


def test_02_1_cupys_refusal_of_s_host_is_explained_by_the_check(shell, client):
    """H100, fourteenth session: on a GPU, `(u[:, :10] * s_host[:10]) @ v[:10]` raises CuPy's TypeError in the answer
    cell, and the check said only "failed when it last ran". NumPy does not refuse, so the cell raises CuPy's error."""
    code = "approx = (u[:, :10] * s_host[:10]) @ v[:10]\nraise TypeError(\"Unsupported type <class 'numpy.ndarray'>\")\nrank10_error = 0.0"
    verdict = judge("02-1", cells_in_shell(shell, "02-1", client, code))
    assert verdict.message.startswith("Could not be checked (02-1): CuPy refused a NumPy array"), verdict.message


def test_review_49_02_2_an_answer_that_reads_the_cluster_after_the_close_cell_names_the_start_cell(client):
    """Learner review 49: an answer reading the target through session.client.run, checked again after the close cell,
    got "the cell raised RuntimeError: IOLoop is closed" instead of the cell to run again."""
    from distributed import Client, LocalCluster

    from ..test_exercises_corpus import Session

    code = "spill_threshold = session.client.run(lambda: __import__('dask').config.get('distributed.worker.memory.target')).popitem()[1] * 600 * 2**20"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        own = Client(cluster, set_as_default=False)
        ns = namespace("02-2", client)
        ns["session"] = Session(own)
        exec(compile(code, "<answer 02-2>", "exec"), ns)
        ns["In"] = ["", "session = kit.start_cluster()", code, "session.close()", 'exercises.check("02-2", globals())']
        own.close()
    verdict = judge("02-2", ns)
    assert not verdict.correct and "which is closed" in verdict.message, verdict.message
    assert "the cell that starts the cluster (In [1])" in verdict.message and "IOLoop" not in verdict.message, verdict.message


def test_review_55_02_1_errors_of_several_ranks_each_in_one_pass_pass_with_a_note(client):
    """Learner review 55: the errors of ranks 5, 10 and 20 in one comprehension, each a whole ratio computed in one
    pass, then errs[10], was told "the norms in 3 separate computations ... hand both to Dask at once"."""
    code = "errs = {k: float(da.linalg.norm(x - (u[:, :k] * s[:k]) @ v[:k, :]) / da.linalg.norm(x)) for k in (5, 10, 20)}\nrank10_error = errs[10]"
    _, verdict = judged_cell("02-1", client, code)
    assert verdict.correct and "3 errors, each a whole ratio in one pass" in verdict.message, verdict.message


def test_02_1_the_norms_in_three_computations_are_refused(client):
    """The two norms of one error spread over three computations (one of them twice) still read x three times."""
    code = (
        "approx = u[:, :10] @ da.diag(s[:10]) @ v[:10]\nd = float(da.linalg.norm(x - approx))\nn = float(da.linalg.norm(x))\n"
        "n = float(da.linalg.norm(x))\nrank10_error = d / n"
    )
    assert_refused("02-1", client, code, "the norms in 3 separate computations (each reads x again): hand them to Dask at once")


APPROX_10 = "approx = (u[:, :10] * s[:10]) @ v[:10, :]\n"


def test_review_56_02_1_a_lazy_ratio_built_in_an_earlier_cell_and_computed_in_the_answer_cell_passes(client):
    """Learner review 56: `lazy_err = norm(x - approx) / norm(x)` in a cell of the learner's own, then
    `rank10_error = float(lazy_err.compute())`, was told "worked out from the singular values alone ... never from x"."""
    scratch = APPROX_10 + "lazy_err = da.linalg.norm(x - approx) / da.linalg.norm(x)"
    _, verdict = judged_cell("02-1", client, "rank10_error = float(lazy_err.compute())", scratch=scratch)
    assert verdict.correct, verdict.message


def test_review_56_02_1_a_float_copied_from_the_learners_own_cell_is_not_called_a_parameter(client):
    """Learner review 56: `rank10_error = rel10` (rel10 computed with Dask in another cell) was told rel10 is "a number
    the notebook sets in another cell (one of its parameters)"."""
    scratch = APPROX_10 + "rel10 = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())"
    assert_refused("02-1", client, "rank10_error = rel10", "a number another cell made (this cell only copies it)", not_said="parameters", scratch=scratch)


def test_review_56_02_1_norms_per_row_averaged_are_named(client):
    """Learner review 56: row-wise ratios averaged were told "computed on part of the matrix"."""
    code = APPROX_10 + "rank10_error = float((da.linalg.norm(x - approx, axis=1) / da.linalg.norm(x, axis=1)).mean().compute())"
    assert_refused("02-1", client, code, "takes norms along an axis (per row or per column)", not_said="part of the matrix")
