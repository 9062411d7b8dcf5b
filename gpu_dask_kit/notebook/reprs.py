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
    """The spill limit as text: bytes, "off", or dask-cuda's own choice (``"default"``/``"auto"``, given on
    unified-memory GPUs, where the device has no memory of its own to spill from).

    >>> spill_text(2**30), spill_text(0), spill_text(None), spill_text("default")
    ('1.00 GiB', 'off', 'off', "dask-cuda's default ('default': no device spilling on a unified-memory GPU)")
    """
    nbytes = as_bytes(limit)
    if nbytes is not None:
        return format_bytes(nbytes)
    if isinstance(limit, str) and limit:
        return f"dask-cuda's default ({limit!r}: no device spilling on a unified-memory GPU)"
    return "off"


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
            rows.append(("Spill GPU&rarr;host above", esc(spill_text(session.plan.spec.device_limit_bytes))))
    row = template("row")
    body = "".join(row.substitute(label=k, value=v) for k, v in rows)
    notes = "".join(f"<li>{esc(n)}</li>" for n in session.notes)
    return template("session").substitute(rows=body, notes=f"<ul>{notes}</ul>" if notes else "")
