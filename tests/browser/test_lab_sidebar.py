"""The GPU Dask sidebar, Launcher card and dask-labextension integration in a real JupyterLab.

The shared ``jupyter lab``, a fresh page per test. Real clusters only (CPU here).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO, execute, kernel_client, run_command, save_screenshot, settings_restored

SIDEBAR = "#gpu-dask-kit-sidebar"
OURS = ("gpu-dask-kit", "gpu_dask_kit")


def our_errors(page) -> list[str]:
    return [e for e in page.console_errors if any(k in e for k in OURS)]


def show_sidebar(page):
    run_command(page, "gpu-dask-kit:show-sidebar")
    page.wait_for_selector(f"{SIDEBAR} .gdk-gpus", state="visible", timeout=15_000)
    return page.locator(SIDEBAR)


def session_row(page, session_id: str):
    return page.locator(f"{SIDEBAR} li.gdk-session[data-session-id='{session_id}']")


def registry_ids(server, started_by: str | None = None) -> list[str]:
    status, model = server.api("gpu-dask-kit/api/sessions")
    assert status == 200, model
    return [s["id"] for s in model["sessions"] if started_by is None or s["started_by"] == started_by]


def wait_until(predicate, timeout=15.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            return value
        time.sleep(interval)
    return value


@pytest.fixture(autouse=True)
def patient_heartbeat(monkeypatch):
    """A kernel is "dead" to jupyter_client after one heartbeat unanswered for 1 s, which a loaded
    2-core machine misses while the kernel starts ("Kernel died before replying to kernel_info"):
    allow 10 s. A kernel that really dies still fails the test."""
    from jupyter_client.channels import HBChannel

    monkeypatch.setattr(HBChannel, "time_to_dead", 10.0)


@pytest.fixture(scope="module")
def workshop_notebook(lab_server) -> Path:
    """``00_start_here.ipynb`` in the server root: the real one when the repo has it, else a stub."""
    target = lab_server.root_dir / "00_start_here.ipynb"
    real = REPO / "notebooks" / "00_start_here.ipynb"
    if real.exists():
        target.write_bytes(real.read_bytes())
    else:
        target.write_text(
            json.dumps(
                {
                    "cells": [{"id": "start", "cell_type": "markdown", "metadata": {}, "source": ["# Start here (test stub)"]}],
                    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                    "nbformat": 4,
                    "nbformat_minor": 5,
                }
            )
        )
    return target


def test_page_loads_and_sidebar_shows_cpu_mode(lab_page, lab_server):
    from gpu_dask_kit.environment import detect

    sidebar = show_sidebar(lab_page)
    if detect().gpus:
        lab_page.wait_for_selector(f"{SIDEBAR} .gdk-gpu-card", timeout=15_000)
    else:
        notice = sidebar.locator(".gdk-cpu-mode")
        notice.wait_for(timeout=15_000)
        text = notice.inner_text()
        assert "No GPU" in text and notice.locator(".gdk-reason").inner_text().strip()
        assert text.lower().count("cpu mode") == 1, f"the notice should say CPU mode once: {text!r}"
    sidebar.locator(".gdk-no-sessions").wait_for(timeout=15_000)
    assert our_errors(lab_page) == []
    # the extension is listed enabled and OK in the page config (no build error)
    ids = lab_page.evaluate("() => window.jupyterapp.commands.listCommands().filter(c => c.startsWith('gpu-dask-kit:'))")
    assert set(ids) >= {"gpu-dask-kit:open-workshop", "gpu-dask-kit:check-environment", "gpu-dask-kit:show-sidebar"}


def test_check_environment_dialog(lab_page, lab_server):
    sidebar = show_sidebar(lab_page)
    sidebar.locator("button.gdk-check-env").click()
    dialog = lab_page.locator(".jp-Dialog")
    dialog.wait_for(timeout=15_000)
    text = dialog.inner_text()
    assert "distributed" in text and "Python" in text
    # one sentence names the mode and why (the report's reason_text), once
    env = lab_server.api("gpu-dask-kit/api/environment")[1]
    assert text.count(env["reason_text"]) == 1 and text.lower().count(f"{env['mode']} mode") == 1
    # the one memory-warning threshold, as the server sends it
    assert f"from {round(env['memory_warn'] * 100)}% of a limit, critical from {round(env['memory_critical'] * 100)}%" in text
    save_screenshot(lab_page, "environment-dialog")
    dialog.locator("button:has-text('Close')").click()
    assert our_errors(lab_page) == []


def test_kernel_cluster_appears_and_shut_down_removes_it(lab_page, lab_server):
    sidebar = show_sidebar(lab_page)
    with kernel_client(lab_server) as kc:
        out = execute(kc, "import gpu_dask_kit, os\ns = gpu_dask_kit.start_cluster(device='cpu', n_workers=1, verbose=False)\nprint(s.id, os.getpid())")
        sid, kernel_pid = out.split()
        record = json.loads((lab_server.runtime_dir / f"session-{sid}.json").read_text())
        pids = [p["pid"] for p in record["processes"]]
        assert pids and all(psutil.pid_exists(p) for p in pids)

        started = time.monotonic()
        row = session_row(lab_page, sid)
        row.wait_for(timeout=10_000)
        appeared = time.monotonic() - started
        assert "CPU" in row.inner_text() and "notebook" in row.inner_text()
        assert row.locator("a.gdk-dashboard-link").get_attribute("href")
        # memory totals arrive from the scheduler within a poll or two
        row.locator(".gdk-session-memory").wait_for(timeout=15_000)
        sidebar.screenshot(path=str(REPO / "test-artifacts" / "sidebar-cpu-session.png"))
        save_screenshot(lab_page, "lab-with-sidebar-session")

        row.locator("button.gdk-shutdown").click()
        row.wait_for(state="detached", timeout=30_000)
        _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=20)
        assert not alive, f"workers still running after Shut down: {[p.pid for p in alive]}"
        assert sid not in registry_ids(lab_server)
        assert not (lab_server.runtime_dir / f"session-{sid}.json").exists()
        assert psutil.pid_exists(int(kernel_pid))  # the kernel itself is not ours to stop
    assert appeared < 10
    assert our_errors(lab_page) == []


def test_stale_session_is_marked_and_can_be_removed(lab_page, lab_server):
    # a process registers a session and exits: its record is stale
    code = (
        "from gpu_dask_kit import registry\n"
        "r = registry.register(scheduler_address='tcp://127.0.0.1:9', dashboard_link=None, mode='cpu',"
        " n_workers=1, options={}, started_by='script')\nprint(r.id)"
    )
    sid = subprocess.run([sys.executable, "-c", code], env=lab_server.env, capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    show_sidebar(lab_page)
    row = session_row(lab_page, sid)
    row.wait_for(timeout=10_000)
    # a poll that read the list while the process was still exiting shows it alive; the next shows it stale
    row.locator(".gdk-stale").wait_for(timeout=10_000)
    row.locator("button.gdk-shutdown").click()
    row.wait_for(state="detached", timeout=30_000)
    assert sid not in registry_ids(lab_server)


def test_launcher_card_opens_the_workshop_notebook(lab_page, workshop_notebook):
    run_command(lab_page, "launcher:create")
    card = lab_page.locator(".jp-LauncherCard:has-text('GPU Dask workshop')").first
    card.wait_for(timeout=15_000)
    card.click()
    lab_page.wait_for_selector(".lm-TabBar-tab:has-text('00_start_here.ipynb')", timeout=20_000)
    lab_page.locator(".jp-NotebookPanel:visible").first.wait_for(timeout=20_000)
    save_screenshot(lab_page, "workshop-opened")
    assert our_errors(lab_page) == []


def test_dask_pane_new_creates_a_kit_cluster_in_our_list(lab_page, lab_server):
    if not lab_page.evaluate("() => window.jupyterapp.commands.hasCommand('dask:launch-cluster')"):
        pytest.skip("dask-labextension's front end is not installed")
    before = set(registry_ids(lab_server))
    lab_page.evaluate("() => window.jupyterapp.shell.activateById('dask-dashboard-launcher')")
    new = lab_page.locator("#dask-dashboard-launcher [data-command='dask:launch-cluster']").first
    new.wait_for(timeout=15_000)
    new.click()
    ids = wait_until(lambda: set(registry_ids(lab_server, started_by="labextension")) - before, timeout=60)
    assert ids, "dask-labextension's + NEW did not create a kit (labextension) session"
    (sid,) = ids
    path = lab_server.runtime_dir / f"session-{sid}.json"
    record = json.loads(path.read_text())
    assert record["owner"]["pid"] == lab_server.pid  # the cluster lives in the Jupyter server
    # The record is written when the scheduler starts; the scheduler plugin adds each worker as it registers.
    pids = wait_until(lambda: [p["pid"] for p in json.loads(path.read_text())["processes"]], timeout=60)
    assert pids, "the session record never listed the workers of the + NEW cluster"
    # dask-labextension's front end points its pane at the new cluster when its launch request returns, which can be
    # after the record lists the workers: wait for that, or it replaces the URL "Open in Dask pane" puts there below.
    lab_page.wait_for_function(
        "() => [...document.querySelectorAll('#dask-dashboard-launcher input')].some(i => i.value.includes('dask/dashboard/'))", timeout=60_000
    )

    show_sidebar(lab_page)
    row = session_row(lab_page, sid)
    row.wait_for(timeout=10_000)
    assert "labextension" in row.inner_text()
    # "Open in Dask pane" puts the (proxied) dashboard URL into dask-labextension's URL box
    row.locator("button.gdk-open-pane").click()
    port = record["dashboard_link"].rsplit(":", 1)[1].split("/")[0]
    lab_page.wait_for_function(
        "port => [...document.querySelectorAll('#dask-dashboard-launcher input')].some(i => i.value.includes(port))", arg=port, timeout=10_000
    )
    show_sidebar(lab_page)
    save_screenshot(lab_page, "dask-new-cluster-in-sidebar")
    row.locator("button.gdk-shutdown").click()
    row.wait_for(state="detached", timeout=30_000)
    _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=20)
    assert not alive
    # dask-labextension's own list drops it too (closed through its manager, which forgets it once its close()
    # returned: after the row went and the processes ended, a moment later on a loaded machine)
    assert wait_until(lambda: lab_server.api("dask/clusters") == (200, []), timeout=30), lab_server.api("dask/clusters")
    assert our_errors(lab_page) == []


def gpu_reads_during(page, seconds: float) -> int:
    """How many ``GET gpus`` the page sends in the next ``seconds`` (the browser's resource timings)."""
    page.evaluate("() => performance.clearResourceTimings()")
    page.wait_for_timeout(seconds * 1000)
    return page.evaluate("() => performance.getEntriesByType('resource').filter(e => e.name.includes('gpu-dask-kit/api/gpus')).length")


def set_gpu_refresh(page, server, seconds: int) -> None:
    """Type a new "GPU refresh (seconds)" in JupyterLab's Settings editor, as a user does; wait until saved."""
    field = page.locator("input[id='jp-SettingsEditor-gpu-dask-kit:plugin_gpuRefreshSeconds']")
    field.fill(str(seconds))
    field.press("Tab")

    def saved():
        status, model = server.api("lab/api/settings/gpu-dask-kit:plugin")
        return status == 200 and json.loads(re.sub(r"//.*", "", model["raw"]) or "{}").get("gpuRefreshSeconds") == seconds

    assert wait_until(saved, timeout=20), f"the Settings editor did not save gpuRefreshSeconds={seconds}"


def test_poll_interval_setting_applies_without_reload(lab_page, lab_server):
    with settings_restored(lab_server, "gpu-dask-kit:plugin"):
        _poll_interval_setting_applies_without_reload(lab_page, lab_server)


def _poll_interval_setting_applies_without_reload(lab_page, lab_server):
    show_sidebar(lab_page)
    run_command(lab_page, "settingeditor:open", {"query": "GPU Dask"})
    lab_page.locator("input[id='jp-SettingsEditor-gpu-dask-kit:plugin_gpuRefreshSeconds']").wait_for(timeout=20_000)
    url = lab_page.url
    set_gpu_refresh(lab_page, lab_server, 30)
    lab_page.wait_for_timeout(1500)  # the read the change itself triggers
    slow = gpu_reads_during(lab_page, 8)
    set_gpu_refresh(lab_page, lab_server, 1)
    fast = gpu_reads_during(lab_page, 8)
    assert lab_page.url == url  # the same page: no reload
    assert slow <= 1 and fast >= 3, f"GET gpus in 8 s: {slow} at 30 s, {fast} at 1 s"
    assert our_errors(lab_page) == []
