"""Review 7b, item 1: in 05, running a cell after the close cell printed the kit's sentence, then "Custom TB Handler
failed, unregistering" and a raw traceback, and from then on every error in that kernel was raw. The cause: the
failing cell reads `fit_ols`, a Delayed; `getattr(delayed, "is_alive")` is another Delayed (callable), so the hint took
it for a session and `bool(delayed.is_alive())` raised TypeError inside IPython's custom exception handler. The handler
must never raise: a failure of its own shows the original traceback and it stays registered."""

import os

import psutil

from ..conftest import wait_for_no_new_children
from ..helpers import start_kernel
from ..test_hints import _run

FAILED = "Custom TB Handler failed"
CLOSED = "re-run the cell that starts the cluster (In [2])"


def test_a_delayed_function_read_after_the_close_cell_gets_the_sentence_and_the_handler_stays(runtime_dir):
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
