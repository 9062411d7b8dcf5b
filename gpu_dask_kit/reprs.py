"""HTML representation of a session for notebooks (what runs, why, where the dashboard is)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from .memory import format_bytes

if TYPE_CHECKING:
    from .cluster import ClusterSession


def session_html(session: "ClusterSession") -> str:
    """A compact table: backend and reason, workers, limits, dashboard link, and the notes."""
    esc = html.escape
    if session.closed:
        return f"<div><b>gpu-dask-kit session</b>: closed ({esc(session.backend.upper())}).</div>"
    rows = [("Backend", f"{session.backend.upper()} &mdash; {esc(session.reason)}"),
            ("Workers", str(session.n_workers)),
            ("Scheduler", f"<code>{esc(session.scheduler_address)}</code>")]
    link = session.dashboard_link
    if link:
        rows.append(("Dashboard", f'<a href="{esc(link)}" target="_blank" rel="noopener">{esc(link)}</a>'))
    if session.plan is not None:
        limit = session.plan.kwargs.get("memory_limit")
        rows.append(("Host memory / worker", esc(format_bytes(limit) if isinstance(limit, int) and limit else str(limit or "no limit"))))
        if session.backend == "gpu":
            rows.append(("Spill GPU&rarr;host above", esc(format_bytes(session.plan.kwargs.get("device_memory_limit") or 0) if session.plan.kwargs.get("device_memory_limit") else "off")))
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>" for k, v in rows)
    notes = "".join(f"<li>{esc(n)}</li>" for n in session.notes)
    return (f"<div class='gpu-dask-kit-session'><b>gpu-dask-kit session</b><table>{body}</table>"
            + (f"<ul>{notes}</ul>" if notes else "") + "</div>")
