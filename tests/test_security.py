"""Security properties of the kit on a shared workshop machine (issue 6; threat model in docs/security.md).

Real parts only: real Dask clusters and processes, a real Jupyter server (pytest-jupyter) with its real
token/cookie/XSRF machinery, real certificates (trustme) and a real TLS scheduler.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
import urllib.parse
import uuid
from http.cookies import SimpleCookie
from pathlib import Path

import psutil
import pytest
from jupyter_server.utils import url_path_join

import gpu_dask_kit as kit
from gpu_dask_kit import ConnectError, KitError, cleanup, registry
from gpu_dask_kit.server import gateway as gateway_module
from gpu_dask_kit.server import handlers as handlers_module

from .conftest import kit_children

pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = "gpu-dask-kit/api"
VALID_UNKNOWN = "0123456789abcdef0123456789abcdef"
LOOPBACK = {"127.0.0.1", "::1"}
EVIL = "http://evil.example"
SERVER_DIR = Path(handlers_module.__file__).parent


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}}}


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    path = tmp_path / "gdk-runtime"
    monkeypatch.setenv("GPU_DASK_KIT_RUNTIME_DIR", str(path))
    return path


# --- every component of a default cluster listens on loopback only ----------------------------------------


def _listeners(pids, exclude=frozenset()) -> dict[tuple[str, int], int]:
    """{(ip, port): pid} of the LISTEN sockets of ``pids``, minus ``exclude``."""
    found = {}
    for pid in pids:
        try:
            connections = psutil.Process(pid).net_connections(kind="inet")
        except psutil.Error:
            continue
        for c in connections:
            if c.status == psutil.CONN_LISTEN and (c.laddr.ip, c.laddr.port) not in exclude:
                found[(c.laddr.ip, c.laddr.port)] = pid
    return found


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1].rstrip("/"))


def test_the_listener_check_sees_a_wildcard_bind():
    """The check below can fail: a socket bound to all interfaces is reported."""
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        found = _listeners([os.getpid()])
        assert found.get(("0.0.0.0", s.getsockname()[1])) == os.getpid()


def test_default_cluster_listens_on_loopback_only(no_leaks):
    own_before = set(_listeners([os.getpid()]))
    session = kit.start_cluster(n_workers=2, memory_limit="1GiB", verbose=False)
    try:
        info = session.client.scheduler_info(n_workers=-1)
        workers = info["workers"]
        worker_pids = session.client.run(os.getpid)  # {worker address: pid}
        children = kit_children() - no_leaks
        listening = _listeners([os.getpid(), *children], exclude=own_before)
        wide = {addr: pid for addr, pid in listening.items() if addr[0] not in LOOPBACK}
        assert not wide, f"sockets listening beyond loopback: {wide}"
        ports = {port: pid for (_, port), pid in listening.items()}
        expected = {"scheduler": _port(session.scheduler_address), "dashboard": info["services"]["dashboard"]}
        for i, (address, worker) in enumerate(sorted(workers.items())):
            expected[f"worker {i}"] = _port(address)
            expected[f"nanny {i}"] = _port(worker["nanny"])
            assert worker_pids[address] in children, "each worker is a child process of this test"
        missing = {name: port for name, port in expected.items() if port not in ports}
        assert not missing, f"not found listening on loopback: {missing} (listening: {listening})"
        assert {ports[expected["worker 0"]], ports[expected["worker 1"]]} == set(worker_pids.values())
        assert session.dashboard_link.startswith("http://127.0.0.1:")
        # Loopback is not authentication (docs/security.md, threat 2): the default cluster talks TLS, so a
        # client without the session's credentials is refused, and one with them (from the registry) gets in.
        from distributed import Client

        from gpu_dask_kit import credentials

        assert session.scheduler_address.startswith("tls://")
        with pytest.raises((TypeError, OSError)):
            Client(session.scheduler_address.replace("tls://", "tcp://"), set_as_default=False, timeout=5)
        with Client(session.scheduler_address, set_as_default=False, timeout=10, security=credentials.for_address(session.scheduler_address)) as owner:
            assert owner.run(os.getpid) == worker_pids
    finally:
        session.close()


# --- the server extension: authentication, XSRF, origin, host --------------------------------------------


def _route_table() -> list[tuple[str, type, dict]]:
    """Every route the server extension mounts (server/__init__.py: the kit's and the gateway's)."""
    return handlers_module.make_handlers("", None) + gateway_module.gateway_handlers("", {})  # type: ignore[arg-type]


def _enumerate_routes() -> list[tuple[str, str]]:
    """(method, path) for every verb of every route in make_handlers; a new route is covered automatically."""
    routes = []
    for pattern, handler, _kwargs in _route_table():
        path = re.sub(r"\(\?P<\w+>[^)]*\)", VALID_UNKNOWN, pattern).removesuffix("/?").lstrip("/")
        assert not set(path) & set("()[]?*+\\$^"), f"route {pattern!r}: teach _enumerate_routes its placeholder"
        verbs = [m for m in handler.SUPPORTED_METHODS if any(m.lower() in vars(k) for k in handler.__mro__ if k.__module__.startswith("gpu_dask_kit"))]
        assert verbs, pattern
        routes += [(verb, path) for verb in verbs]
    return routes


ROUTES = _enumerate_routes()
PATHS = sorted({path for _, path in ROUTES})
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def test_route_enumeration_matches_the_handlers_module(jp_serverapp):
    kit_handlers = {
        obj
        for module in (handlers_module, gateway_module)
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, handlers_module.KitHandler) and obj is not handlers_module.KitHandler
    }
    routed = {handler for _, handler, _ in _route_table()}
    assert kit_handlers == routed, "a KitHandler subclass is not routed (or a route is not a KitHandler)"
    assert ("DELETE", f"sessions/{VALID_UNKNOWN}") in ROUTES and ("GET", "environment") in ROUTES

    # the routes are really mounted on the server under the base URL
    def targets(router):
        for rule in getattr(router, "rules", []):
            yield rule.target
            yield from targets(rule.target)

    mounted = {t for t in targets(jp_serverapp.web_app.default_router) if isinstance(t, type) and issubclass(t, handlers_module.KitHandler)}
    assert mounted == routed


class Browser:
    """A logged-in browser: the login cookie and the _xsrf cookie, as JupyterLab's page would hold them."""

    def __init__(self, client, base_url):
        self.client, self.base_url = client, base_url
        self.jar = SimpleCookie()

    async def login(self, token: str) -> Browser:
        url = url_path_join(self.base_url, "login")
        response = await self.client.fetch(url, raise_error=False)
        self._keep(response)
        body = urllib.parse.urlencode({"password": token, "_xsrf": self.xsrf})
        response = await self.client.fetch(url, method="POST", body=body, headers={"Cookie": self.cookie}, follow_redirects=False, raise_error=False)
        assert response.code == 302, response.code
        self._keep(response)
        assert any(name.startswith("username-") for name in self.jar), "the login set no cookie"
        return self

    def _keep(self, response) -> None:
        for header in response.headers.get_list("Set-Cookie"):
            self.jar.load(header)

    @property
    def xsrf(self) -> str:
        return self.jar["_xsrf"].value

    @property
    def cookie(self) -> str:
        return "; ".join(f"{name}={morsel.value}" for name, morsel in self.jar.items())

    async def fetch(self, method: str, path: str, *, xsrf: bool = True, headers=None, body=None, cookie: bool = True):
        all_headers = {"Cookie": self.cookie} if cookie else {}
        if xsrf:
            all_headers["X-XSRFToken"] = self.xsrf
        all_headers.update(headers or {})
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = "{}"
        return await self.client.fetch(
            url_path_join(self.base_url, API, path),
            method=method,
            headers=all_headers,
            body=body,
            raise_error=False,
            follow_redirects=False,
            allow_nonstandard_methods=True,
        )


