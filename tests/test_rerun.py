"""Re-run hints (gpu_dask_kit.notebook.rerun): which cells a learner must run again after a restart or a close."""

from __future__ import annotations

import pytest
from distributed import Client, LocalCluster

from gpu_dask_kit.notebook.rerun import cells_making, explain_rerun, start_cell


def test_a_name_made_from_itself_names_the_cell_that_made_it_first():
    """Review 3 (02, 03): "re-run the cell that makes x (In [5])" named `x = x.persist()`, which fails the same way."""
    history = ["", "import dask.array as da", "x = da.ones(9)", "x = x.persist()", "print(x)"]
    assert cells_making(history, "x") == [2, 3]
    assert cells_making([*history, "y = x + 1"], "y") == [5]
    assert cells_making(history, "z") == []


def test_the_start_cell_is_the_one_that_makes_the_session():
    """Review 3 (09): a timing cell that also calls start_cluster( (on GPUs only) was named as the start cell."""
    history = ["", "session = kit.start_cluster()", "if gpu:\n    other = kit.start_cluster(rmm_pool_size=0.5)", "print(1)"]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history})
    assert text is not None and "the cell that starts the cluster (In [1])" in text, text


def test_a_start_cell_that_connects_is_said_to_connect():
    """Learner reviews 47-48 (08): after the close cell, the cell that connects to the running scheduler by address was
    named "(starts the cluster)"."""
    history = ["", "import gpu_dask_kit as kit", "session = kit.start_cluster(scheduler_address=address)", "session.close()", "session.n_workers"]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history})
    assert text is not None and "the cell that connects to the cluster (In [2])" in text and "starts" not in text, text
    history[2] = "session = kit.start_cluster(scheduler_file=SCHEDULER_FILE, connect_timeout=120)"
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history})
    assert text is not None and "the cell that connects to the cluster (In [2])" in text, text


def test_a_recorded_start_cell_that_starts_clusters_only_in_a_loop_is_not_named():
    """Review 6, item 7 (07): after the close cell, cell 9's hint named the scaling loop (the cell that made the kit's
    current session, starting one cluster per size), not the set-up cell, which is all cell 9 needs."""
    loop = "for n in WORKER_COUNTS:\n    session = kit.start_cluster(**{**CLUSTER, 'n_workers': n})\n    time_it()"
    history = ["", "session = kit.start_cluster(**CPU_CLUSTER)", "out = dd.read_parquet(PROCESSED)", loop, "session.close()", "len(out)"]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history}, started_in={"": 3, "session": 3})
    assert text is not None and "In [1]" in text and "In [3]" not in text, text
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history}, started_in={"": 1, "session": 1})
    assert text is not None and "In [1]" in text, text
    history = ["", "session = kit.start_cluster()", "slurm_session = kit.start_cluster(**JOBS)", "session.close()", "slurm_session.n_workers"]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history}, started_in={"": 2, "session": 1, "slurm_session": 2})
    assert text is not None and "In [2]" in text and "In [1]" not in text, text  # (08: another session's own cell stays named)


@pytest.fixture
def client():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_after_a_restart_the_hint_names_the_whole_chain(client):
    import dask.array as da

    x = da.ones(10, chunks=5)
    x = x.persist()
    client.cancel(x)  # what a restart does to held futures (an in-process cluster has no nanny to restart)
    history = ["", "x = da.ones(10, chunks=5)", "x = x.persist()", "x.sum().compute()"]
    text = explain_rerun(type("FutureCancelledError", (Exception,), {})("scheduler-restart"), {"In": history, "x": x})
    assert text is not None and "the cells that make `x` (In [1] then In [2]), then this cell." in text, text


def test_a_compute_after_the_close_cell_names_only_the_start_cell():
    """Review 4 (03 cells 9/18, 06 cell 6): SessionClosedError after the close cell came as a full traceback; now one
    sentence names the cell that starts the cluster (and no cells that persist data: a lazy computation needs none)."""
    from gpu_dask_kit.clients import SessionClosedError
    from gpu_dask_kit.notebook.rerun import cause_of

    history = ["", "import gpu_dask_kit as kit", "session = kit.start_cluster()", "ddf = make()", "ddf.groupby('name').x.mean().compute()", "session.close()"]
    err = SessionClosedError("The gpu-dask-kit cluster was closed (session.close())")
    assert cause_of(err) == "session-closed"
    text = explain_rerun(err, {"In": history})
    assert text is not None and "the cell that starts the cluster (In [2]), then this cell." in text, text
    assert "persist() or submit()" not in text and text.count(".") <= 3, text


