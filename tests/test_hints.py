"""Out-of-memory and KilledWorker errors get a plain-language hint; the cluster stays usable."""

import os
import re
from pathlib import Path
from types import SimpleNamespace

from gpu_dask_kit.notebook import hints

from .conftest import wait_for_no_new_children
from .helpers import start_kernel


def test_explain_names_limits_and_what_to_do(no_leaks):
    import gpu_dask_kit as kit

    session = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit="1GiB", verbose=False)
    text = hints.explain(MemoryError("std::bad_alloc: out_of_memory: CUDA error"), session)
    assert "did not fit in memory" in text and "1.00 GiB (memory_limit)" in text
    assert "smaller chunks" in text and "cluster itself is fine" in text
    from distributed.scheduler import KilledWorker

    assert "memory_limit" in hints.explain(KilledWorker("x", SimpleNamespace(address="tcp://127.0.0.1:1"), 3), session)
    assert hints.explain(ValueError("no"), session) is None
    assert hints.is_out_of_memory(RuntimeError("cudaErrorMemoryAllocation")) and not hints.is_out_of_memory(ValueError())
    session.close()
    assert "cluster itself is fine" not in hints.explain(MemoryError(), session)


def _run(kc, code, timeout=120):
    out = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    return reply["content"]["status"], "".join(out)