@pytest.fixture
def browser(jp_serverapp, http_server_client, jp_base_url, jp_asyncio_loop):
    login = Browser(http_server_client, jp_base_url).login(jp_serverapp.identity_provider.token)
    return jp_asyncio_loop.run_until_complete(login)


@pytest.fixture
def record():
    """A registered session of this process with no processes: shutting it down is observable (the record goes)."""
    rec = registry.register(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=0, options={})
    yield rec
    registry.unregister(rec.id)


def _path_for(path: str, rec) -> str:
    return path.replace(VALID_UNKNOWN, rec.id)


def _has_data(response) -> bool:
    try:
        model = json.loads(response.body or b"null")
    except ValueError:
        return False
    return isinstance(model, dict) and bool({"mode", "gpus", "sessions", "id", "configured"} & set(model))


async def test_a_logged_in_browser_can_use_every_route(browser, record):
    """Positive control for the rejections below: the same cookie, same-origin and with _xsrf, works."""
    for method, path in ROUTES:
        if method == "DELETE":
            continue
        response = await browser.fetch(method, _path_for(path, record))
        assert response.code == 200 and _has_data(response), (method, path, response.code)
    response = await browser.fetch("DELETE", f"sessions/{record.id}")
    assert response.code == 204
    with pytest.raises(KeyError):
        registry.get_session(record.id)


