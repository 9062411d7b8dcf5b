"""A small record of a persisted frame's partition 0, taken at set-up, to tell later whether it was changed in place."""

from __future__ import annotations

from typing import Any

from ..compute import to_host

__all__ = ["fingerprint", "same_fingerprint"]


def fingerprint(ddf: Any) -> dict[str, Any]:
    """A small record of partition 0 of a (persisted) Dask DataFrame: its columns, index names, attrs keys, rows and column sums.

    Taken right after ``persist()`` in the notebook, it lets a judge tell later whether that partition, as held
    in worker memory, was changed in place.
    """
    part = to_host(ddf.partitions[0].compute())
    numeric = [c for c in part.columns if str(part[c].dtype) != "object" and "str" not in str(part[c].dtype)]
    return {
        "columns": [str(c) for c in part.columns],
        "index": [str(n) for n in part.index.names],  # (learner review 59: df.index.name = "t" inside demean was unseen)
        "attrs": sorted(str(k) for k in getattr(part, "attrs", {})),  # (learner review 60: df.attrs[...] = ... was unseen)
        "rows": len(part),
        "sums": {str(c): float(part[c].sum()) for c in numeric},
    }


def same_fingerprint(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """None when the two records agree; else what changed, in words."""
    if before["columns"] != after["columns"]:
        added = [c for c in after["columns"] if c not in before["columns"]]
        return f"it has {'new columns ' + ', '.join(added) if added else 'different columns'}"
    if before.get("index", after.get("index")) != after.get("index"):
        return f"its index is named {after.get('index')} instead of {before.get('index')}"
    if before.get("attrs", after.get("attrs")) != after.get("attrs"):
        return f"its attrs (the frame's metadata dict) hold {after.get('attrs')} instead of {before.get('attrs')}"
    if before["rows"] != after["rows"]:
        return "its number of rows changed"
    changed = [c for c, s in before["sums"].items() if abs(after["sums"].get(c, float("nan")) - s) > 1e-9 * max(1.0, abs(s))]
    return f"the values of column {', '.join(changed)} changed" if changed else None
