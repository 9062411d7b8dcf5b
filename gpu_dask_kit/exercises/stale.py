"""What a check says when the data an answer needs is gone, or when there is no cluster: which names, which cells.

The chain (which names hold cancelled or orphaned futures, which cells make them) is the re-run hint's
(``gpu_dask_kit.notebook.rerun``); this module only phrases it for a check.
"""

from __future__ import annotations

from typing import Any

from distributed import get_client

from ..notebook.rerun import cells_making, stale_names, steps_to_remake

__all__ = ["cluster_state", "no_cluster", "gone_names", "remake_steps", "remade_after"]

#: What a check says in a kernel where no cluster was ever started (not "closed": nothing was).
NO_CLUSTER = (
    "Could not be checked ({key}): no cluster was started yet in this kernel: run the set-up cell (the one with "
    "`session = kit.start_cluster(...)`){cell}, then your answer cell, then this check."
)


def cluster_state(namespace: dict[str, Any]) -> str:
    """ "running", "closed" (a session or client that was closed) or "none" (no session and no client in this kernel)."""
    client = getattr(namespace.get("session"), "client", None)
    if client is None:
        try:
            client = get_client()
        except ValueError:
            return "none"
    return "closed" if str(getattr(client, "status", "")) in ("closed", "closing") else "running"


def _history(namespace: dict[str, Any]) -> list[str]:
    history = namespace.get("In")
    return [str(s) for s in history] if isinstance(history, list) else []


def no_cluster(key: str, namespace: dict[str, Any]) -> str:
    """The sentence for a kernel where no cluster was started (names the set-up cell when the history has it)."""
    numbers = cells_making(_history(namespace), "session")
    return NO_CLUSTER.format(key=key, cell=f" (In [{numbers[-1]}])" if numbers else "")


def gone_names(namespace: dict[str, Any], reads: set[str] | None = None) -> str | None:
    """ "`x` (In [3]), `u` (In [5])": the names whose data on the cluster is gone and the cells that make them (only those
    in ``reads``, when given: what the answer cell needs); None: none."""
    stale = stale_names(namespace, "restarted") + stale_names(namespace, "closed")
    names = [n for n in stale if n not in ("session", "client") and (reads is None or n in reads)]
    if not names:
        return None
    history = _history(namespace)
    parts = []
    for name in dict.fromkeys(names):
        numbers = cells_making(history, name)
        parts.append(f"`{name}` ({' then '.join(f'In [{n}]' for n in numbers)})" if numbers else f"`{name}`")
    return ", ".join(parts[:6])


def remake_steps(namespace: dict[str, Any], reads: set[str] | None = None, named: tuple[int, ...] = ()) -> str | None:
    """ "the cell that makes `x` (In [3]), then the cell that makes `s` (In [6])": the cells to run again, in order, for
    the names whose data on the cluster is gone (only those in ``reads``, when given), with the gone data THOSE cells
    read first (`s` made from a persisted `x` that a restart cancelled too); None: nothing is gone. ``named``: cells the
    sentence names already (the start cell), left out."""
    stale = [n for n in stale_names(namespace, "restarted") + stale_names(namespace, "closed") if n not in ("session", "client")]
    wanted = [n for n in dict.fromkeys(stale) if reads is None or n in reads]
    if not wanted:
        return None
    return steps_to_remake({**namespace, "In": _history(namespace)}, wanted, gone=stale, named=named) or (None if named else gone_names(namespace, reads))


def remade_after(namespace: dict[str, Any], data: str, answer: str) -> str | None:
    """A sentence when a cell that assigns ``data`` ran after the latest cell that assigns ``answer`` (``data`` was made
    again since the answer was made from it: the answer holds the old one); None otherwise, or outside IPython."""
    history = _history(namespace)
    made = cells_making(history[:-1], data)
    answered = [n for n in cells_making(history[:-1], answer)]
    if not made or not answered or made[-1] < answered[-1]:
        return None
    return (
        f"{data} was made again (In [{made[-1]}]) after your answer cell ran (In [{answered[-1]}]), so {answer} was made "
        f"from the {data} of before, not from this one: run your answer cell again, then this check."
    )