def test_out_of_memory_in_a_task_prints_the_hint_in_a_real_kernel_and_the_session_survives(runtime_dir):
    before = {p.pid for p in __import__("psutil").Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        status, out = _run(
            kc, "import gpu_dask_kit as kit, numpy as np\ns = kit.start_cluster(n_workers=1, threads_per_worker=1, memory_limit='1GiB', verbose=False)"
        )
        assert status == "ok", out
        # ask a worker for 8 PiB: NumPy raises MemoryError there, distributed re-raises it here
        status, out = _run(kc, "s.client.submit(np.ones, 2**50, pure=False).result()")
        assert status == "error" and "MemoryError" in out, out
        assert "gpu-dask-kit: one allocation did not fit in memory" in out and "memory_limit" in out, out
        status, out = _run(kc, "print(s.client.submit(sum, [1, 2]).result(), s.is_alive())")
        assert status == "ok" and out.strip() == "3 True", out
        # a task that goes over the worker's 1 GiB memory_limit: its nanny kills it -> KilledWorker
        # (retried on fresh workers, by default 3 times, before the scheduler gives up)
        status, out = _run(
            kc, "def hog():\n    a = np.ones(2**28); b = np.ones(2**28); return float(a.sum() + b.sum())\ns.client.submit(hog, pure=False).result()"
        )
        assert status == "error" and "KilledWorker" in out, out
        assert "gpu-dask-kit: a worker died while running this task" in out, out
        status, out = _run(kc, "s.client.wait_for_workers(1, timeout=60); print(s.client.submit(sum, [2, 2]).result())")
        assert status == "ok" and out.strip() == "4", out
        status, out = _run(kc, "s.close()")
        assert status == "ok", out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_after_the_close_cell_and_a_clean_up_a_kernel_prints_one_sentence_not_a_traceback(runtime_dir, tmp_path):
    """Review 4: SessionClosedError (03 cells 9/18, 06 cell 6, after the close cell) and FileNotFoundError (07, after its
    clean-up cell) came as full tracebacks; in a real kernel each is now one line: for Dask's internals the kit's
    sentence naming the cell in place of their text (reviews 16-18), for a missing file its last line, then the sentence."""
    before = {p.pid for p in __import__("psutil").Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        status, out = _run(kc, "import gpu_dask_kit as kit, dask.array as da\nsession = kit.start_cluster(n_workers=1, threads_per_worker=1, verbose=False)")
        assert status == "ok", out
        assert _run(kc, "x = da.ones(10, chunks=5)")[0] == "ok"
        assert _run(kc, "futures = session.client.map(abs, range(6), pure=False)\n_ = session.client.gather(futures)")[0] == "ok"
        assert _run(kc, "session.close()")[0] == "ok"
        status, out = _run(kc, "x.sum().compute()")
        assert status == "error" and "SessionClosedError" in out and "most recent call last" not in out, out
        assert "re-run the cell that starts the cluster (In [1]), then this cell." in out, out
        # learner review 9 (09 cell 24): distributed's message lists every cancelled key and "Message: None"
        status, out = _run(kc, "session.client.who_has(futures)")  # what 09 cell 24 asks first
        out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # IPython colours the error's name
        assert status == "error" and "Message:" not in out and "6 Futures cancelled" not in out, out
        assert "FuturesCancelledError: gpu-dask-kit: the futures in `futures` belong to a cluster that has been closed since" in out, out
        status, out = _run(kc, "%tb")  # the original error, in full, for whoever wants it
        assert "6 Futures cancelled" in re.sub(r"\x1b\[[0-9;]*m", "", out), out
        # what an exercise check quotes of that cell (In [6]): the kit's sentence, not distributed's (learner review 23)
        status, out = _run(kc, "from gpu_dask_kit.notebook.outcomes import raised\nprint(raised(globals(), 6))")
        assert status == "ok" and "FuturesCancelledError: the futures in `futures` belong to a cluster" in out and "Message:" not in out, out
        folder = tmp_path / "gone"
        write = "pd.DataFrame({'x': [1]}).to_parquet(os.path.join(WORKDIR, 'a.parquet'))"
        status, out = _run(kc, f"import os, shutil, pandas as pd\nWORKDIR = {str(folder)!r}\nos.makedirs(WORKDIR)\n{write}")
        assert status == "ok", out
        assert _run(kc, "shutil.rmtree(WORKDIR)")[0] == "ok"
        status, out = _run(kc, "pd.read_parquet(os.path.join(WORKDIR, 'a.parquet'))")
        assert status == "error" and "FileNotFoundError" in out and "most recent call last" not in out, out
        assert "re-run the cell(s) that make `WORKDIR` (In [9])" in out, out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_after_the_close_cell_the_hint_names_what_the_failing_cell_reads_and_the_cell_that_made_the_session(runtime_dir, tmp_path):
    """Review 5 (09 cells 14/23, 08 cell 19): after the close cell the sentence named a later cell that only *could*
    start a cluster (In a GPU branch) and every stale name (`a`, `futures`, `total`) whatever the failing cell read,
    and for 08 not the cells that make the scheduler file a clean-up removed. Now: the cell that made the session,
    the names the failing cell reads, in order; and following it works."""
    before = {p.pid for p in __import__("psutil").Process().children(recursive=True)}
    km, kc = start_kernel(dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir)))
    try:
        cells = [
            "import os, shutil, gpu_dask_kit as kit, dask.array as da",
            "session = kit.start_cluster(n_workers=1, threads_per_worker=1, verbose=False)",  # In [2]
            "a = da.ones(100, chunks=10).persist()",  # In [3]
            "if session.mode == 'gpu' and False:\n    session = kit.start_cluster(n_workers=1, rmm_pool_size=0.5)\nprint(a.sum().compute())",
            "futures = session.client.map(abs, range(4))\ntotal = session.client.submit(sum, futures)",  # In [5]
            f"WORKDIR = {str(tmp_path / 'work')!r}\nos.makedirs(WORKDIR)\nMARK = os.path.join(WORKDIR, 'mark')\nopen(MARK, 'w').close()",
            "print(session.is_alive())",  # In [7]
            "session.close()\nshutil.rmtree(WORKDIR)",  # In [8]
        ]
        for code in cells:
            status, out = _run(kc, code)
            assert status == "ok", (code, out)
        status, out = _run(kc, "print(session.client.scheduler_info()['workers'])")  # reads only `session`
        assert status == "error" and "most recent call last" not in out, out
        assert "re-run the cell that starts the cluster (In [2]), then this cell." in out, out
        assert not any(f"`{name}`" in out for name in ("a", "futures", "total")), out
        status, out = _run(kc, "print(total.result(), open(MARK).read())")  # a stale future and a gone file
        assert "re-run the cell that starts the cluster (In [2]), then the cell that makes `total` (In [5])" in out, out
        assert "then the cell that makes `MARK` (In [6]), then this cell." in out and "`a`" not in out, out
        status, out = _run(kc, "print(session.scheduler_address)")  # AttributeError from the closed session
        assert status == "error" and "most recent call last" not in out and "re-run the cell that starts the cluster (In [2])" in out, out
        for code in (cells[1], cells[5], cells[4], "print(total.result(), open(MARK).read() == '')"):  # as the hint says
            status, out = _run(kc, code)
            assert status == "ok", (code, out)
        assert out.strip() == "6 True", out
        assert _run(kc, "session.close()")[0] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not wait_for_no_new_children(before)


def test_an_option_error_shows_its_message_without_the_kits_frames():
    """Review 7, item 8 (01-1): a ClusterOptions OptionError showed ~30 lines of traceback through options/model.py;
    the message names the option, the value, what is accepted and what to do. Other errors keep their traceback."""
    from gpu_dask_kit import ClusterOptions
    from gpu_dask_kit.errors import OptionError

    shown = []
    shell = SimpleNamespace(showtraceback=lambda exc_tuple, tb_offset=None, exception_only=False: shown.append(exception_only), user_ns={})
    try:
        ClusterOptions(n_workers=0)
    except OptionError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    hints._handler(shell, TypeError, TypeError("unrelated"), None)
    assert shown == [True, False], shown


