"""What ``start_cluster()`` does with the session this process already has: reuse it, or close it first.

It looks at what is *running*, not only at the options the session was started with:

- same options, everything running as started: reuse it (the notebook's start cell re-run);
- other options (or other ``security``): close it, then start the new one;
- its client was closed (``client.close()``, how dask-tutorial's notebooks end) but its cluster still runs:
  same options reuse the cluster with a new client (``session.client``), other options close it;
- its cluster was scaled outside the kit (``client.cluster.scale(10)``): say how many workers run and scale
  it back to what the call asks for (an adaptive cluster is left as it is, and that is said);
- its cluster is gone (closed by hand): the session is closed and a new one starts.
"""

from __future__ import annotations

from typing import Any

from .deploy import local as _local
from .errors import ClusterStartError
from .options import ClusterOptions

__all__ = ["Decision", "decide", "expected_workers", "requested_workers"]


class Decision:
    """``reuse`` (the session to return; None: close the live one and start afresh) and the line to print."""

    def __init__(self, reuse: Any = None, message: str = "") -> None:
        self.reuse, self.message = reuse, message


def expected_workers(session: Any) -> int | None:
    """The worker count the session was started (or ``session.scale()``-d) with."""
    if session.options.n_workers is not None:
        return int(session.options.n_workers)
    return int(session.plan.n_workers) if session.plan is not None else None


def requested_workers(cluster: Any) -> int | None:
    """How many workers the cluster is set to have now (``worker_spec`` follows ``cluster.scale()``)."""
    spec = getattr(cluster, "worker_spec", None)
    return len(spec) if spec is not None else None


def _adaptive(session: Any) -> bool:
    """Whether ``session.adapt()`` is on (distributed's ``Adaptive.state``; clusters have no public accessor)."""
    adaptive = getattr(session, "adaptive", None)
    return adaptive is not None and getattr(adaptive, "state", "running") in ("starting", "running")


def _cluster_running(session: Any) -> bool:
    status = getattr(getattr(session.cluster, "status", None), "name", "running")
    return session.cluster is not None and status == "running"


def decide(live: Any, opts: ClusterOptions, security: Any, close_call: str = "session.close()") -> Decision:
    """Decide about ``live`` (the process's last session, not closed) for a start with ``opts``; messages
    name ``close_call``, the caller's way to close (``await session.close()`` in async code)."""
    label = live.mode.upper()
    client_closed = live.kit_client.status != "running"
    if live.options.connect_mode:
        if client_closed:
            return Decision()  # nothing of ours runs: forget the connection
    elif not _cluster_running(live):
        return Decision()  # the cluster was closed by hand: clean up and start afresh
    if live.options != opts or live.security != security:
        changed = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in opts.changed_from(live.options).items()) or "security"
        if live.options.connect_mode:
            return Decision(
                message=f"Disconnecting from the scheduler at {live.scheduler_address} first, because options changed ({changed}); "
                "the kit did not start that cluster, so it keeps running."
            )
        note = " Its client had been closed (client.close() leaves a cluster running)." if client_closed else ""
        return Decision(message=f"Closing the running {label} cluster first, because options changed ({changed}).{note}")
    if client_closed:
        live.renew_client()
        return Decision(
            live,
            f"Reusing the running {label} cluster (same options): its client had been closed (client.close() leaves the "
            f"cluster running), so it has a new one, session.client. {close_call} stops the cluster.",
        )
    what = "connection" if live.options.connect_mode else f"{label} cluster"
    return Decision(live, _scaled_back(live, label, close_call) or f"Reusing the running {what} (same options); {close_call} to start afresh.")


def _scaled_back(live: Any, label: str, close_call: str) -> str | None:
    """When the cluster was scaled outside the kit: bring it back to the expected size and say so."""
    if live.options.connect_mode:
        return None
    expected, requested = expected_workers(live), requested_workers(live.cluster)
    if expected is None or requested is None or requested == expected:
        return None
    running = live.n_workers
    if _adaptive(live):
        return (
            f"Reusing the running {label} cluster (same options); it is adaptive and has {running} worker(s) now "
            f"(asked for {requested}), left as it is. {close_call} to start afresh with {expected}."
        )
    live.cluster.scale(expected)
    if not _local.wait_for_workers(live.kit_client, expected, 60.0):
        raise ClusterStartError(
            f"The running {label} cluster had been scaled to {requested} worker(s) outside the kit and did not come back to "
            f"{expected} within 60 s; it has {live.n_workers}. Call session.close() and start again."
        )
    return (
        f"Reusing the running {label} cluster (same options), which had been scaled to {requested} worker(s) outside the kit "
        f"({running} running): scaled it back to the {expected} this call asks for. {close_call} to start afresh."
    )
