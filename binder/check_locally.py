"""Check the Binder set-up without Binder: what repo2docker would do, in a fresh virtual environment.

    .venv/bin/python binder/check_locally.py [--keep] [--skip-notebooks]

1. clone this repository (committed state) into a temp folder and create a fresh Python 3.11 venv;
2. run ``binder/postBuild`` there with a temp ``$HOME`` (as Binder's ``jovyan`` user would);
3. list the JupyterLab and server extensions (gpu-dask-kit, dask-labextension, widgets must be enabled);
4. run every notebook through ``binder/start gpu-dask-kit check`` (CPU, small scale);
5. start ``binder/start jupyter lab`` and open its default URL in Debian's Chromium (Playwright from this
   repository's .venv): JupyterLab must open ``notebooks/00_start_here.ipynb`` and show the GPU Dask sidebar.

Prints a summary with timings and the venv size; exits non-zero when a step fails. Everything it starts
is stopped by PID; the temp folder is removed unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def step(title: str) -> float:
    print(f"\n== {title}", flush=True)
    return time.perf_counter()


def run(cmd: list[str] | str, **kwargs) -> subprocess.CompletedProcess:
    print("$", cmd if isinstance(cmd, str) else " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def open_default_url(venv: Path, clone: Path, home: Path) -> str:
    """Start JupyterLab the way Binder does and return the notebook JupyterLab opened."""
    from playwright.sync_api import sync_playwright

    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, HOME=str(home), PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    env.pop("GPU_DASK_KIT_RUNTIME_DIR", None)
    log = open(home / "jupyter-lab.log", "w")
    server = subprocess.Popen(["bash", "binder/start", "jupyter", "lab", "--no-browser", "--allow-root",
                               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={token}"],
                              cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"jupyter lab did not start; see {home / 'jupyter-lab.log'}")
                time.sleep(0.5)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/?token={token}", wait_until="domcontentloaded")
                try:
                    page.wait_for_selector(".jp-NotebookPanel h1:has-text('Start here')", timeout=90_000)
                    page.wait_for_selector(".jp-NotebookPanel-toolbar :text('Python 3')", timeout=60_000)  # kernel started
                    page.wait_for_selector("#gpu-dask-kit-sidebar", state="attached", timeout=30_000)
                except Exception:
                    page.screenshot(path=str(home / "binder-FAILED.png"))
                    print("page:", page.url, "screenshot:", home / "binder-FAILED.png")
                    raise
                page.screenshot(path=str(home / "binder-default-url.png"))
                print("screenshot:", home / "binder-default-url.png")
                return page.url.split("?")[0]
            finally:
                browser.close()
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (venv, clone, logs)")
    parser.add_argument("--skip-notebooks", action="store_true", help="skip step 4 (running every notebook)")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="gdk-binder-"))
    clone, venv, home = base / "repo", base / "venv", base / "home"
    home.mkdir()
    timings: dict[str, float] = {}
    try:
        t = step("clone and fresh venv")
        run(["git", "clone", "-q", str(REPO), str(clone)])
        run([sys.executable if sys.version_info[:2] == (3, 11) else "python3.11", "-m", "venv", str(venv)])
        env = dict(os.environ, HOME=str(home), PATH=f"{venv / 'bin'}:{os.environ['PATH']}", PIP_QUIET="1")
        env.pop("GPU_DASK_KIT_RUNTIME_DIR", None)
        timings["venv"] = time.perf_counter() - t
        t = step("binder/postBuild")
        run(["bash", "binder/postBuild"], cwd=clone, env=env)
        timings["postBuild"] = time.perf_counter() - t
        step("extensions")
        labext = run(["jupyter", "labextension", "list"], cwd=clone, env=env, capture_output=True, text=True)
        listing = labext.stdout + labext.stderr
        for name in ("gpu-dask-kit", "dask-labextension", "@jupyter-widgets/jupyterlab-manager"):
            line = next((ln for ln in listing.splitlines() if name in ln), "")
            print(" ", line.strip())
            if "enabled" not in line or "OK" not in line:
                raise RuntimeError(f"{name} is not enabled in the Binder environment:\n{listing}")
        cuda = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; print(u.find_spec('dask_cuda') is not None)"],
                              capture_output=True, text=True).stdout.strip()
        print("  dask_cuda installed:", cuda)
        if not args.skip_notebooks:
            t = step("binder/start gpu-dask-kit check (every notebook, CPU, small)")
            run(["bash", "binder/start", "gpu-dask-kit", "check", "--notebook-dir", "notebooks"], cwd=clone, env=env)
            timings["notebooks"] = time.perf_counter() - t
        t = step("binder/start jupyter lab, default URL in Chromium")
        opened = open_default_url(venv, clone, home)
        print("  JupyterLab opened:", opened)
        if not opened.endswith("/lab/tree/notebooks/00_start_here.ipynb"):
            raise RuntimeError(f"JupyterLab opened {opened}, not notebooks/00_start_here.ipynb")
        timings["lab"] = time.perf_counter() - t
        size = subprocess.run(["du", "-sh", str(venv)], capture_output=True, text=True).stdout.split()[0]
        print("\n== Binder check passed: venv", size, "; " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
        return 0
    except (subprocess.CalledProcessError, RuntimeError) as exc:
        print(f"\n== Binder check FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print("kept:", base)
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