def test_a_name_a_skipped_cell_makes_gets_the_cells_to_run_not_only_a_traceback(capsys):
    """Learner review 9: cells run before the cell that makes their names (06 cell 22 without cell 11's format_bytes,
    07 cells 20 and 24 before cell 15, 09 cell 17 before 16) raised a bare NameError. The traceback stays (it names the
    line); one sentence says which cells to run."""
    shown = []
    shell = SimpleNamespace(showtraceback=lambda exc_tuple, tb_offset=None, exception_only=False: shown.append(exception_only), user_ns={"In": ["", "x = 1"]})
    try:
        exec("medians[1]", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    said = capsys.readouterr().out
    assert shown == [False] and "`medians` is not defined in this kernel" in said and "Run All Above Selected Cell" in said, said
    shell.user_ns["In"] += ["medians = {1: 2.0}", "medians[1]"]  # it ran, the kernel lost it, the failing cell is In's last
    try:
        exec("medians[1]", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    assert "though In [2] assigns it: that cell failed before it got there, or the name was deleted since" in capsys.readouterr().out
    shell.user_ns["In"] += ["result = result.persist()"]  # learner review 12: the failing cell itself is not named as the maker
    try:
        exec("result = result.persist()", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    assert "In [4] made it" not in capsys.readouterr().out
    shell.user_ns["medians"] = {}  # a NameError of a name the notebook has (raised elsewhere) gets no hint
    try:
        exec("medians[1]", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    assert "gpu-dask-kit" not in capsys.readouterr().out


def test_name_errors_reach_the_kits_handler():
    registered = []
    shell = SimpleNamespace(custom_exceptions=(), set_custom_exc=lambda errors, handler: registered.extend(errors), events=None)
    hints._install(shell)
    assert NameError in registered


def test_in_jupyterlab_a_name_a_skipped_cell_makes_is_named_by_the_heading_of_that_cell():
    """A kernel JupyterLab started knows its notebook (`__session__`): the NameError sentence names the cell to run."""
    notebook = Path(__file__).parents[1] / "notebooks" / "09_gpu_first.ipynb"
    err = NameError("name 'square' is not defined", name="square")
    text = hints.explain(err, namespace={"In": ["", "futures = session.client.map(square, range(8))"], "__session__": str(notebook)})
    assert text is not None and 'the 1st code cell under the heading "Futures: work you start now and collect later" makes it' in text, text
    plain = hints.explain(err, namespace={"In": [""]})  # nbval, jupyter_client: no notebook known
    assert plain is not None and "If a cell above this one makes it" in plain, plain


def test_in_jupyterlab_a_module_a_lesson_cell_imports_is_named_with_that_cell():
    """Learner review 42: after a restart, 07's `dd` was told "no cell run so far has imported" it and to add the
    import to the lesson's cell; the open notebook's cell that imports it (and makes what comes next) is named."""
    notebook = Path(__file__).parents[1] / "notebooks" / "07_multi_gpu_etl.ipynb"
    err = NameError("name 'dd' is not defined", name="dd")
    text = hints.explain(err, namespace={"In": ["", "raw = dd.read_parquet(PROCESSED)"], "__session__": str(notebook)})
    assert text is not None and "which the " in text and "code cell" in text and "imports, and that cell has not run" in text, text
    plain = hints.explain(err, namespace={"In": [""]})
    assert plain is not None and "which no cell run so far has imported" in plain, plain


def test_a_local_scheduler_on_data_the_cluster_holds_is_explained_where_the_cell_raised():
    """Learner review 10 (03-1): `.compute(scheduler="threads")` on a persisted frame raised distributed's bare
    `ValueError: Missing dependency (...)` in the answer cell (only the check explained it)."""
    import dask.array as da
    from distributed import Client, LocalCluster

    text = None
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, Client(cluster, set_as_default=False) as client:
        x = client.persist(da.ones(10, chunks=5))
        try:
            x.sum().compute(scheduler="threads")
        except ValueError as err:
            text = hints.explain(err, namespace={"In": [""]})
    assert text is not None and "a local scheduler" in text and "Leave scheduler= out" in text, text
    # (learner review 42: 'processes' runs a local pool of processes, and nothing ran here: the graph failed first)
    assert "ran the tasks in this notebook's process" not in text and "a pool of local processes" in text, text


def test_get_worker_called_in_the_notebook_gets_a_sentence():
    """Learner review 20: 08's `[where_am_i(i) for i in range(4)]` ran the task's function here and showed distributed's
    `ValueError: No worker found` traceback only."""
    from distributed import get_worker

    try:
        get_worker()
    except ValueError as err:
        said = hints.explain(err, session=None, namespace={})
    assert said is not None and "client.submit, client.map" in said, said
    wrapped = Exception("ValueError('No worker found')")  # what client.run(lambda: get_worker().name) raises
    assert "dask_worker" in (hints.explain(wrapped, session=None, namespace={}) or ""), wrapped


def test_a_module_alias_never_imported_is_told_to_import_it(capsys):
    """Learner review 23: `pd` in 07's answer cell pointed at a later cell (which needs the timing table) that imports pandas."""
    shell = SimpleNamespace(showtraceback=lambda exc_tuple, tb_offset=None, exception_only=False: None, user_ns={"In": ["", "x = 1", "pd.Series([1])"]})
    try:
        exec("pd.Series([1])", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    said = capsys.readouterr().out
    assert "`import pandas as pd`" in said, said


def test_a_name_whose_cell_failed_before_making_it_is_not_said_to_have_been_made(capsys):
    """Learner review 34 (07): cell 15 failed as In [3] (NameError: report) before it made `medians`; cell 20 then said
    "though In [3] made it earlier (the kernel restarted ...)", which was false."""
    from gpu_dask_kit.notebook import outcomes

    shell = SimpleNamespace(showtraceback=lambda exc_tuple, tb_offset=None, exception_only=False: None)
    setattr(shell, outcomes.RECORD, {1: "NameError: name 'report' is not defined"})
    setattr(shell, outcomes.SINCE, 0)
    shell.user_ns = {"In": ["", "print(report)\nmedians = {1: 2.0}", "medians[1]"], "get_ipython": lambda: shell}
    try:
        exec("medians[1]", {})
    except NameError as err:
        hints._handler(shell, type(err), err, err.__traceback__)
    said = capsys.readouterr().out
    assert "In [1] assigns it, but failed before it did (NameError: name 'report' is not defined)" in said and "though In [1] assigns it" not in said, said


def _raised_in(filename: str, function: str, message: str) -> ValueError:
    """A ValueError raised from a function called ``function`` in a module file at ``filename``: the shape of a cuDF
    traceback (cuDF needs a GPU; the real one was seen on an H100, docs/gpu-validation.md, 2026-11-25)."""
    code = compile(f"def {function}():\n    raise ValueError({message!r})\n", filename, "exec")
    scope: dict = {}
    exec(code, scope)
    try:
        scope[function]()
    except ValueError as err:
        return err
    raise AssertionError("not raised")


def test_cudfs_groupby_size_on_a_frame_with_a_name_column_is_named_a_cudf_defect_with_what_to_use_instead():
    """H100 run, fourteenth session: 07-1's `dd.read_parquet(PROCESSED).groupby("name").size()` failed in cuDF 26.10.2
    with `ValueError: The truth value of a Series is ambiguous` (cuDF's size() takes frame.name, the column)."""
    text = "The truth value of a Series is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all()."
    err = _raised_in("/site/cudf/core/groupby/groupby.py", "size", text)
    said = hints.explain(err, session=None, namespace={})
    assert said is not None and "cuDF defect" in said and "column called `name`" in said and "value_counts()" in said, said
    # the same words from pandas (a Series in an if), or from cuDF outside a groupby's size(), are not this defect
    assert "cuDF" not in (hints.explain(_raised_in("/site/pandas/core/generic.py", "__bool__", text), session=None, namespace={}) or "")
    assert "cuDF" not in (hints.explain(_raised_in("/site/cudf/core/frame.py", "__bool__", text), session=None, namespace={}) or "")


def test_cupys_refusal_of_a_numpy_operand_is_explained():
    """H100, fourteenth session: 02-1 with `s_host` beside `u` and `v` raised CuPy's bare
    `TypeError: Unsupported type <class 'numpy.ndarray'>` (the words CuPy 14.2 uses) in the answer cell."""
    said = hints.explain(TypeError("Unsupported type <class 'numpy.ndarray'>"), session=None, namespace={})
    assert said is not None and "CuPy refused a NumPy array" in said and "to_host(...)" in said, said
    assert hints.explain(TypeError("unsupported operand type(s) for +: 'int' and 'str'"), session=None, namespace={}) is None
    # ... and its refusal to become NumPy (06-1's np.asarray(col_sums_persisted) on the H100)
    text = "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
    said = hints.explain(TypeError(text), session=None, namespace={})
    assert said is not None and "NumPy was handed a CuPy array" in said and "to_host(...)" in said, said


def test_futures_added_up_in_the_notebook_get_a_sentence():
    """Learner reviews 36-37 (09-1): `sum(futures)` showed only Python's TypeError."""
    said = hints.explain(TypeError("unsupported operand type(s) for +: 'int' and 'Future'"), session=None, namespace={})
    assert said is not None and "a Future is not a number" in said, said
