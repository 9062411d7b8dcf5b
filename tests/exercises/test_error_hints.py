"""The kit's error hints in a real kernel after the close cell: the custom exception handler turns the raw traceback
into one plain sentence naming the cells to re-run, never raises itself, and stays registered."""

import os

import psutil

from ..conftest import wait_for_no_new_children
from ..helpers import start_kernel
from ..test_hints import _run

FAILED = "Custom TB Handler failed"
CLOSED = "re-run the cell that starts the cluster (In [2])"
RAW = "most recent call last"

START = "session = kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit='1GiB', verbose=False)"  # In [2]
SUBMIT = (  # In [3], as notebook 09's cell 23
    "from distributed import as_completed\n\n\ndef work(seconds, task):\n    return task\n\n\n"
    "submitted = session.client.map(work, [0.1] * 6, range(6), pure=False)\n"
    "finished = [future.result() for future in as_completed(submitted)]"
)
READ = "where = session.client.who_has(submitted)\nprint(len(where))"  # as notebook 09's cell 24


def test_a_delayed_function_read_after_the_close_cell_gets_the_sentence_and_the_handler_stays(runtime_dir):
    """Review 7b, item 1: in 05, running a cell after the close cell printed the kit's sentence, then "Custom TB Handler
    failed, unregistering" and a raw traceback, and from then on every error in that kernel was raw. The cause: the
    failing cell reads `fit_ols`, a Delayed; `getattr(delayed, "is_alive")` is another Delayed (callable), so the hint
    took it for a session and `bool(delayed.is_alive())` raised TypeError inside IPython's custom exception handler."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        cells = [
            "import dask, gpu_dask_kit as kit",
            "session = kit.start_cluster(n_workers=1, threads_per_worker=1, verbose=False)",  # In [2]
            "fit_ols = dask.delayed(abs)\ndata_future = session.client.scatter(-3, broadcast=True)",
            "session.close()",
        ]
        for code in cells:
            status, out = _run(kc, code)
            assert status == "ok", (code, out)
        status, out = _run(kc, "print(dask.compute(fit_ols(data_future)))")  # 05 cell 10 after cell 23
        assert status == "error" and FAILED not in out and "Truth of Delayed" not in out, out
        assert CLOSED in out and "most recent call last" not in out, out
        status, out = _run(kc, "data_future = session.client.scatter(-3, broadcast=True)")  # 05 cell 9: still handled
        assert status == "error" and FAILED not in out and CLOSED in out and "most recent call last" not in out, out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_a_failure_inside_the_hint_shows_the_original_traceback_and_the_handler_stays_registered(runtime_dir):
    """The handler must never raise: a failure of its own shows the original traceback and it stays registered."""
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        status, out = _run(kc, "from gpu_dask_kit.notebook import hints\nprint(hints.install())")
        assert status == "ok" and out.strip() == "True", out
        status, out = _run(kc, "original = hints.explain\nhints.explain = lambda *a, **k: 1 / 0")
        assert status == "ok", out
        status, out = _run(kc, "def deep():\n    raise ValueError('the learner error')\ndeep()")
        assert status == "error" and FAILED not in out and "ZeroDivisionError" not in out, out
        assert "the learner error" in out and "most recent call last" in out and "deep()" in out, out
        status, out = _run(kc, "hints.explain = original\nprint(get_ipython().custom_exceptions != ())")
        assert status == "ok" and out.strip() == "True", out
        status, out = _run(kc, "raise MemoryError('out_of_memory')")
        assert status == "error" and "gpu-dask-kit: one allocation did not fit in memory" in out, out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)


def test_futures_of_a_closed_cluster_get_one_sentence_naming_the_cells_to_re_run(runtime_dir):
    """Review 8b, notebook 09 cell 24: after the close cell (or after the set-up cell started a new cluster), reading
    the futures cell 23 submitted raised distributed's raw `FuturesCancelledError: 6 Futures cancelled for reason:
    unknown` with its whole traceback. The kit's hint turns it into one plain sentence naming the cells to re-run, as it
    does for lost-dependency and closed-client errors."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        for code in ["import gpu_dask_kit as kit", START, SUBMIT]:
            status, out = _run(kc, code)
            assert status == "ok", (code, out)
        status, out = _run(kc, READ)
        assert status == "ok" and out.strip() == "6", out
        status, out = _run(kc, "session.close()")  # the close cell
        assert status == "ok", out
        status, out = _run(kc, READ)
        assert status == "error" and "FuturesCancelledError" in out and RAW not in out, out
        assert "closed since" in out and "re-run the cell that starts the cluster (In [2]), then the cell that makes `submitted` (In [3])" in out, out
        status, out = _run(kc, START)  # the set-up cell again: a new cluster, the futures still belong to the old one
        assert status == "ok", out
        status, out = _run(kc, READ)
        assert status == "error" and RAW not in out and "re-run the cell that makes `submitted` (In [3]), then this cell" in out, out
        assert "starts the cluster" not in out, out  # the cluster runs: only the futures are to make again
        for code in [SUBMIT, READ]:  # and that is enough
            status, out = _run(kc, code)
            assert status == "ok", (code, out)
        status, out = _run(kc, "session.client.cancel(submitted)")  # cancelled, not closed
        assert status == "ok", out
        status, out = _run(kc, READ)
        assert status == "error" and RAW not in out and "were cancelled" in out and "`submitted`" in out, out
        status, out = _run(kc, "session.close()")
        assert status == "ok", out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)
