"""Real-browser fixtures: a real ``jupyter lab`` subprocess and Debian's Chromium through Playwright.

Run in their own pytest process (pytest-jupyter's fixtures in the same process error at teardown):

    python -m pytest tests/browser --confcutdir=tests/browser -p no:cacheprovider

Fixtures (reuse them in other browser tests):

- ``lab_server``: a ``LabServer`` with ``url``, ``token``, ``root_dir``, ``runtime_dir`` (the gpu-dask-kit
  registry dir the server and this test process share), ``pid``, ``api(...)``: the session's shared server
  (``shared_lab_server``); a module that needs a server started with its own environment overrides
  ``lab_server`` with ``own_lab_server`` (test_gpu_mode_browser does).
- ``browser`` (session): a Playwright Chromium browser.
- ``lab_page`` (function): a logged-in page with JupyterLab loaded; ``page.console_errors`` lists
  console errors and page errors. A screenshot goes to ``test-artifacts/`` when the test fails.
- helpers: ``open_notebook(page, path)``, ``run_command(page, id, args)``, ``kernel_client(server)``,
  ``save_screenshot(page, name)``.

Every fixture stops what it started, by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
# Debian's chromium also starts two chrome_crashpad_handler daemons (parent: PID 1); they exit when the
# browser closes (checked: none left after the browser tests). --disable-crashpad-for-testing would stop
# them but breaks navigation (net::ERR_ABORTED), so it is not used.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
LAB_READY = "#jp-main-dock-panel"


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.browser)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:PORT/ (the base URL, with a trailing slash)
    token: str
    root_dir: Path
    runtime_dir: Path  # GPU_DASK_KIT_RUNTIME_DIR of the server (and of this process)
    pid: int
    log_path: Path
    env: dict[str, str] = field(repr=False, default_factory=dict)
    jupyter_runtime_dir: Path | None = None

    def api(self, path: str, method: str = "GET", body: Any = None, timeout: float = 30) -> tuple[int, Any]:
        """Call a server route (``path`` relative to the base URL) with the token; (status, JSON or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path.lstrip("/"), data=data, method=method, headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                text = resp.read().decode()
                return resp.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as err:
            text = err.read().decode()
            try:
                return err.code, json.loads(text)
            except ValueError:
                return err.code, text

    def lab_url(self, path: str = "lab") -> str:
        return f"{self.url}{path}?token={self.token}"


def _stop_process_tree(pid: int, timeout: float = 20) -> None:
    """SIGTERM the process we started, wait, then kill it and any of its descendants still running."""
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    try:
        children = proc.children(recursive=True)
    except psutil.Error:
        children = []
    with contextlib.suppress(psutil.Error):
        proc.terminate()
    _, alive = psutil.wait_procs([proc], timeout=timeout)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    _, alive = psutil.wait_procs(children, timeout=10)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)


