"""Review 8b, notebook 09 cell 24: after the close cell (or after the set-up cell started a new cluster), reading the
futures cell 23 submitted raised distributed's raw `FuturesCancelledError: 6 Futures cancelled for reason: unknown`
with its whole traceback. The kit's hint turns it into one plain sentence naming the cells to re-run, as it does for
lost-dependency and closed-client errors."""

import os

import psutil

from .conftest import wait_for_no_new_children
from .helpers import start_kernel
from .test_hints import _run

START = "session = kit.start_cluster(n_workers=2, threads_per_worker=1, memory_limit='1GiB', verbose=False)"  # In [2]
SUBMIT = (  # In [3], as notebook 09's cell 23
    "from distributed import as_completed\n\n\ndef work(seconds, task):\n    return task\n\n\n"
    "submitted = session.client.map(work, [0.1] * 6, range(6), pure=False)\n"
    "finished = [future.result() for future in as_completed(submitted)]"
)
READ = "where = session.client.who_has(submitted)\nprint(len(where))"  # as notebook 09's cell 24
RAW = "most recent call last"


def test_futures_of_a_closed_cluster_get_one_sentence_naming_the_cells_to_re_run(runtime_dir):
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
