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
from ..monitor import as_bytes

if TYPE_CHECKING:
    from ..session import ClusterSession

__all__ = ["session_html", "template", "spill_text"]


@functools.cache
def template(name: str) -> Template:
    """The ``templates/<name>.html`` template of this package."""
    text = resources.files(__package__).joinpath("templates", f"{name}.html").read_text(encoding="utf-8")
    return Template(text.strip())


def spill_text(limit: object) -> str:
    """The spill limit of the worker spec as text: bytes, a share each worker resolves on its own GPU (SLURM
    jobs), or "off" (no device spilling: none asked for, or a unified-memory GPU with no memory of its own).

    >>> spill_text(2**30), spill_text(0.8), spill_text(0), spill_text(None)
    ('1.00 GiB', "80% of each worker's GPU", 'off', 'off')
    """
    if isinstance(limit, float) and 0 < limit <= 1:
        return f"{limit:.0%} of each worker's GPU"
    nbytes = as_bytes(limit)
    return format_bytes(nbytes) if nbytes else "off"


def session_html(session: ClusterSession) -> str:
    """A compact table: mode and reason, workers, limits, dashboard link, and the notes."""
    esc = html.escape
    if session.closed:
        return f"<div><b>gpu-dask-kit session</b>: closed ({esc(session.mode.upper())}).</div>"
    rows = [
        ("Mode", f"{session.mode.upper()} &mdash; {esc(session.reason)}"),
        ("Workers", str(session.n_workers)),
        ("Scheduler", f"<code>{esc(session.scheduler_address)}</code>"),
    ]
    link = session.dashboard_link
    if link:
        rows.append(("Dashboard", f'<a href="{esc(link)}" target="_blank" rel="noopener">{esc(link)}</a>'))
    if session.plan is not None:
        limit = session.plan.spec.memory_limit
        rows.append(("Host memory / worker", esc(format_bytes(limit) if isinstance(limit, int) and limit else str(limit or "no limit"))))
        if session.mode == "gpu":
            rows.append(("Spill GPU&rarr;host above", esc(spill_text(session.plan.spec.device_memory_limit))))
    row = template("row")
    body = "".join(row.substitute(label=k, value=v) for k, v in rows)
    notes = "".join(f"<li>{esc(n)}</li>" for n in session.notes)
    return template("session").substitute(rows=body, notes=f"<ul>{notes}</ul>" if notes else "")