@contextlib.contextmanager
def start_lab(base: Path, log_name: str) -> Iterator[LabServer]:
    """A real ``jupyter lab`` on 127.0.0.1 with a token, ``--allow-root``, in a temp root dir under ``base``,
    started with this process's environment; stopped (by PID) on exit."""
    names = ("root", "gdk-runtime", "jupyter-runtime", "jupyter-config", "jupyter-data", "settings", "workspaces")
    root, runtime, jrt, cfg, jdata, data_settings, workspaces = (base / n for n in names)
    for d in (root, runtime, jrt, cfg, jdata, data_settings, workspaces):
        d.mkdir(mode=0o700)
    # no "get notified about Jupyter news?" toast over the screenshots (and no news fetch)
    notification = data_settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    token, port = secrets.token_hex(16), _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / log_name
    env = dict(
        os.environ,
        GPU_DASK_KIT_RUNTIME_DIR=str(runtime),
        JUPYTER_CONFIG_DIR=str(cfg),
        JUPYTER_RUNTIME_DIR=str(jrt),
        JUPYTER_DATA_DIR=str(jdata),
        PYTHONUNBUFFERED="1",
    )
    env.pop("JUPYTERHUB_SERVICE_PREFIX", None)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={data_settings}",
        f"--LabApp.workspaces_dir={workspaces}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = LabServer(f"http://127.0.0.1:{port}/", token, root, runtime, proc.pid, log_path, env, jrt)
    previous = os.environ.get("GPU_DASK_KIT_RUNTIME_DIR")
    os.environ["GPU_DASK_KIT_RUNTIME_DIR"] = str(runtime)  # this process reads the same registry
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}; see {log_path}")
            with contextlib.suppress(OSError):
                if server.api("api/status", timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab did not answer within 60 s; see {log_path}")
            time.sleep(0.25)
        yield server
    finally:
        _stop_process_tree(proc.pid)
        log.close()
        if previous is None:
            os.environ.pop("GPU_DASK_KIT_RUNTIME_DIR", None)
        else:
            os.environ["GPU_DASK_KIT_RUNTIME_DIR"] = previous


@pytest.fixture(scope="session")
def shared_lab_server(tmp_path_factory) -> Iterator[LabServer]:
    """One ``jupyter lab`` for the whole browser run (starting one costs seconds on 2 cores). Tests on it
    leave it as they found it: no kernel, no cluster, no record, default settings."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # make test-browser runs two workers, each with its own server
    with start_lab(tmp_path_factory.mktemp("lab"), f"jupyter-lab-{worker}.log" if worker else "jupyter-lab.log") as server:
        yield server


@pytest.fixture(scope="module")
def own_lab_server(tmp_path_factory, request) -> Iterator[LabServer]:
    """A ``jupyter lab`` for one module alone, started with the environment the module set first (e.g. the
    simulated GPUs of test_gpu_mode_browser, which every process the server starts must inherit)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    with start_lab(tmp_path_factory.mktemp("lab"), f"jupyter-lab-{name}.log") as server:
        yield server


def shut_down_kernels(server: LabServer) -> None:
    """Delete every session and kernel of ``server`` (each kernel's atexit closes the cluster it started)."""
    for route in ("api/sessions", "api/kernels"):
        status, items = server.api(route)
        for item in items if status == 200 else []:
            server.api(f"{route}/{item['id']}", method="DELETE")


@pytest.fixture(autouse=True)
def _no_kernel_outlives_its_test(request):
    """The server is shared: a test that failed half-way must not leave its kernel (and that kernel's
    cluster) to the next tests. Runs after the test's own fixtures have been torn down."""
    yield
    if "lab_server" in request.fixturenames:
        with contextlib.suppress(Exception):
            shut_down_kernels(request.getfixturevalue("lab_server"))


@pytest.fixture(scope="module")
def lab_server(shared_lab_server) -> LabServer:
    """The server a test uses: the shared one; a module that needs its own overrides this with ``own_lab_server``."""
    return shared_lab_server


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    with sync_playwright() as pw:
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        started = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        try:
            yield chromium
        finally:
            chromium.close()
            # the browser and the Playwright driver this fixture started, if any outlived close()
            _, alive = psutil.wait_procs([p for p in started if "chrom" in _name(p)], timeout=5)
            for p in alive:
                _stop_process_tree(p.pid, timeout=5)


def _name(proc: psutil.Process) -> str:
    try:
        return proc.name()
    except psutil.Error:
        return ""


def save_screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    page.screenshot(path=str(path))
    return path


@pytest.fixture
def lab_page(browser, lab_server, request):
    """A page with JupyterLab loaded and logged in with the token; ``page.console_errors`` collects errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text} @ {m.location.get('url', '')}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.console_errors = errors
    page.goto(lab_server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_selector(LAB_READY, timeout=60_000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined", timeout=30_000)
    page.evaluate("() => window.jupyterapp.restored")
    try:
        yield page
    finally:
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            with contextlib.suppress(Exception):
                save_screenshot(page, f"FAILED-{request.node.name}")
        context.close()


@contextlib.contextmanager
def settings_restored(server: LabServer, plugin: str) -> Iterator[None]:
    """Put a plugin's user settings back as they were when the block started (the server is shared)."""
    status, model = server.api(f"lab/api/settings/{plugin}")
    assert status == 200, model
    try:
        yield
    finally:
        status, answer = server.api(f"lab/api/settings/{plugin}", method="PUT", body={"raw": model.get("raw") or "{}"})
        assert status in (200, 204), (plugin, status, answer)


def run_command(page, command: str, args: dict | None = None) -> Any:
    """Execute a JupyterLab command (needs ``--LabApp.expose_app_in_browser=True``, as ``lab_server`` sets)."""
    return page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a).then(() => null)", [command, args or {}])


def open_notebook(page, path: str, timeout: float = 30_000):
    """Open the notebook ``path`` (relative to the server root) and wait for its panel; returns the panel locator."""
    run_command(page, "docmanager:open", {"path": path, "factory": "Notebook"})
    name = path.rsplit("/", 1)[-1]
    page.wait_for_selector(f".lm-TabBar-tab:has-text('{name}')", timeout=timeout)
    panel = page.locator(".jp-NotebookPanel:visible").first
    panel.wait_for(timeout=timeout)
    return panel


@contextlib.contextmanager
def kernel_client(server: LabServer, timeout: float = 60):
    """A real kernel started through the server's REST API, driven by jupyter_client; shut down after."""
    from jupyter_client import BlockingKernelClient

    status, model = server.api("api/kernels", method="POST", body={"name": "python3"})
    assert status == 201, model
    kid = model["id"]
    connection = server.jupyter_runtime_dir / f"kernel-{kid}.json"
    deadline = time.monotonic() + timeout
    while not connection.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no connection file {connection}")
        time.sleep(0.1)
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=timeout)
        yield client
    finally:
        client.stop_channels()
        server.api(f"api/kernels/{kid}", method="DELETE")


def execute(client, code: str, timeout: float = 120) -> str:
    """Run ``code`` in the kernel; return its stdout; raise with the traceback on error."""
    out: list[str] = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = client.execute_interactive(code, timeout=timeout, output_hook=hook)
    if reply["content"]["status"] != "ok":
        raise AssertionError("kernel error:\n" + "".join(out))
    return "".join(out)