@pytest.mark.parametrize("credentials", ["none", "wrong token header", "wrong token in URL", "forged cookie", "stale _xsrf only"])
async def test_every_route_rejects_requests_without_valid_credentials(jp_serverapp, http_server_client, jp_base_url, record, credentials):
    headers, query = {}, ""
    if credentials == "wrong token header":
        headers["Authorization"] = "token " + "0" * 48
    elif credentials == "wrong token in URL":
        query = "?token=" + "0" * 48
    elif credentials == "forged cookie":
        port = http_server_client.get_http_port()
        headers["Cookie"] = f'username-127-0-0-1-{port}="2|1:0|10:1795332518|24:username-127-0-0-1-{port}|4:e30=|{"0" * 64}"'
    elif credentials == "stale _xsrf only":
        headers.update({"Cookie": "_xsrf=2|aa|bb|1", "X-XSRFToken": "2|aa|bb|1"})
    accepted = []
    for method in ("GET", *WRITE_VERBS):
        for path in PATHS:
            url = url_path_join(jp_base_url, API, _path_for(path, record)) + query
            response = await http_server_client.fetch(
                url,
                method=method,
                headers=headers,
                raise_error=False,
                follow_redirects=False,
                body="{}" if method in ("POST", "PUT", "PATCH") else None,
                allow_nonstandard_methods=True,
            )
            # the verbs a route implements answer 403; a verb it lacks may say so (405), with nothing in the reply
            refused = (401, 403) if (method, path) in ROUTES else (401, 403, 405)
            if response.code not in refused or _has_data(response):
                accepted.append((method, path, response.code))
    assert not accepted, f"answered without valid credentials ({credentials}): {accepted}"
    assert registry.get_session(record.id).id == record.id


async def test_cookie_requests_without_xsrf_token_are_rejected(browser, record):
    """A malicious page can make the browser send the login cookie, but it cannot read the _xsrf cookie."""
    accepted = []
    for method in WRITE_VERBS:
        for path in PATHS:
            response = await browser.fetch(method, _path_for(path, record), xsrf=False)
            if response.code != 403:
                accepted.append((method, path, response.code))
    assert not accepted, f"state-changing requests accepted without _xsrf: {accepted}"
    assert registry.get_session(record.id).id == record.id, "the session was shut down by a forged request"


@pytest.mark.parametrize("origin", [EVIL, "null", "http://127.0.0.1.evil.example", "http://localhost:1"])
async def test_cross_origin_cookie_requests_are_rejected(browser, record, origin):
    """A foreign page's fetch() carries its Origin: every verb on every route is refused, even with a
    valid _xsrf, and no CORS header lets the page read a reply."""
    accepted = []
    for method in ("GET", *WRITE_VERBS):
        for path in PATHS:
            response = await browser.fetch(method, _path_for(path, record), headers={"Origin": origin})
            if response.code not in (403, 404) or _has_data(response) or response.headers.get("Access-Control-Allow-Origin"):
                accepted.append((method, path, response.code))
    assert not accepted, f"cross-origin requests from {origin} accepted: {accepted}"
    assert registry.get_session(record.id).id == record.id


async def test_requests_for_a_non_local_host_are_rejected(jp_fetch, record):
    """DNS rebinding: a page at evil.example re-pointed to 127.0.0.1 sends Host: evil.example."""
    accepted = []
    for method, path in ROUTES:
        response = await jp_fetch(API, _path_for(path, record), method=method, headers={"Host": "evil.example"}, raise_error=False)
        if response.code != 403 or _has_data(response):
            accepted.append((method, path, response.code))
    assert not accepted
    assert registry.get_session(record.id).id == record.id


# --- the registry: private files, validated ids, only registered sessions ----------------------------------


