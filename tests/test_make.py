"""`make lab`'s route from a checkout: nothing to rebuild once set up, and `gpu-dask-kit lab` serves
00_start_here with the URL printed last and JupyterLab's news toast answered in the venv's settings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
URL_RE = re.compile(r"http://127\.0\.0\.1:\d+/lab/tree/00_start_here\.ipynb\?token=[0-9a-f]+")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_setup_is_up_to_date_after_make_setup():
    if not (BIN.parent / ".gpu-dask-kit-installed").exists() or BIN.parent != REPO / ".venv":
        pytest.skip("not running from the checkout's `make setup` venv")
    out = subprocess.run(["make", "--question", "setup"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, (
        "make setup would reinstall although nothing changed:\n" + subprocess.run(["make", "-n", "setup"], cwd=REPO, capture_output=True, text=True).stdout
    )


def test_lab_from_the_checkout_serves_the_first_notebook_and_prints_the_url_last():
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    proc = subprocess.Popen([str(BIN / "gpu-dask-kit"), "lab", "--no-browser"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, children = [], []
    try:
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
            lines.append(line)
            if m := URL_RE.search(line):
                url = m.group(0)
        assert url, "no URL printed:\n" + "".join(lines)
        children = psutil.Process(proc.pid).children(recursive=True)
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.status == 200 and "JupyterLab" in resp.read().decode()
        root = url.split("/lab/")[0] + "/"
        with urllib.request.urlopen(root + "?token=" + url.rsplit("=", 1)[1], timeout=30) as resp:
            assert resp.url.split("?")[0].endswith("/lab/tree/00_start_here.ipynb")  # the default URL too
    finally:
        proc.terminate()
        proc.wait(60)
        _, alive = psutil.wait_procs(children, timeout=30)
        for p in alive:
            p.kill()
    assert not alive
    text = "".join(lines)
    assert text.rstrip().splitlines()[-1].strip() == url, text
    settings = Path(sys.prefix) / "share" / "gpu-dask-kit" / "lab-user-settings"
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    assert json.loads(news.read_text())["fetchNews"] == "false"
