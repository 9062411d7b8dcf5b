"""Re-running ``start_cluster()`` on a cluster changed outside the kit (gpu_dask_kit.reuse): after
``client.close()``, after closing the cluster by hand, after scaling it by hand or making it adaptive. Real CPU
clusters: the worker PIDs are what shows the same workers were kept or the old ones ended."""

from __future__ import annotations

import psutil

import gpu_dask_kit as kit
from gpu_dask_kit import registry

from .conftest import wait_for_no_new_children

SMALL = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def _worker_pids(session):
    return sorted(w.pid for w in session.memory().workers)


def test_client_close_then_rerun_reuses_the_running_cluster(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    pids = _worker_pids(session)
    session.client.close()  # how dask-tutorial's notebooks end: the cluster keeps running
    capsys.readouterr()
    again = kit.start_cluster(**SMALL)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Reusing the running CPU cluster (same options): its client had been closed"), first
    assert again is session and again.client.status == "running"
    assert _worker_pids(again) == pids  # the same two workers, not two more beside them
    assert again.client.submit(sum, [1, 2]).result() == 3
    assert len(registry.list_sessions()) == 1
    again.close()
    assert not wait_for_no_new_children(no_leaks)


def test_client_close_then_other_options_close_the_old_cluster(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    pids = _worker_pids(session)
    session.client.close()
    capsys.readouterr()
    other = kit.start_cluster(**{**SMALL, "n_workers": 1})
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "Closing the running CPU cluster first, because options changed (n_workers: 2 -> 1). "
        "Its client had been closed (client.close() leaves a cluster running)."
    )
    assert session.closed and other is not session and other.n_workers == 1
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    assert len(registry.list_sessions()) == 1
    other.close()


def test_cluster_closed_by_hand_is_replaced(no_leaks, capsys):
    session = kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB")
    session.client.cluster.close()
    fresh = kit.start_cluster(n_workers=1, memory_limit="1GiB")
    assert fresh is not session and session.closed and fresh.is_alive()
    assert capsys.readouterr().out.startswith("Started a CPU cluster with 1 worker(s).")
    fresh.close()


def test_rerun_after_scaling_outside_says_what_runs_and_scales_back(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    session.client.cluster.scale(3)  # not session.scale(): the kit's options still say 2
    session.client.wait_for_workers(3, timeout=120)
    capsys.readouterr()
    again = kit.start_cluster(**SMALL)
    first = capsys.readouterr().out.splitlines()[0]
    assert again is session
    assert first == (
        "Reusing the running CPU cluster (same options), which had been scaled to 3 worker(s) outside the kit "
        "(3 running): scaled it back to the 2 this call asks for. session.close() to start afresh."
    )
    assert again.n_workers == 2 and len(again.client.cluster.worker_spec) == 2
    # and a plain re-run now really is "same options"
    kit.start_cluster(**SMALL)
    assert capsys.readouterr().out.splitlines()[0] == "Reusing the running CPU cluster (same options); session.close() to start afresh."
    again.close()


def test_rerun_leaves_an_adaptive_cluster_as_it_is_and_says_so(no_leaks, capsys):
    session = kit.start_cluster(**SMALL)
    session.adapt(minimum=3, maximum=3)
    session.client.wait_for_workers(3, timeout=120)
    capsys.readouterr()
    assert kit.start_cluster(**SMALL) is session
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Reusing the running CPU cluster (same options); it is adaptive and has 3 worker(s) now (asked for 3), left as it is."), first
    assert session.n_workers == 3
    session.close()


def test_scale_after_adapt_stops_adaptive_scaling(no_leaks):
    """``session.scale(n)`` asks for a fixed number: the session's adaptive scaling is stopped, or it would undo it."""
    import time

    session = kit.start_cluster(**SMALL)
    adaptive = session.adapt(minimum=3, maximum=3, interval="200ms")
    session.client.wait_for_workers(3, timeout=120)
    session.scale(1, timeout=120)
    assert adaptive.state == "stopped" and session.adaptive is None
    time.sleep(2)  # ten adaptive intervals: a running Adaptive would have asked for 3 again
    assert session.n_workers == 1
    session.close()