def test_registry_files_are_private_even_with_a_permissive_umask(runtime_dir):
    runtime_dir.mkdir(mode=0o777)
    os.chmod(runtime_dir, 0o777)
    old = os.umask(0)
    try:
        rec = registry.register(scheduler_address="tcp://127.0.0.1:1", dashboard_link=None, mode="cpu", n_workers=1, options={})
        registry.update(rec)
    finally:
        os.umask(old)
    assert stat.S_IMODE(runtime_dir.stat().st_mode) == 0o700
    files = list(runtime_dir.iterdir())
    assert [f.name for f in files] == [f"session-{rec.id}.json"], "no temporary file is left behind"
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    registry.unregister(rec.id)


@pytest.fixture
def victim(tmp_path, runtime_dir):
    """A record-shaped file outside the registry where a naive join of a traversal id would land:
    ``<runtime>/session-x/../../victim.json``."""
    (runtime_dir / "session-x").mkdir(parents=True)
    path = tmp_path / "victim.json"
    path.write_text(json.dumps({"id": VALID_UNKNOWN, "note": "must not be read, changed or removed"}))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    yield path
    assert path.exists() and (path.read_bytes(), path.stat().st_mtime_ns) == before, "a file outside the registry was touched"


TRAVERSAL_IDS = [
    "..",
    "../x",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2fvictim",
    "x%2F..%2F..%2Fvictim",
    "session-x%2F..%2F..%2Fvictim",
    "..%5C..%5Cvictim",
    "%252e%252e%252fvictim",
    "a" * 5000,
    "0" * 33,
    VALID_UNKNOWN.upper(),
    "%00" + VALID_UNKNOWN[3:],
    VALID_UNKNOWN + "%2F..%2F..%2Fvictim",
]


async def test_traversal_and_malformed_ids_are_4xx_and_touch_nothing(jp_fetch, http_server_client, jp_base_url, jp_auth_header, victim, runtime_dir):
    for raw in TRAVERSAL_IDS:
        for method in ("GET", "DELETE"):
            url = url_path_join(jp_base_url, API, "sessions") + "/" + raw
            response = await http_server_client.fetch(url, method=method, headers=jp_auth_header, raise_error=False)
            if "/" in raw:  # a raw slash never reaches the session route: tornado's own 404
                assert response.code == 404, (raw, method, response.code)
            else:  # encoded ones (%2F, %2e%2e, %00, ...) reach it and are refused by id validation
                assert response.code == 400, (raw, method, response.code)
                assert "32 lowercase hex" in json.loads(response.body)["message"]
    for bad in ("x/../../victim", "../victim", "a" * 5000):
        for call in (registry.get_session, registry.unregister, cleanup.shutdown_session):
            with pytest.raises(ValueError):
                call(bad)
    assert sorted(p.name for p in runtime_dir.iterdir()) == ["session-x"]


async def test_an_id_with_a_trailing_newline_is_rejected(jp_fetch):
    with pytest.raises(ValueError):
        registry.validate_session_id(VALID_UNKNOWN + "\n")
    response = await jp_fetch(API, "sessions", VALID_UNKNOWN + "\n", method="DELETE", raise_error=False)
    assert response.code == 400


