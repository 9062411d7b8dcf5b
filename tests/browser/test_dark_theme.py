"""The GPU Dask sidebar follows JupyterLab's theme (Light -> Dark) and its memory bars are accessible.

A real ``jupyter lab`` (the shared one; the theme is set back afterwards), Debian's Chromium, a real CPU cluster started in a
real kernel (so the sidebar shows a session with memory bars). Screenshots: test-artifacts/sidebar-light.png
and test-artifacts/sidebar-dark.png.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest
from conftest import ARTIFACTS, _stop_process_tree, run_command, settings_restored

SIDEBAR = "#gpu-dask-kit-sidebar"
DARK = "JupyterLab Dark"

# the sidebar's colours as the browser computes them, and what the theme's variables resolve to
COLOURS_JS = r"""sel => {
  const panel = document.querySelector(sel);
  const probe = document.createElement('div');
  probe.style.background = 'var(--jp-layout-color1)';
  probe.style.color = 'var(--jp-ui-font-color1)';
  document.body.appendChild(probe);
  const theme = getComputedStyle(probe);
  const out = {
    background: getComputedStyle(panel).backgroundColor,
    text: getComputedStyle(panel).color,
    title: getComputedStyle(panel.querySelector('.gdk-title')).color,
    layout1: theme.backgroundColor,
    font1: theme.color,
    tracks: [...panel.querySelectorAll('.gdk-bar-track')].map(t => getComputedStyle(t).backgroundColor),
    // every painted background inside the sidebar, with its element's classes
    painted: [...panel.querySelectorAll('*')]
      .map(e => [e.className && e.className.baseVal === undefined ? e.className : e.tagName,
                 getComputedStyle(e).backgroundColor])
      .filter(([, c]) => c !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(c)),
  };
  probe.remove();
  return out;
}"""


def rgb(css: str) -> tuple[float, float, float]:
    """``rgb(r, g, b)`` / ``rgba(r, g, b, a)`` -> channels in [0, 1]."""
    match = re.match(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)", css)
    assert match, f"not an rgb() colour: {css!r}"
    return tuple(float(c) / 255 for c in match.groups())  # type: ignore[return-value]


def luminance(css: str) -> float:
    """WCAG relative luminance of a CSS colour (0 black .. 1 white)."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in rgb(css))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# a real CPU cluster in a script that holds it until its stdin closes (spawned workers re-import the
# script, hence a file and the __main__ guard)
CLUSTER_SCRIPT = """
import sys
import gpu_dask_kit

if __name__ == "__main__":
    s = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, verbose=False)
    print(s.id, flush=True)
    sys.stdin.read()
    s.close()
"""


@pytest.fixture
def cluster_script(lab_server, tmp_path) -> Iterator[tuple[str, list[int]]]:
    """(session id, worker PIDs) of a running CPU cluster the sidebar lists; closed (and checked) after."""
    script = tmp_path / "hold_cluster.py"
    script.write_text(CLUSTER_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], env=lab_server.env, cwd=tmp_path, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pids: list[int] = []
    try:
        sid = proc.stdout.readline().strip()
        assert sid, f"the cluster script ended with {proc.wait(timeout=60)} before printing its session id"
        record = json.loads((lab_server.runtime_dir / f"session-{sid}.json").read_text())
        pids = [p["pid"] for p in record["processes"]]
        yield sid, pids
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            _stop_process_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.stdin.close()
        proc.stdout.close()
        _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=20)
        for p in alive:
            _stop_process_tree(p.pid, timeout=5)
    assert not alive, f"workers still running after close: {[p.pid for p in alive]}"


def show_sidebar(page):
    run_command(page, "gpu-dask-kit:show-sidebar")
    page.wait_for_selector(f"{SIDEBAR} .gdk-gpus", state="visible", timeout=15_000)
    return page.locator(SIDEBAR)


@pytest.fixture
def theme_restored(lab_server):
    """The theme goes back to the user's setting before this test (Light) afterwards: the server is shared."""
    with settings_restored(lab_server, "@jupyterlab/apputils-extension:themes"):
        yield


