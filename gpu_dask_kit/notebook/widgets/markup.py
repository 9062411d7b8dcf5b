"""HTML and SVG text for the widgets, from the view-models. Pure string functions (no ipywidgets).

The monitor draws its bars and its time series itself, as HTML/SVG inside ``ipywidgets.HTML``: that
needs no JavaScript of its own (no bokeh ``output_notebook``/``push_notebook`` comm, which breaks when
JupyterLab reloads the page or the output is re-rendered), lives in the widget state (so a reloaded page
shows the latest values), and updates with one small message per refresh from any thread.
Elements carry ``data-*`` attributes (worker, memory, level) that the browser tests query.

Colours are JupyterLab's theme variables (``--jp-layout-color*``, ``--jp-ui-font-color*``, ...), each with a
light fallback for pages outside JupyterLab, so the widgets follow the light and the dark theme. Bars
are ``role="meter"`` with ``aria-valuenow/min/max`` and an ``aria-label``.
"""

from __future__ import annotations

import html
import time

from dask.utils import format_bytes

from .viewmodel import SERIES, Bar, History, MonitorModel

__all__ = ["status_html", "error_html", "monitor_header_html", "monitor_table_html", "chart_html", "STYLE"]

_esc = html.escape
_TEXT = "color:var(--jp-ui-font-color1,#212121)"

STYLE = """<style>
.gdkw-table{border-collapse:collapse;font-size:12px;font-family:var(--jp-ui-font-family,sans-serif);color:var(--jp-ui-font-color1,#212121)}
.gdkw-table th,.gdkw-table td{padding:2px 8px;text-align:left;vertical-align:middle;white-space:nowrap}
.gdkw-table th{color:var(--jp-ui-font-color1,#212121);border-bottom:1px solid var(--jp-border-color1,#bdbdbd)}
.gdkw-bar{position:relative;display:inline-block;width:160px;height:10px;background:var(--jp-layout-color3,#e0e0e0);border-radius:2px;vertical-align:middle}
.gdkw-fill{position:absolute;left:0;top:0;height:100%;border-radius:2px}
.gdkw-mark{position:absolute;top:-2px;width:2px;height:14px;background:var(--jp-ui-font-color0,#424242)}
.gdkw-num{font-variant-numeric:tabular-nums}
.gdkw-muted{color:var(--jp-ui-font-color2,#757575);font-size:11px}
.gdkw-chart{background:var(--jp-layout-color1,#fafafa);border:1px solid var(--jp-border-color1,#e0e0e0)}
.gdkw-chart text{fill:var(--jp-ui-font-color2,#616161)}
</style>"""


def status_html(
    *, state: str, mode: str | None = None, n_workers: int | None = None, dashboard_link: str | None = None, reason: str = "", message: str = ""
) -> str:
    """The controls' status line. ``state`` is "running", "stopped" or "busy" (``message`` says doing what).

    >>> "Stopped" in status_html(state="stopped")
    True
    """
    if state == "busy":
        return f"<div class='gdkw-status' data-state='busy' role='status' style='{_TEXT}'>&#8987; {_esc(message or 'Working')}&hellip;</div>"
    if state != "running":
        return f"<div class='gdkw-status' data-state='stopped' style='{_TEXT}'>&#9675; Stopped: no cluster running. Press <b>Start</b>.</div>"
    link = (
        f" &middot; Dashboard: <a href='{_esc(dashboard_link)}' target='_blank' rel='noopener' "
        f"style='color:var(--jp-content-link-color,#1976d2);text-decoration:underline'>{_esc(dashboard_link)}</a>"
        if dashboard_link
        else " &middot; no dashboard"
    )
    why = f"<div class='gdkw-muted gdkw-reason'>{_esc(reason)}</div>" if reason else ""
    return (
        f"<div class='gdkw-status' data-state='running' style='{_TEXT}'>&#9679; Running: <b>{_esc((mode or '?').upper())}</b> "
        f"cluster, <span class='gdkw-workers'>{n_workers}</span> worker(s){link}{why}</div>"
    )