@pytest.fixture
def foreign_cluster(tmp_path):
    """A Dask scheduler and worker started by hand (not by the kit), stopped by PID afterwards."""
    sched_file = tmp_path / "foreign-scheduler.json"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(sched_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        _wait_for_file(sched_file, procs[0])
        address = json.loads(sched_file.read_text())["address"]
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--memory-limit",
                    "1GiB",
                    "--host",
                    "127.0.0.1",
                    "--no-nanny",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        yield address, procs
    finally:
        _stop(procs)


def _wait_for_file(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.stat().st_size) and time.monotonic() < deadline:
        assert proc.poll() is None, "the scheduler exited"
        time.sleep(0.1)
    time.sleep(0.2)  # the file is written in one go, but give the writer a moment
    assert path.exists(), f"{path} did not appear"


def _stop(procs) -> None:
    """Stop by PID, workers before their scheduler (a worker whose scheduler is gone retries for a while)."""
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _worker_pid(address: str) -> int:
    from distributed import Client

    with Client(address, set_as_default=False, timeout=20) as client:
        client.wait_for_workers(1, timeout=60)
        (pid,) = client.run(os.getpid).values()
        assert client.submit(lambda: 6 * 7).result(timeout=30) == 42
    return pid


async def test_a_cluster_the_registry_does_not_list_cannot_be_shut_down(jp_fetch, foreign_cluster, runtime_dir):
    address, procs = foreign_cluster
    worker_pid = await _in_thread(_worker_pid, address)
    attempts = [address, urllib.parse.quote(address, safe=""), str(procs[0].pid), str(worker_pid), VALID_UNKNOWN, uuid.uuid4().hex]
    # A record planted by another Unix user (a neighbour) names this cluster; the kit must ignore it.
    planted = registry.SessionRecord(
        id=uuid.uuid4().hex,
        owner={"pid": 1, "create_time": 0.0},
        scheduler_address=address,
        dashboard_link=None,
        mode="cpu",
        n_workers=1,
        options={},
        processes=[registry.process_identity(worker_pid)],
    )
    if os.geteuid() == 0:
        runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = runtime_dir / f"session-{planted.id}.json"
        path.write_text(json.dumps(dataclasses.asdict(planted)))
        os.chown(path, 65534, 65534)
        attempts.append(planted.id)
    for sid in attempts:
        for method in ("DELETE", "GET"):
            response = await jp_fetch(API, "sessions", sid, method=method, raise_error=False)
            assert response.code in (400, 404), (sid, method, response.code)
    response = await jp_fetch(API, "sessions")
    assert json.loads(response.body)["sessions"] == []
    assert all(p.poll() is None for p in procs) and psutil.pid_exists(worker_pid)
    if os.geteuid() == 0:  # control: the same file owned by this user is a record the API lists (and could stop)
        os.chown(path, os.getuid(), os.getgid())
        response = await jp_fetch(API, "sessions", planted.id)
        assert json.loads(response.body)["scheduler_address"] == address
        path.unlink()
    assert await _in_thread(_worker_pid, address) == worker_pid, "the foreign cluster still computes, with the same worker"


def _plant(runtime_dir: Path, processes: list[dict]) -> str:
    """A record of a notebook whose kernel is gone (owner: a PID that is not running), naming ``processes``."""
    rec = registry.SessionRecord(
        id=uuid.uuid4().hex,
        owner={"pid": 2**22 + 17, "create_time": 0.0},
        scheduler_address=None,
        dashboard_link=None,
        mode="cpu",
        n_workers=len(processes),
        options={},
        processes=processes,
    )
    runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = runtime_dir / f"session-{rec.id}.json"
    path.write_text(json.dumps(dataclasses.asdict(rec)))
    os.chmod(path, 0o600)
    return rec.id


async def test_shutdown_never_signals_a_recycled_pid(jp_fetch, runtime_dir):
    """A record names processes by PID *and* start time: a PID now used by another program is left alone."""
    bystander = subprocess.Popen(["sleep", "120"])
    try:
        identity = registry.process_identity(bystander.pid)
        sid = _plant(runtime_dir, [{"pid": bystander.pid, "create_time": identity["create_time"] - 3600}])
        response = await jp_fetch(API, "sessions", sid, method="DELETE", raise_error=False)
        assert response.code == 204
        await asyncio.sleep(0.5)
        assert bystander.poll() is None, "a process that merely reuses a recorded PID was signalled"
        # control: with the true start time the same record does end the process
        sid = _plant(runtime_dir, [identity])
        await _in_thread(cleanup.shutdown_session, sid, 1.0)
        assert bystander.wait(timeout=10) is not None
    finally:
        _stop([bystander])


async def _in_thread(func, *args):
    return await asyncio.get_running_loop().run_in_executor(None, func, *args)


# --- no route runs code from the request -----------------------------------------------------------------

_FORBIDDEN_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "execfile",
    "runpy",
    "system",
    "popen",
    "spawn",
    "spawnv",
    "spawnl",
    "execv",
    "execve",
    "execvp",
    "Popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "loads",
    "load",
    "import_module",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "unsafe_load",
    "full_load",
}
_FORBIDDEN_MODULES = {"subprocess", "pickle", "marshal", "shelve", "runpy", "code", "codeop", "pty", "commands"}
_REQUEST_INPUT = {
    "body",
    "arguments",
    "body_arguments",
    "query_arguments",
    "files",
    "get_argument",
    "get_arguments",
    "get_body_argument",
    "get_body_arguments",
    "get_query_argument",
    "get_query_arguments",
    "get_json_body",
}


def _server_sources():
    return sorted(SERVER_DIR.glob("*.py"))


