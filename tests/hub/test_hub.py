"""The kit behind a real JupyterHub: dashboard links through the hub, the sidebar under the hub's base
URL, and two hub users who cannot see, stop or connect to each other's clusters.

One hub for the module (see conftest.py). User A starts clusters from a cell of ``00_start_here``; user
B looks at them through the sidebar, the REST API and a Dask client.
"""

from __future__ import annotations

import re
import subprocess
import time
from urllib.parse import urljoin

import psutil
import pytest
from conftest import ARTIFACTS, login

SIDEBAR = "#gpu-dask-kit-sidebar"
START = "import gpu_dask_kit as kit\ns = kit.start_cluster(device='cpu', n_workers=1{extra})\nprint('GDK', s.id, s.scheduler_address)"


def run_first_cell_with(page, code: str, timeout: float = 180_000) -> str:
    """Insert ``code`` as the first cell of the open notebook, run it in the browser, return its output text."""
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.content?.model", timeout=60_000)
    page.evaluate(
        """async (code) => {
        const panel = window.jupyterapp.shell.currentWidget;
        await panel.sessionContext.ready;
        panel.content.model.sharedModel.insertCell(0, {cell_type: 'code', source: code});
        panel.content.activeCellIndex = 0;
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }""",
        code,
    )
    first = page.locator(".jp-NotebookPanel:visible .jp-Cell").first
    first.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']:has-text('GDK ')").wait_for(timeout=timeout)
    return first.locator(".jp-OutputArea").inner_text()


def show_sidebar(page):
    page.evaluate("() => window.jupyterapp.commands.execute('gpu-dask-kit:show-sidebar')")
    page.wait_for_selector(f"{SIDEBAR} .gdk-gpus", state="visible", timeout=30_000)
    return page.locator(SIDEBAR)


def assert_dask_status_page(context, url: str, what: str) -> None:
    """Open ``url`` in a new tab of this logged-in browser context: it must be Dask's status page."""
    page = context.new_page()
    try:
        response = page.goto(url, timeout=60_000)
        assert response is not None and response.status == 200, f"{what}: {url} -> {response and response.status}"
        page.wait_for_selector(".bk-root, .bk-Column, [data-root-id], div.bk", state="attached", timeout=60_000)
        assert "/proxy/" in page.url and "/status" in page.url, f"{what}: landed on {page.url}"
        assert "dask" in (page.title() + page.content()[:5000]).lower(), f"{what}: {page.url} is not Dask's page"
    finally:
        page.close()


def xsrf_headers(context, user) -> dict[str, str]:
    """The XSRF header for ``user``'s server (the hub sets its own ``_xsrf`` cookie on /hub/ too)."""
    for c in context.cookies():
        if c["name"] == "_xsrf" and c["path"].rstrip("/") == f"/user/{user.name}":
            return {"X-XSRFToken": c["value"]}
    return {}


@pytest.fixture(scope="module")
def user_a(browser, hub):
    context, page = login(browser, hub, hub.users[0])
    yield hub.users[0], context, page
    context.close()


@pytest.fixture(scope="module")
def user_b(browser, hub):
    context, page = login(browser, hub, hub.users[1])
    yield hub.users[1], context, page
    context.close()


@pytest.fixture(scope="module")
def a_cluster(user_a, hub):
    """User A's cluster, started from a cell of 00_start_here in the browser: (session id, address, output)."""
    _user, _context, page = user_a
    page.wait_for_selector(".lm-TabBar-tab:has-text('00_start_here.ipynb')", timeout=60_000)
    out = run_first_cell_with(page, START.format(extra=""))
    match = re.search(r"GDK (\S+) (\S+)", out)
    assert match, out
    yield match.group(1), match.group(2), out


def test_links_load_dask_status_through_the_hub(user_a, a_cluster):
    user, context, page = user_a
    sid, _address, out = a_cluster
    prefix = f"/user/{user.name}/"
    printed = re.search(r"Dashboard: (\S+)", out)
    assert printed, out
    assert printed.group(1).startswith(f"{prefix}proxy/"), f"the printed link ignores the hub: {printed.group(1)}"
    assert_dask_status_page(context, urljoin(page.url, printed.group(1)), "printed link")

    sidebar = show_sidebar(page)
    row = sidebar.locator(f"li.gdk-session[data-session-id='{sid}']")
    row.wait_for(timeout=30_000)
    href = row.locator("a.gdk-dashboard-link").get_attribute("href")
    assert href and prefix in urljoin(page.url, href), href
    assert_dask_status_page(context, urljoin(page.url, href), "sidebar link")
    row.locator(".gdk-session-memory").wait_for(timeout=30_000)  # the sidebar polls under the base URL

    # dask-labextension's link: "Open in Dask pane" puts the dashboard URL into its URL box
    row.locator("button.gdk-open-pane").click()
    box = page.locator("#dask-dashboard-launcher input").first
    page.wait_for_function("() => [...document.querySelectorAll('#dask-dashboard-launcher input')].some(i => i.value.includes('/proxy/'))", timeout=30_000)
    pane_url = box.input_value()
    assert prefix in urljoin(page.url, pane_url), pane_url
    assert_dask_status_page(context, urljoin(urljoin(page.url, pane_url.rstrip("/") + "/"), "status"), "dask-labextension link")
    page.screenshot(path=str(ARTIFACTS / "hub-sidebar.png"))
    ours = [e for e in page.console_errors if "gpu-dask-kit" in e or "gpu_dask_kit" in e]
    assert ours == []


