"""GPU mode in a real JupyterLab on simulated GPUs: ClusterControls, MemoryMonitor
and the sidebar, with a screenshot kept in ``test-artifacts/gpu-mode-simulated.png``.

The Jupyter server, its kernel, the scheduler, the nannies and the workers all load the NVML stand-in of
``tests/simgpu`` (``PYTHONPATH`` + ``GPU_DASK_KIT_SIM_GPUS``): two simulated 16 GiB GPUs with 3 GiB used
each. Everything else is real: dask-cuda's ``LocalCUDACluster``, distributed, the kit, the browser.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from conftest import REPO, run_command, save_screenshot
from test_widgets_browser import STATUS, accept_kernel_dialog, cell, records, run_cell, wait_gone

SIMGPU = str(REPO / "tests" / "simgpu")
NOTEBOOK = "gpu_mode_check.ipynb"
SIDEBAR = "#gpu-dask-kit-sidebar"
GiB = 2**30


@pytest.fixture(scope="module")
def simulated_gpus(tmp_path_factory):
    """Two simulated GPUs for every process the Jupyter server starts (set before it starts)."""
    if importlib_missing("cupy") or importlib_missing("dask_cuda"):
        pytest.fail("the simulated-GPU tier needs CuPy and dask-cuda installed (make setup installs them)")
    config = {"count": 2, "total": 16 * GiB, "used": 3 * GiB, "state_dir": str(tmp_path_factory.mktemp("simulated-cuda-contexts"))}
    saved = {k: os.environ.get(k) for k in ("GPU_DASK_KIT_SIM_GPUS", "PYTHONPATH")}
    os.environ["GPU_DASK_KIT_SIM_GPUS"] = json.dumps(config)
    os.environ["PYTHONPATH"] = SIMGPU + (os.pathsep + saved["PYTHONPATH"] if saved["PYTHONPATH"] else "")
    try:
        yield config
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


@pytest.fixture(scope="module")
def lab_server(simulated_gpus, own_lab_server):
    """This module's own server, started after the simulated GPUs are in the environment."""
    assert own_lab_server.env["GPU_DASK_KIT_SIM_GPUS"] == os.environ["GPU_DASK_KIT_SIM_GPUS"]
    return own_lab_server


def write_notebook(root: Path) -> None:
    source = "import gpu_dask_kit\ngpu_dask_kit.show(interval=1.0)"
    nb = {
        "cells": [{"cell_type": "code", "id": "cell-0", "metadata": {}, "source": source, "outputs": [], "execution_count": None}],
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    }
    (root / NOTEBOOK).write_text(json.dumps(nb))


def test_controls_monitor_and_sidebar_in_gpu_mode(lab_page, lab_server):
    page = lab_page
    write_notebook(lab_server.root_dir)
    page.evaluate(f"() => window.jupyterapp.commands.execute('docmanager:open', {{path: '{NOTEBOOK}'}})")
    accept_kernel_dialog(page)
    pids: list[int] = []
    try:
        run_cell(page, 0)
        start = page.locator(".widget-button:has-text('Start')").first
        start.wait_for(timeout=120_000)  # kernel start + imports
        start.click()
        page.locator(f"{STATUS}[data-state='running']").wait_for(timeout=180_000)
        reason = page.locator(f"{STATUS} .gdkw-reason").inner_text()
        assert "GPU mode" in reason and "2 GPU" in reason, reason
        assert page.locator(".gdkw-error").count() == 0

        # MemoryMonitor: one row per GPU worker, each with a device bar from the workers' NVML metrics
        page.wait_for_function("() => document.querySelectorAll('tr.gdkw-worker').length === 2", timeout=30_000)
        page.wait_for_function("() => document.querySelectorAll(\".gdkw-bar[data-memory='device']\").length === 2", timeout=30_000)
        rows = page.locator("tr.gdkw-worker").all_inner_texts()
        assert all("GiB" in r for r in rows), rows
        pids = [int(p) for p in page.locator("tr.gdkw-worker").evaluate_all("rows => rows.map(r => r.dataset.pid)")]
        (record,) = records(lab_server)
        assert record["mode"] == "gpu" and {p["pid"] for p in record["processes"]} == set(pids)

        # the sidebar: both simulated GPUs, and the session in GPU mode with its device-memory line
        run_command(page, "gpu-dask-kit:show-sidebar")
        page.wait_for_selector(f"{SIDEBAR} .gdk-gpu-card", state="visible", timeout=30_000)
        names = page.locator(f"{SIDEBAR} .gdk-gpu-name").all_inner_texts()
        assert len(names) == 2 and all("Simulated" in n for n in names), names
        row = page.locator(f"{SIDEBAR} li.gdk-session[data-session-id='{record['id']}']")
        row.wait_for(timeout=30_000)
        assert row.locator(".gdk-session-title").inner_text().startswith("GPU · 2 worker")
        device = row.locator("[role='meter'][aria-label$='device memory']")
        device.wait_for(timeout=30_000)
        # The bar is the data the workers hold on the device (none yet) against the spill limit (2 x 0.8 of
        # 16 GiB); NVML's 2 x 3 GiB in use of 2 x 16 GiB appears only as the GPUs' total, all processes.
        detail = row.inner_text()
        assert re.search(r"0 B / spill at 25\.6\d* GiB", detail), detail
        assert int(device.get_attribute("aria-valuenow")) == 0
        assert re.search(r"GPU total in use \(all processes\) 6(\.0+)? GiB of 32(\.0+)? GiB", detail), detail
        time.sleep(1.5)  # one more monitor refresh before the picture
        path = save_screenshot(page, "gpu-mode-simulated")
        assert path.exists() and path.stat().st_size > 10_000

        page.locator(".widget-button:has-text('Stop')").first.click()
        page.locator(f"{STATUS}[data-state='stopped']").wait_for(timeout=120_000)
        assert not wait_gone(pids), "GPU workers left running after Stop"
    finally:
        status, sessions = lab_server.api("api/sessions")
        for s in sessions if status == 200 else []:
            if s.get("path", "").endswith(NOTEBOOK):
                lab_server.api(f"api/sessions/{s['id']}", method="DELETE")
        left = [p["pid"] for r in records(lab_server) for p in r.get("processes", [])] + pids
        assert not wait_gone(left), "cluster processes left running after the kernel was shut down"
    assert cell(page, 0).locator(".jp-OutputArea-child").count() == 1