def test_server_code_has_no_code_execution_primitives():
    found = []
    for path in _server_sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                found += [(path.name, node.lineno, n) for n in names if n.split(".")[0] in _FORBIDDEN_MODULES]
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
                if name in _FORBIDDEN_CALLS and owner != "json":
                    found.append((path.name, node.lineno, f"{owner + '.' if owner else ''}{name}"))
    # yaml is read with safe_load only (server/__init__.py); anything above is a finding
    assert not found, f"code-execution primitives in gpu_dask_kit/server: {found}"


def test_handlers_read_no_request_input_but_the_path_id():
    """Today no route takes a body or query: the only input is the session id, which is validated.
    A route that starts reading input must add its own validation and property tests (tests/properties/)."""
    tree = ast.parse((SERVER_DIR / "handlers.py").read_text())
    reads = sorted({(node.lineno, node.attr) for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in _REQUEST_INPUT})
    assert reads == [], f"handlers read request input: {reads}"


def _payloads(marker: Path) -> list[str]:
    m = str(marker)
    return [
        f"__import__('os').system('touch {m}-py-system')",
        f"open('{m}-py-open', 'w').write('x')",
        f"exec(\"open('{m}-py-exec','w')\")",
        f"; touch {m}-sh-semicolon",
        f"$(touch {m}-sh-subst)",
        f"`touch {m}-sh-backtick`",
        f"| touch {m}-sh-pipe",
        f"!!python/object/apply:os.system ['touch {m}-yaml']",
        "{{7*7}}${7*7}",
    ]


def test_the_payloads_would_leave_a_mark_if_executed(tmp_path):
    """Control for the test below: each payload, run as the code it is, creates its marker."""
    marker = tmp_path / "control"
    payloads = _payloads(marker)
    for code in payloads[:3]:
        subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    for shell in payloads[3:7]:
        subprocess.run(["sh", "-c", "true " + shell], cwd=tmp_path)
    import yaml

    yaml.unsafe_load(payloads[7])
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(f"control-{s}" for s in ("py-system", "py-open", "py-exec", "sh-semicolon", "sh-subst", "sh-backtick", "sh-pipe", "yaml"))


async def test_no_route_runs_code_or_starts_processes_from_the_request(jp_fetch, tmp_path, runtime_dir):
    marker = tmp_path / "pwned"
    payloads = _payloads(marker)
    spill = tmp_path / "spill-dir-a-started-cluster-would-create"
    bodies = [json.dumps({"code": p, "cmd": p, "options": {"n_workers": 1, "local_directory": str(spill)}}) for p in payloads]
    bodies += [json.dumps({"device": "cpu", "n_workers": 1, "local_directory": str(spill)}), *payloads]
    before = kit_children()
    codes = set()
    for method in ("GET", *WRITE_VERBS):
        for path in PATHS:
            for i, payload in enumerate(payloads):
                body = bodies[i % len(bodies)] if method != "GET" else None
                response = await jp_fetch(
                    API,
                    path,
                    method=method,
                    body=body,
                    raise_error=False,
                    allow_nonstandard_methods=True,
                    params={"q": payload, "code": payload},
                    headers={"X-Command": payload.replace("\n", " ")},
                )
                codes.add(response.code)
            for payload in payloads:
                response = await jp_fetch(
                    API,
                    "sessions",
                    payload,
                    method=method,
                    raise_error=False,
                    body="{}" if method in ("POST", "PUT", "PATCH") else None,
                    allow_nonstandard_methods=True,
                )
                codes.add(response.code)
    await asyncio.sleep(0.5)  # a shell started in the background would have written by now
    assert codes <= {200, 400, 404, 405}, codes
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned")) == []
    assert not spill.exists(), "a request started a cluster"
    assert kit_children() == before and not list(runtime_dir.glob("session-*.json"))


# --- the Jupyter token stays out of places others can see ----------------------------------------------


def test_lab_command_line_carries_no_token(tmp_path):
    """Other users see every process's argv (`ps`): `gpu-dask-kit lab` never puts a token there."""
    from gpu_dask_kit.workshop import lab_command

    cmd = " ".join(lab_command(str(tmp_path), 8899, open_browser=False)).lower()
    assert "token" not in cmd and "password" not in cmd
    assert "--serverapp.ip=127.0.0.1" in cmd