def test_sidebar_follows_the_dark_theme_and_its_bars_are_accessible(lab_page, lab_server, cluster_script, theme_restored):
    status, env = lab_server.api("gpu-dask-kit/api/environment")
    assert status == 200, env
    warn, critical = env["memory_warn"], env["memory_critical"]
    assert 0 < warn < critical <= 1
    from gpu_dask_kit import monitor  # the one threshold: the server sends monitor's constants

    assert (warn, critical) == (getattr(monitor, "MEMORY_WARN", 0.8), getattr(monitor, "MEMORY_CRITICAL", 0.95))

    sid, _ = cluster_script
    sidebar = show_sidebar(lab_page)
    row = sidebar.locator(f"li.gdk-session[data-session-id='{sid}']")
    try:
        row.locator(".gdk-session-memory [role='meter']").first.wait_for(timeout=20_000)
    except Exception:  # what the page shows and what the server says, for the report
        print(lab_page.evaluate("() => document.querySelector('.gdk-sessions').outerHTML"))
        print(lab_server.api("gpu-dask-kit/api/sessions"))
        raise

    light = lab_page.evaluate(COLOURS_JS, SIDEBAR)
    assert luminance(light["background"]) > 0.7 and luminance(light["text"]) < 0.3, light
    sidebar.screenshot(path=str(ARTIFACTS / "sidebar-light.png"))

    run_command(lab_page, "apputils:change-theme", {"theme": DARK})
    lab_page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    # the theme's CSS is in once the sidebar's background has changed
    lab_page.wait_for_function(
        "([sel, before]) => getComputedStyle(document.querySelector(sel)).backgroundColor !== before", arg=[SIDEBAR, light["background"]], timeout=30_000
    )
    dark = lab_page.evaluate(COLOURS_JS, SIDEBAR)
    assert lab_page.evaluate("() => document.body.dataset.jpThemeName") == DARK

    # dark background, light text, readable, and both are the theme's own variables
    assert luminance(dark["background"]) < 0.1, dark
    assert luminance(dark["text"]) > 0.5 and luminance(dark["title"]) > 0.5, dark
    assert contrast(dark["background"], dark["text"]) >= 4.5, dark
    assert dark["background"] == dark["layout1"] and dark["text"] == dark["font1"], dark
    # no bar track, badge or button stays a light block
    assert dark["tracks"] and all(luminance(t) < 0.3 for t in dark["tracks"]), dark
    light_blocks = [(cls, c) for cls, c in dark["painted"] if luminance(c) > 0.4]
    assert not light_blocks, light_blocks

    meters = sidebar.locator("[role='meter']")
    assert meters.count() >= 1
    for i in range(meters.count()):
        m = meters.nth(i)
        name, now = m.get_attribute("aria-label"), m.get_attribute("aria-valuenow")
        assert name and m.get_attribute("aria-valuetext"), name
        assert (m.get_attribute("aria-valuemin"), m.get_attribute("aria-valuemax")) == ("0", "100"), name
        assert now is not None and 0 <= int(now) <= 100, (name, now)
        lvl = m.get_attribute("data-level")
        if "memory" in name:
            fraction = int(now) / 100
            if min(abs(fraction - warn), abs(fraction - critical)) > 0.01:  # clear of rounding
                expected = "critical" if fraction >= critical else "warn" if fraction >= warn else "ok"
                assert lvl == expected, (name, now, lvl, warn, critical)
    host = row.locator("[role='meter'][aria-label$='host memory']")
    assert host.count() == 1

    ARTIFACTS.mkdir(exist_ok=True)
    lab_page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=30_000)  # the theme switch's splash
    sidebar.screenshot(path=str(ARTIFACTS / "sidebar-dark.png"))
    lab_page.screenshot(path=str(ARTIFACTS / "lab-dark-with-sidebar.png"))
    assert [e for e in lab_page.console_errors if "gpu-dask-kit" in e or "gpu_dask_kit" in e] == []