def test_files_removed_by_a_clean_up_cell_name_the_cells_that_write_them(tmp_path):
    """Review 4 (07): the ETL cell after the clean-up cell gave a raw FileNotFoundError; now the cells that make the
    gone paths the failing cell reads are named, in order (the work folder and the raw files first, then the processed
    ones). Review 5 (08): only what the failing cell reads, and not the failing cell itself."""
    import os
    import shutil

    import dask
    import dask.dataframe as dd
    import pandas as pd

    workdir = tmp_path / "etl"
    raw, processed = str(workdir / "raw"), str(workdir / "processed")
    os.makedirs(raw)
    pd.DataFrame({"x": range(4)}).to_parquet(os.path.join(raw, "part.0.parquet"))  # no Dask scheduler needed (none may run)
    history = [
        "",
        "session = kit.start_cluster()",
        "WORKDIR = tempfile.mkdtemp()\nRAW = os.path.join(WORKDIR, 'raw')\nraw.to_parquet(RAW)",
        "PROCESSED = os.path.join(WORKDIR, 'processed')\nlookups = etl(RAW, PROCESSED)",
        "shutil.rmtree(WORKDIR, ignore_errors=True)",
        "dd.read_parquet(PROCESSED).compute()",  # the failing cell (IPython's In holds it while it runs)
    ]
    shutil.rmtree(workdir)
    ns = {"In": history, "WORKDIR": str(workdir), "RAW": raw, "PROCESSED": processed, "OTHER": str(tmp_path)}
    with pytest.raises(FileNotFoundError) as info, dask.config.set(scheduler="sync"):
        dd.read_parquet(processed).compute()
    text = explain_rerun(info.value, ns)
    assert text is not None and processed in text and "`PROCESSED`, `RAW`, `WORKDIR` (In [2] then In [3])" in text and "`OTHER`" not in text, text
    history[-1] = "dd.read_parquet(RAW).compute()"  # reads RAW only: the cell that makes PROCESSED is not needed
    text = explain_rerun(FileNotFoundError(2, "No such file or directory", raw), ns)
    assert text is not None and "make `RAW` (In [2]), then this cell." in text, text
    unknown = explain_rerun(FileNotFoundError(2, "No such file or directory", str(tmp_path / "typo.csv")), {"In": history})
    assert unknown is not None and "re-run the cell that writes it" in unknown, unknown


def test_steps_to_remake_names_the_cells_for_given_names_in_order():
    """For the exercise checks (review 5 item 5: "x, u, s, v are gone: re-run cell 32"): the names are given, not read."""
    from gpu_dask_kit.notebook.rerun import steps_to_remake

    history = ["", "x = make()", "x = x.persist()\nu, s, v = svd(x)", "exercises.check('02-1', globals())"]
    assert steps_to_remake({"In": history}, ["u", "s", "v"]) == "the cell that makes `s`, `u`, `v` (In [2])"
    assert steps_to_remake({"In": history}, ["x"]) == "the cells that make `x` (In [1] then In [2])"
    assert steps_to_remake({"In": history}, ["nothing"]) is None


def test_a_parquet_folder_left_empty_names_the_cell_that_writes_it(tmp_path):
    """Review 6 (07 cell 7 after the close cell, before cell 4 ran to its end): read_parquet of the emptied RAW folder
    raised a raw "ValueError: No files satisfy the `parquet_file_extension` criteria"; now the cell writing RAW is named."""
    import os

    import dask.dataframe as dd

    raw = str(tmp_path / "raw")
    os.makedirs(raw)  # what a writing cell that failed (cluster closed) leaves: the folder, no files
    history = [
        "",
        "session = kit.start_cluster()",
        "WORKDIR = tempfile.mkdtemp()\nRAW = os.path.join(WORKDIR, 'raw')\nraw.to_parquet(RAW)",
        "lookups = etl(RAW, PROCESSED)",
    ]
    with pytest.raises(ValueError, match="No files satisfy") as info:
        dd.read_parquet(raw)
    text = explain_rerun(info.value, {"In": history, "RAW": raw, "WORKDIR": str(tmp_path)})
    assert text is not None and "`RAW` (In [2])" in text, text


def test_a_cell_that_ran_before_gets_the_cluster_it_ran_on_then():
    """Review 7, item 7 (02): after the close cell, cell 24 (spilling) was told to re-run the LATER cluster's cell (cell
    32, 2 GiB, which does not spill), the one that made the kit's current session; it ran on cell 21's."""
    spill = "big = random_array(SIZE)\nspilled_now(session.memory())"
    history = ["", "session = kit.start_cluster(**SPILL_CPU)", spill, "session = kit.start_cluster(**CPU_CLUSTER)", "session.close()", spill]
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history}, started_in={"": 3, "session": 3})
    assert text is not None and "In [1]" in text and "In [3]" not in text, text
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": [*history[:4], "session.close()", "session.memory()"]}, started_in={"": 3, "session": 3})
    assert text is not None and "In [3]" in text, text  # a cell that did not run before: the current session's cell


def test_after_a_restart_a_frame_made_again_comes_before_the_result_made_from_it(client):
    """Review 7, item 7 (04 cell 20): ddf's cell re-run after result was made (In [4] after In [2]): the hint listed
    result's cells first, which would rebuild result from the gone ddf."""
    import dask.array as da

    ddf = da.ones(10, chunks=5).persist()
    result = (ddf + 1).persist()
    client.cancel([ddf, result])
    history = [
        "",
        "ddf = da.ones(10, chunks=5).persist()",
        "result = ddf + 1",
        "result = result.persist()",
        "ddf = da.ones(10, chunks=5).persist()",
        "result.sum().compute()",
    ]
    text = explain_rerun(type("FutureCancelledError", (Exception,), {})("scheduler-restart"), {"In": history, "ddf": ddf, "result": result, "da": da})
    assert text is not None and text.index("In [4]") < text.index("In [2]") < text.index("In [3]"), text


def test_a_failing_cell_that_ran_before_names_the_start_cell_by_the_number_it_shows_now():
    """Review 32 (08): after the start cell re-ran as In [89], a cell that first ran after In [9] was told to re-run
    "In [9] (starts the cluster)", a number no cell showed any more (the 08-2 check, on the other path, said In [89])."""
    history = ["", "session = kit.start_cluster()", "print(session.client)", "session.close()", "session = kit.start_cluster()", "session.close()"]
    history.append("print(session.client)")
    assert start_cell(history) == 4
    text = explain_rerun(RuntimeError("IOLoop is closed"), {"In": history})
    assert text is not None and "In [4]" in text and "In [1]" not in text, text