def test_other_user_neither_sees_nor_stops_the_cluster(user_a, user_b, a_cluster, hub):
    (a, _, _), (b, b_context, b_page) = user_a, user_b
    sid, _address, _ = a_cluster
    sidebar = show_sidebar(b_page)
    sidebar.locator(".gdk-no-sessions").wait_for(timeout=30_000)
    assert sid not in sidebar.inner_text()

    own = b_context.request.get(f"{hub.url}user/{b.name}/gpu-dask-kit/api/sessions")
    assert own.status == 200 and sid not in own.text()
    other = b_context.request.get(f"{hub.url}user/{a.name}/gpu-dask-kit/api/sessions", max_redirects=0)
    assert other.status in (302, 403, 404) and sid not in other.text(), other.status
    stop = b_context.request.delete(f"{hub.url}user/{b.name}/gpu-dask-kit/api/sessions/{sid}", headers=xsrf_headers(b_context, b))
    assert stop.status == 404, (stop.status, stop.text())
    stop_other = b_context.request.delete(f"{hub.url}user/{a.name}/gpu-dask-kit/api/sessions/{sid}", headers=xsrf_headers(b_context, b), max_redirects=0)
    assert stop_other.status in (302, 403, 404), stop_other.status
    # still running for A
    _, a_context, _ = user_a
    still = a_context.request.get(f"{hub.url}user/{a.name}/gpu-dask-kit/api/sessions")
    assert still.status == 200 and sid in still.text()


def _connect_as(hub, user, address: str, timeout: int = 20) -> subprocess.CompletedProcess:
    code = (
        "import sys; from distributed import Client\n"
        f"c = Client({address!r}, timeout={timeout})\n"
        "print('CONNECTED', len(c.scheduler_info()['workers'])); c.close()"
    )
    return subprocess.run(
        ["runuser", "-u", user.name, "--", str(hub.user_bin / "python"), "-c", code], capture_output=True, text=True, timeout=timeout + 60, cwd="/"
    )


def test_the_default_keeps_the_other_user_out(user_a, user_b, a_cluster, hub):
    """A's default cluster talks TLS with its own credentials: B's Client is refused by tls:// and by tcp://,
    within seconds. Control: the same attempt on a cluster A starts with security=False connects, and that
    start warned A that the hub's other users could connect."""
    (_a, _, a_page), (b, _, _) = user_a, user_b
    _, address, _ = a_cluster
    assert address.startswith("tls://"), address
    for attempt in (address, address.replace("tls://", "tcp://")):
        started = time.monotonic()
        refused = _connect_as(hub, b, attempt)
        assert refused.returncode != 0 and "CONNECTED" not in refused.stdout, refused.stdout + refused.stderr
        assert time.monotonic() - started < 60  # the Client's 20 s timeout at most, plus starting Python as B
    out = run_first_cell_with(a_page, START.format(extra=", security=False"))
    assert "every other JupyterHub user of this machine" in out, out  # the opt-out's one warning
    found = re.search(r"GDK (\S+) (\S+)", out)
    assert found and found.group(2).startswith("tcp://"), out
    plain = _connect_as(hub, b, found.group(2))
    assert "CONNECTED 1" in plain.stdout, plain.stdout + plain.stderr


def test_each_user_has_a_server_running_as_that_user(hub, user_a, user_b):
    """The local-process spawner runs each single-user server as its own system user (the isolation above
    rests on it); the fixture's teardown then checks that none of their processes is left."""
    assert psutil.pid_exists(hub.pid)
    by_uid = {}
    for p in psutil.process_iter(["uids", "cmdline"]):
        if p.info["uids"] and "jupyterhub-singleuser" in " ".join(p.info["cmdline"] or []):
            by_uid.setdefault(p.info["uids"].real, []).append(p.pid)
    assert all(len(by_uid.get(u.uid, [])) == 1 for u in hub.users), by_uid
