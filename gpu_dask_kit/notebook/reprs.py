"""HTML representation of a session for notebooks (what runs, why, where the dashboard is).

The markup lives in ``templates/*.html`` (``string.Template``); this module only fills in escaped values.
"""

from __future__ import annotations

import functools
import html
from importlib import resources
from string import Template
from typing import TYPE_CHECKING

from ..memory import format_bytes

if TYPE_CHECKING:
    from ..session import ClusterSession

__all__ = ["session_html", "template"]


@functools.cache
def template(name: str) -> Template:
    """The ``templates/<name>.html`` template of this package."""
    text = resources.files(__package__).joinpath("templates", f"{name}.html").read_text(encoding="utf-8")
    return Template(text.strip())


def session_html(session: ClusterSession) -> str:
    """A compact table: mode and reason, workers, limits, dashboard link, and the notes."""
    esc = html.escape
    if session.closed:
        return f"<div><b>gpu-dask-kit session</b>: closed ({esc(session.mode.upper())}).</div>"
    rows = [
        ("Backend", f"{session.mode.upper()} &mdash; {esc(session.reason)}"),
        ("Workers", str(session.n_workers)),
        ("Scheduler", f"<code>{esc(session.scheduler_address)}</code>"),
    ]
    link = session.dashboard_link
    if link:
        rows.append(("Dashboard", f'<a href="{esc(link)}" target="_blank" rel="noopener">{esc(link)}</a>'))
    if session.plan is not None:
        limit = session.plan.kwargs.get("memory_limit")
        rows.append(("Host memory / worker", esc(format_bytes(limit) if isinstance(limit, int) and limit else str(limit or "no limit"))))
        if session.mode == "gpu":
            spill = session.plan.kwargs.get("device_memory_limit")
            rows.append(("Spill GPU&rarr;host above", esc(format_bytes(spill) if spill else "off")))
    row = template("row")
    body = "".join(row.substitute(label=k, value=v) for k, v in rows)
    notes = "".join(f"<li>{esc(n)}</li>" for n in session.notes)
    return template("session").substitute(rows=body, notes=f"<ul>{notes}</ul>" if notes else "")
