"""The wrong-answer corpus: for every exercise, plausible wrong answers written as a learner writes them (the
anti-pattern the exercise is about, the right value reached the wrong way, wrong types and units, a value typed
in by hand, no cluster at all) are each rejected with a hint that does not contain the answer; right answers in
two different styles pass. Each answer is code, run in a notebook-like namespace on one real in-process cluster
(threads: no process to leak) with a worker that offers the GPU_SLOT resource, as in notebook 08.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile

import dask
import dask.array as da
import numpy as np
import pandas as pd
import pytest
from dask.utils import format_bytes

import gpu_dask_kit as kit
from gpu_dask_kit.exercises import EXERCISES, judge, solution
from tests.test_exercises_cases import DEMEAN, FITS, INPLACE, REVEALS, RIGHT, WRONG


@pytest.fixture(scope="module", name="client")
def corpus_client():
    """Two in-process workers, 1 GiB each: "with-slot" offers one GPU_SLOT, "plain" offers nothing."""
    from distributed import Scheduler, SpecCluster, Worker

    from gpu_dask_kit import lockfree, scheduler_view

    lockfree.install()  # as start_cluster does: an in-process scheduler and Python 3.11's cached_property deadlock

    def worker(name, resources):
        return {"cls": Worker, "options": {"nthreads": 1, "name": name, "memory_limit": "1GiB", "resources": resources}}

    spec = {"with-slot": worker("with-slot", {"GPU_SLOT": 1}), "plain": worker("plain", {})}
    # The answers here read session.client.scheduler_info(n_workers=-1)["workers"], as learners do: a plain distributed
    # Client can answer that with an empty dict under load (see scheduler_view; once a 06-2 answer divided by 0), so
    # this is the client the kit's sessions get.
    with SpecCluster(workers=spec, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}) as cluster, scheduler_view.new_client(cluster) as c:
        c.wait_for_workers(2)
        FIRST_STREAM[c.id] = c.scheduler_comm
        yield c
        FIRST_STREAM.pop(c.id)


#: The batched stream each shared client opened first: distributed opens a new one when the connection is lost.
FIRST_STREAM: dict[str, object] = {}


@pytest.fixture(autouse=True)
def client_kept_its_connection(request):
    """After a test that used the shared ``client``: a task sent on the client's stream comes back, and the client still
    talks to the scheduler on the stream it opened first. A cancel that breaks distributed's ``stimulus_cancel`` assertion drops the connection
    and cancels every held future, and the test that fails is the next one on that client: this names the one that did it."""
    yield
    if "client" not in request.fixturenames:
        return
    client = request.getfixturevalue("client")
    assert client.submit(int, 1, pure=False).result(timeout=30) == 1  # after whatever the test sent on the stream
    assert client.scheduler_comm is FIRST_STREAM[client.id], "the shared client lost its connection to the scheduler during this test (it reconnected)"


class Session:
    """What the judges read from a notebook's ``session``: its client."""

    def __init__(self, client):
        self.client = client