def error_html(message: str | None) -> str:
    """The error box (empty when there is no error); the kit's message, word for word."""
    if not message:
        return ""
    return (
        "<div class='gdkw-error' role='alert' style='color:var(--jp-ui-font-color0,#212121);"
        "background:var(--jp-rendermime-error-background,#ffebee);border-left:3px solid var(--jp-error-color1,#e53935);"
        f"padding:4px 8px;white-space:pre-wrap'>{_esc(message)}</div>"
    )


def _aria(bar: Bar, worker: str) -> str:
    """A meter for assistive technology: percent of the bar's scale, with the label as its text."""
    what = f"worker {worker} {'GPU' if bar.memory == 'device' else 'host'} memory"
    if bar.fraction is None:  # no limit known: nothing to be a fraction of
        return f"role='img' aria-label='{_esc(what)}: {_esc(bar.label)}'"
    return (
        f"role='meter' aria-label='{_esc(what)}' aria-valuemin='0' aria-valuemax='100' "
        f"aria-valuenow='{bar.fraction * 100:.0f}' aria-valuetext='{_esc(bar.label)} ({bar.level})'"
    )


def _bar(bar: Bar | None, worker: str) -> str:
    if bar is None:
        return "<td class='gdkw-muted'>&ndash;</td>"
    width = 0.0 if bar.fraction is None else bar.fraction * 100
    mark = f"<div class='gdkw-mark' style='left:{bar.limit_fraction * 100:.1f}%'></div>" if bar.limit_fraction is not None else ""
    return (
        f"<td><div class='gdkw-bar' data-worker='{_esc(worker)}' data-memory='{bar.memory}' data-level='{bar.level}' "
        f"data-used='{bar.used}' title='{_esc(bar.label)}' {_aria(bar, worker)}><div class='gdkw-fill' style='width:{width:.1f}%;"
        f"background:{bar.colour}'></div>{mark}</div> <span class='gdkw-num' aria-hidden='true'>{_esc(bar.label)}</span></td>"
    )


def _bytes(value: int | None) -> str:
    return "<td class='gdkw-muted'>&ndash;</td>" if value is None else f"<td class='gdkw-num'>{_esc(format_bytes(value))}</td>"


def monitor_header_html(model: MonitorModel | None, *, note: str = "", compact: bool = False) -> str:
    """Title, worker count, time of the snapshot, and the one-line CPU-mode notice. ``compact`` (under the
    controls, whose status line already says which cluster, its workers and why): title and time only."""
    if model is None:
        return f"<div class='gdkw-monitor-head' data-state='idle' style='{_TEXT}'><b>Memory</b> &middot; {_esc(note or 'no cluster running')}</div>"
    when = time.strftime("%H:%M:%S", time.localtime(model.time))
    what = "" if compact else f"{model.mode.upper()} cluster, <span class='gdkw-n'>{model.n_workers}</span> worker(s) &middot; "
    head = (
        f"<div class='gdkw-monitor-head' data-state='live' data-time='{model.time:.3f}' style='{_TEXT}'><b>Memory</b> &middot; "
        f"{what}updated <span class='gdkw-when'>{when}</span>"
    )
    if note:
        head += f" &middot; <span class='gdkw-note'>{_esc(note)}</span>"
    head += "</div>"
    if model.mode_line and not compact:
        head += f"<div class='gdkw-mode' style='{_TEXT}'>&#9432; {_esc(model.mode_line)}</div>"
    return head


#: Hover text of a column whose figure differs from what a user may compare it with.
_HEADER_TITLES = {
    "GPU total in use (all processes)": " title='NVML: every process on this GPU plus memory the driver reserves "
    "(about 480 MiB on an idle H100, which nvidia-smi leaves out); read once a second, so it may trail a persist by a second'",
}