# --- TLS to a remote scheduler ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A TLS-only `dask scheduler` (require-encryption) plus one TLS worker, with certificates from a throwaway CA."""
    import trustme

    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    server, client = ca.issue_cert("127.0.0.1", "localhost"), ca.issue_cert("127.0.0.1")
    files = {
        "ca": folder / "ca.pem",
        "server_cert": folder / "server.pem",
        "server_key": folder / "server.key",
        "client_cert": folder / "client.pem",
        "client_key": folder / "client.key",
    }
    ca.cert_pem.write_to_path(files["ca"])
    server.cert_chain_pems[0].write_to_path(files["server_cert"])
    server.private_key_pem.write_to_path(files["server_key"])
    client.cert_chain_pems[0].write_to_path(files["client_cert"])
    client.private_key_pem.write_to_path(files["client_key"])
    other = trustme.CA().issue_cert("127.0.0.1")  # signed by a CA the scheduler does not trust
    other.cert_chain_pems[0].write_to_path(folder / "other.pem")
    other.private_key_pem.write_to_path(folder / "other.key")
    tls = ["--tls-ca-file", str(files["ca"]), "--tls-cert", str(files["server_cert"]), "--tls-key", str(files["server_key"])]
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION="True")
    sched_file = folder / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [
        subprocess.Popen(
            [*dask, "--host", "127.0.0.1", "--port", "0", "--protocol", "tls", "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(sched_file), *tls],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        _wait_for_file(sched_file, procs[0])
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:")
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--memory-limit",
                    "1GiB",
                    "--host",
                    "127.0.0.1",
                    "--no-nanny",
                    *tls,
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        yield {
            "address": address,
            "scheduler_address": address,
            "scheduler_file": str(sched_file),
            "procs": procs,
            "folder": folder,
            **{k: str(v) for k, v in files.items()},
        }
    finally:
        _stop(procs)


def _security(tls, cert="client_cert", key="client_key"):
    from distributed.security import Security

    cert_file = tls[cert] if cert in tls else str(tls["folder"] / cert)
    key_file = tls[key] if key in tls else str(tls["folder"] / key)
    return Security(tls_ca_file=tls["ca"], tls_client_cert=cert_file, tls_client_key=key_file, require_encryption=True)


@pytest.mark.parametrize("by", ["scheduler_address", "scheduler_file"])
def test_connect_to_a_tls_scheduler_with_security(tls_cluster, by, runtime_dir):
    session = kit.start_cluster(verbose=False, connect_timeout=60, security=_security(tls_cluster), **{by: tls_cluster[by]})
    try:
        assert session.scheduler_address == tls_cluster["address"] and session.scheduler_address.startswith("tls://")
        assert session.client.submit(lambda: 6 * 7).result(timeout=60) == 42
        assert registry.list_sessions()[0].started_by == "connect"
    finally:
        session.close()
    assert all(p.poll() is None for p in tls_cluster["procs"]), "closing the connection must leave the cluster running"
    assert list(runtime_dir.glob("session-*.json")) == []


def test_a_tls_scheduler_refuses_plain_tcp_and_foreign_certificates(tls_cluster, runtime_dir):
    plain = tls_cluster["address"].replace("tls://", "tcp://")
    with pytest.raises(ConnectError, match=re.escape(f"scheduler_address={plain!r}")):
        kit.start_cluster(verbose=False, connect_timeout=5, scheduler_address=plain)
    with pytest.raises(ConnectError) as info:
        kit.start_cluster(verbose=False, connect_timeout=5, scheduler_address=tls_cluster["address"], security=_security(tls_cluster, "other.pem", "other.key"))
    assert "security=" in str(info.value)
    assert list(runtime_dir.glob("session-*.json")) == []
    assert all(p.poll() is None for p in tls_cluster["procs"])


@pytest.mark.parametrize("by", ["scheduler_address", "scheduler_file"])
def test_a_tls_scheduler_without_security_is_the_kits_clear_error(tls_cluster, by, runtime_dir):
    with pytest.raises(KitError) as info:
        kit.start_cluster(verbose=False, connect_timeout=5, **{by: tls_cluster[by]})
    message = str(info.value)
    assert message.startswith(f"{by}=") and "security=" in message
    assert list(runtime_dir.glob("session-*.json")) == []


def test_a_local_cluster_started_with_security_uses_tls(no_leaks):
    from distributed.security import Security

    with kit.start_cluster(n_workers=1, memory_limit="1GiB", verbose=False, security=Security.temporary()) as session:
        assert session.scheduler_address.startswith("tls://")