def fit_one(data, feature_cols, target="y"):
    """The notebook's model, in NumPy: (features, coefficients, intercept, R²)."""
    X = np.column_stack([np.ones(len(data))] + [data[c].to_numpy() for c in feature_cols])
    y = data[target].to_numpy()
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    r2 = 1 - ((y - X @ coef) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    return tuple(feature_cols), coef[1:], float(coef[0]), float(r2)


def square(i):
    return i * i


def where_am_i(i):
    from distributed import get_worker

    return str(get_worker().name)


SEEDS = itertools.count(42)
WORKDIR = tempfile.TemporaryDirectory(prefix="gdk-exercises-")  # notebook 07's Parquet; removed at exit


def uneven(df, partition_info=None):
    """As notebook 04's set-up: partitions of different sizes (a typed row count cannot match a count by chance)."""
    return df.iloc[: len(df) - 10 * (partition_info["number"] % 5)] if partition_info else df


def slow_read(df):
    """As notebook 03's recipe on top of the source frame (without the sleep)."""
    return df


def _frame():
    """A persisted frame of 4 uneven partitions, new data each time: a wrong answer that changes it in place harms no other case."""
    return dask.datasets.timeseries(start="2000-01-01", end="2000-01-05", freq="600s", seed=next(SEEDS)).map_partitions(uneven).persist()


def namespace(key, client):
    """A fresh notebook-like namespace for ``key``: what its answer cell and its judge read."""
    from distributed import wait

    from gpu_dask_kit.exercises import fingerprint
    from gpu_dask_kit.scripts import options_from_args

    session = Session(client)
    ns = {"dask": dask, "da": da, "np": np, "pd": pd, "kit": kit, "session": session, "client": client}
    nb = key[:2]
    if nb == "00":
        ns["N"] = 1_000_000
    elif nb == "02":
        x = da.random.default_rng(12).random((400, 30), chunks=(100, 30)).persist()
        u, s, v = dask.persist(*da.linalg.svd(x))
        ns.update(x=x, u=u, s=s, v=v, s_host=np.asarray(s.compute()))
    elif nb == "03":  # as after notebook 03's Run All: ddf is the lazy recipe again, on top of raw
        raw = dask.datasets.timeseries(start="2000-01-01", end="2000-01-04", freq="600s", seed=next(SEEDS))
        if key == "03-2":  # as notebook 03 (to_backend): .persist() and dask.persist() then name the keys apart
            raw = raw.to_backend(dask.config.get("dataframe.backend"))
        ns.update(raw=raw, ddf=raw.map_partitions(slow_read), slow_read=slow_read)
    elif nb == "04":
        ddf = _frame()
        wait(ddf)
        ns.update(ddf=ddf, ddf_fingerprint=fingerprint(ddf))
    elif nb == "05":
        # New data each time: a learner's scatter(df) is keyed by df's content, and two tests on one key race (the
        # release of one test's future can drop the key while the other scatters it: its fits are then cancelled).
        rng = np.random.default_rng(next(SEEDS))
        df = pd.DataFrame({f"x{i}": rng.normal(size=300) for i in range(6)})
        df["y"] = 2 * df.x0 - 3 * df.x1 + rng.normal(scale=0.5, size=300)
        ns.update(df=df, features=[f"x{i}" for i in range(6)], fit_one=fit_one, fit_ols=dask.delayed(fit_one))
        ns["data_future"] = client.scatter(df, broadcast=True, hash=False)  # a new key per namespace
    elif nb == "06":
        ns.update(x=da.random.default_rng(6).random((250_000, 10), chunks=(62_500, 10)).persist(), N_COLS=10, to_host=lambda a: a)  # ~1% of the limits
    elif nb == "07":
        import dask.dataframe as dd

        rng = np.random.default_rng(7)
        raw = pd.DataFrame({"name": rng.choice([f"n{i}" for i in range(5)], size=1000), "x": rng.normal(size=1000)})
        lookups = {"name": {f"n{i}": i + 1 for i in range(5)}}
        processed = raw.assign(name=raw.name.map(lookups["name"]).astype("int32"))
        path = os.path.join(WORKDIR.name, "processed")
        if not os.path.exists(path):
            dd.from_pandas(processed, npartitions=4).to_parquet(path)  # several files, as notebook 07 writes
        ns.update(dd=dd, raw=dd.from_pandas(raw, npartitions=4), processed=dd.read_parquet(path), PROCESSED=path)
        ns.update(lookups=lookups, N_INPUT_ROWS=1000, medians={1: 3.13, 2: 1.93})
        ns["processed"].x.mean().compute()  # like notebook 07's cell 9: a computation on the data before the exercise
    elif nb == "08":
        parser = argparse.ArgumentParser()
        kit.add_cluster_args(parser)
        ns.update(parser=parser, options_from_args=options_from_args, where_am_i=where_am_i)
    elif nb == "09":
        ns["square"] = square
    return ns


def _run(code, key, client, history=True):
    """Run an answer cell in a notebook-like namespace; ``history``: IPython's ``In`` holds it, then the check cell."""
    ns = namespace(key, client)
    exec(compile(code, f"<answer {key}>", "exec"), ns)
    if history:
        ns["In"] = ["", code, f'exercises.check("{key}", globals())']
    return ns


KEYS = sorted(EXERCISES)


def test_every_exercise_has_six_wrong_answers_and_two_right_styles():
    for key in KEYS:
        assert len(WRONG.get(key, [])) >= 6, key
        assert len(RIGHT.get(key, [])) >= 2, key
        assert key in REVEALS, key


@pytest.mark.parametrize("key", KEYS)
def test_right_answers_in_two_styles_pass(key, client):
    for code in RIGHT[key]:
        verdict = judge(key, _run(code, key, client))
        assert verdict.correct, (key, code, verdict.message)


@pytest.mark.parametrize("key", KEYS)
def test_every_wrong_answer_is_rejected_with_a_hint_that_hides_the_answer(key, client):
    for label, code in WRONG[key]:
        ns = _run(code, key, client)
        verdict = judge(key, ns)
        assert not verdict.correct and verdict.answered, (key, label, verdict.message)
        assert verdict.message.startswith(f"Not yet ({key}): ") and len(verdict.message) > 40, (key, label, verdict.message)
        for secret in REVEALS[key](ns):
            assert secret.lower() not in verdict.message.lower(), (key, label, secret, verdict.message)
        for future in [v for v in ns.values() if hasattr(v, "cancel") and hasattr(v, "key")]:
            future.cancel()  # a task that asked for a resource no worker has would otherwise wait forever


@pytest.mark.parametrize("key", KEYS)
def test_the_reference_solution_passes_in_the_corpus_namespace(key, client, capsys):
    ns = namespace(key, client)
    exec(compile(EXERCISES[key].solution, key, "exec"), ns)
    assert judge(key, ns).correct, judge(key, ns).message
    solution(key)
    assert EXERCISES[key].solution.strip().splitlines()[0] in capsys.readouterr().out


def test_the_size_strings_a_hint_must_not_show_are_real_sizes():
    """The corpus' secret strings for sizes are what a learner would see: format_bytes of the answer."""
    assert format_bytes(int(0.6 * 16 * 2**30)) == "9.60 GiB" and format_bytes(4 * 2**30) == "4.00 GiB"


def test_a_wrong_attempt_then_the_right_one_in_the_same_kernel_passes(client):
    """The judge reads the LATEST submission of each key: computing one by one, then together, is "one call"."""
    ns = _run(FITS + "x0_results = [l.compute() for l in lazy_fits]", "05-2", client)
    assert not judge("05-2", ns).correct
    exec("x0_results = dask.compute(*lazy_fits)", ns)
    ns["In"] += ["x0_results = dask.compute(*lazy_fits)", 'exercises.check("05-2", globals())']
    assert judge("05-2", ns).correct, judge("05-2", ns).message


@pytest.fixture(name="one_worker")
def one_worker_client(client):
    """A client of one in-process worker, the default while the test runs (the corpus' ``client`` again after):
    a task that writes into its partition then writes into the persisted one itself. On the corpus' two workers the task
    may run on the worker that does not hold the partition (stolen under load), and write into a copy (seen in `make
    test`, sixteenth session)."""
    from distributed import Client, LocalCluster, default_client

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as own:
        yield own
    assert default_client() is client  # closed, the one-worker client is no longer the default: the corpus client is


def test_without_a_fingerprint_an_in_place_change_is_still_caught(one_worker):
    """A notebook without ddf_fingerprint: the judge compares partition 0's columns with what ddf declares."""
    client = one_worker
    ns = _run(INPLACE + "demeaned = ddf.map_partitions(demean)\n_ = demeaned.compute()", "04-1", client)
    del ns["ddf_fingerprint"]
    verdict = judge("04-1", ns)
    assert not verdict.correct and "has changed since it was persisted" in verdict.message, verdict.message
    ns = _run(DEMEAN + "demeaned = ddf.map_partitions(demean)", "04-1", client)
    del ns["ddf_fingerprint"]
    assert judge("04-1", ns).correct


def test_the_fingerprint_sees_a_changed_value(one_worker):
    """Changing x in place (no new column) is seen through the column sums of the fingerprint."""
    client = one_worker
    code = "def bump(df):\n    df['x'] += 1\n    return df\n\n_ = ddf.map_partitions(bump).compute()\n" + DEMEAN + "demeaned = ddf.map_partitions(demean)"
    verdict = judge("04-1", _run(code, "04-1", client))
    assert not verdict.correct and "values of column x changed" in verdict.message, verdict.message