def monitor_table_html(model: MonitorModel | None) -> str:
    """One row per worker: on GPU the data-on-GPU bar (against the spill limit), host bar, spilled to host,
    spilled to disk, RMM in use, RMM pool reserved, and NVML's whole-GPU figure; on CPU host bar and disk."""
    if model is None:
        return ""
    cols = (
        ["Worker", "Data on GPU", "Host memory", "Spilled to host", "Spilled to disk", "RMM in use", "RMM pool", "GPU total in use (all processes)"]
        if model.gpu
        else ["Worker", "Host memory", "Spilled to disk"]
    )
    rows = []
    for r in model.rows:
        name = f"<td>{_esc(r.name)}<span class='gdkw-muted'> pid {r.pid}" + (f", GPU {r.device_index}" if r.device_index is not None else "") + "</span></td>"
        cells = [name]
        if model.gpu:
            cells += [_bar(r.device, r.name), _bar(r.host, r.name), _bytes(r.spilled_to_host), _bytes(r.spilled_to_disk)]
            cells += [_bytes(r.rmm_used), _bytes(r.rmm_pool_size), _bytes(r.gpu_total_in_use)]
        else:
            cells += [_bar(r.host, r.name), _bytes(r.spilled_to_disk)]
        rows.append(f"<tr class='gdkw-worker' data-worker='{_esc(r.name)}' data-pid='{r.pid}'>{''.join(cells)}</tr>")
    head = "".join(f"<th scope='col'{_HEADER_TITLES.get(c, '')}>{c}</th>" for c in cols)
    return f"{STYLE}<table class='gdkw-table'><tr>{head}</tr>{''.join(rows)}</table>"


def chart_html(history: History, model: MonitorModel | None, width: int = 520, height: int = 110) -> str:
    """An SVG time series of the cluster totals over the history's window (latest at the right edge)."""
    if model is None or len(history) == 0:
        return ""
    keys = [s for s in SERIES if model.gpu or s[0] not in ("device_data", "spilled_to_host")]
    now = history.latest_time or model.time
    span = max(30.0, min(history.window, now - (history.earliest_time or now)))  # grows to the window as data arrive
    limits = [("host_memory_limit", "#1e88e5")] + ([("device_memory_limit", "#76b900")] if model.gpu else [])
    top = max([v for k, *_ in keys for _, v in history.series(k)] + [2**20]) * 1.25  # scaled to the data
    left, pad = 4, 14

    def xy(t: float, v: float) -> str:
        x = left + (width - left - 2) * (1 - (now - t) / span)
        y = pad + (height - 2 * pad) * (1 - v / top)
        return f"{x:.1f},{y:.1f}"

    ago = f"{span / 60:.3g} min" if span >= 60 else f"{span:.0f} s"
    summary = ", ".join(f"{label} {format_bytes(history.series(key)[-1][1])}" for key, label, _ in keys)
    parts = [
        f"{STYLE}<svg class='gdkw-chart' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"xmlns='http://www.w3.org/2000/svg' role='img' aria-label='Cluster memory, last {ago}: {_esc(summary)}'>"
    ]
    for key, colour in limits:  # a limit is drawn when the data come near it (else it is in the legend)
        value = model.totals.get(key) or 0
        if value and value <= top:
            y = xy(now, value).split(",")[1]
            parts.append(
                f"<line x1='{left}' x2='{width - 2}' y1='{y}' y2='{y}' stroke='{colour}' stroke-dasharray='4 3' "
                f"stroke-opacity='0.6'><title>{_esc(key)}: {_esc(format_bytes(value))}</title></line>"
            )
    legend = []
    for key, label, colour in keys:
        points = history.series(key)
        path = " ".join(xy(t, v) for t, v in points)
        parts.append(f"<polyline data-series='{key}' data-points='{len(points)}' fill='none' stroke='{colour}' stroke-width='1.5' points='{path}'/>")
        legend.append(f"<span style='color:{colour}'>&#9632;</span> {label} <span class='gdkw-num'>{_esc(format_bytes(points[-1][1] if points else 0))}</span>")
    parts.append(f"<text x='{left + 2}' y='11' font-size='10'>{_esc(format_bytes(int(top)))}</text>")
    parts.append(f"<text x='{left + 2}' y='{height - 3}' font-size='10'>-{ago}</text>")
    parts.append(f"<text x='{width - 30}' y='{height - 3}' font-size='10'>now</text></svg>")
    limit_text = " &middot; ".join(
        f"{'host' if k.startswith('host') else 'GPU spill'} limit {_esc(format_bytes(model.totals[k]))}" for k, _ in limits if model.totals.get(k)
    )
    return (
        f"<div class='gdkw-chart-box'>{''.join(parts)}<div class='gdkw-muted'>Cluster totals, last {ago} "
        f"&middot; {' &middot; '.join(legend)}" + (f" &middot; {limit_text} (dashed when in range)" if limit_text else "") + "</div></div>"
    )
