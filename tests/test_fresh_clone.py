"""A fresh clone on a machine without Node: `make setup` gets Node (and uv) from PyPI, builds the
JupyterLab extension, and `gpu-dask-kit lab` then serves 00_start_here. Slow (a whole `make setup`:
about 3.5 min here with empty package caches, less with uv's warm cache), so in .ci/run, not `make test`.

Node is taken off PATH by running with a PATH of one folder of symlinks to every tool on the real PATH
except node, nodejs, npm, npx, corepack, yarn and jlpm.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
NODE_TOOLS = {"node", "nodejs", "npm", "npx", "corepack", "yarn", "yarnpkg", "jlpm"}
URL_RE = re.compile(r"http://127\.0\.0\.1:\d+/lab/tree/00_start_here\.ipynb\?token=[0-9a-f]+")


def path_without_node(folder: Path) -> str:
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory) or "/.venv" in directory or "/.pyenv/shims" in directory:
            continue
        for entry in os.scandir(directory):
            target = folder / entry.name
            if entry.name in NODE_TOOLS or target.exists() or not os.access(entry.path, os.X_OK):
                continue
            target.symlink_to(entry.path)
    return str(folder)


def test_fresh_clone_without_node_sets_up_and_serves_the_workshop(tmp_path):
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("needs git and make")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "JUPYTER", "PYTHON"))}
    env["PATH"] = path_without_node(tmp_path / "bin")
    assert shutil.which("node", path=env["PATH"]) is None and shutil.which("python3", path=env["PATH"])
    started = time.monotonic()
    setup = subprocess.run(["make", "setup"], cwd=clone, env=env, capture_output=True, text=True, timeout=1500)
    assert setup.returncode == 0, setup.stdout[-4000:] + setup.stderr[-4000:]
    print(f"make setup in a fresh clone without Node: {time.monotonic() - started:.0f} s")
    assert (clone / "gpu_dask_kit" / "labextension" / "package.json").is_file()
    again = subprocess.run(["make", "--question", "setup"], cwd=clone, env=env)
    assert again.returncode == 0, "a second `make setup` would reinstall although nothing changed"

    proc = subprocess.Popen(
        [str(clone / ".venv" / "bin" / "gpu-dask-kit"), "lab", "--no-browser"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    children, lines, url = [], [], None
    try:
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
            lines.append(line)
            if m := URL_RE.search(line):
                url = m.group(0)
        assert url, "".join(lines)
        children = psutil.Process(proc.pid).children(recursive=True)
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.status == 200
    finally:
        proc.terminate()
        proc.wait(60)
        _, alive = psutil.wait_procs(children, timeout=30)
        for p in alive:
            p.kill()
    assert not alive
