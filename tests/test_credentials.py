"""Clusters are secure by default (issue 20; docs/security.md, threat 2): every cluster the kit starts
talks TLS with credentials of its own, in the user's registry folder (0700 / 0600); the same account's
other processes connect through them, another account can neither connect nor read them.

Real clusters, real processes, and (as root) a real second account made with ``useradd``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import gpu_dask_kit as kit
from gpu_dask_kit import KitWarning, cleanup, clients, credentials, registry

from .conftest import kit_children, wait_for_no_new_children
from .second_account import connect_code, make_stranger, refused_within, run_as

SMALL = dict(device="cpu", n_workers=1, memory_limit="1GiB", verbose=False)


def _side_session(**options):
    """A session beside the module's one (``start_cluster`` would replace that: one current session per process)."""
    from gpu_dask_kit.options import ClusterOptions
    from gpu_dask_kit.session import start_session

    return start_session(ClusterOptions.from_config(device="cpu", n_workers=1, memory_limit="1GiB", **options), started_by="notebook")


def _connect_elsewhere(address: str, extra: str = "") -> tuple[subprocess.CompletedProcess, float]:
    """``start_cluster(scheduler_address=address)`` in another process of this account; its result and time."""
    security = ", security=sec" if extra else ""
    code = f"import gpu_dask_kit as kit\n{extra}\nkit.start_cluster(scheduler_address={address!r}, connect_timeout=3, verbose=False{security})"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def shared_runtime():
    """One registry folder for the module, under /tmp (every account can reach /tmp: only the kit's own
    folder and file modes keep the credentials private)."""
    path = Path(tempfile.mkdtemp(prefix="gdk-sec-", dir="/tmp"))
    yield path / "runtime"
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def runtime_dir(shared_runtime, monkeypatch):
    monkeypatch.setenv("GPU_DASK_KIT_RUNTIME_DIR", str(shared_runtime))
    return shared_runtime


@pytest.fixture(scope="module")
def session(shared_runtime):
    """A default session (started with umask 0: the modes must not depend on it); stopped, and checked
    to leave no process, at the end of the module."""
    patch = pytest.MonkeyPatch()
    patch.setenv("GPU_DASK_KIT_RUNTIME_DIR", str(shared_runtime))
    before = kit_children()
    old = os.umask(0)
    try:
        s = kit.start_cluster(**SMALL)
    finally:
        os.umask(old)
    yield s
    s.close()
    patch.undo()
    assert not wait_for_no_new_children(before), "processes left running"
    assert not registry.credentials_dir(s.id).exists(), "close() removes the credentials"


@pytest.fixture
def no_new_processes():
    """Like conftest's ``no_leaks`` without closing every session (the module's one stays open)."""
    before = kit_children()
    yield before
    assert not wait_for_no_new_children(before), "processes left running"


def _python(code: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, **kwargs)


def test_a_default_session_talks_tls_with_private_credentials(session):
    assert session.scheduler_address.startswith("tls://")
    folder = registry.credentials_dir(session.id)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == [credentials.CERT, credentials.KEY]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
    key = serialization.load_pem_private_key((folder / credentials.KEY).read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"  # not RSA: see credentials.py
    cert = x509.load_pem_x509_certificate((folder / credentials.CERT).read_bytes())
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()
    assert session.client.submit(lambda: 6 * 7).result(timeout=30) == 42
    (record,) = registry.list_sessions()
    assert record.scheduler_address == session.scheduler_address and credentials.for_record(record) is not None


def test_the_owners_other_processes_connect(session, tmp_path):
    """A script with --scheduler-file / --scheduler-address, `gpu-dask-kit sessions` and the server's memory
    read: the same account gets in with no extra step."""
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(json.dumps({"address": session.scheduler_address}))
    script = tmp_path / "script.py"
    script.write_text(
        "import argparse, os\n"
        "from gpu_dask_kit.scripts import add_cluster_args, start_cluster_from_args\n"
        "if __name__ == '__main__':\n"
        "    args = add_cluster_args(argparse.ArgumentParser()).parse_args()\n"
        "    with start_cluster_from_args(args, verbose=False) as s:\n"
        "        print('RAN', s.scheduler_address, s.client.submit(os.getpid).result() > 0)\n"
    )
    for flag, value in (("--scheduler-file", str(scheduler_file)), ("--scheduler-address", session.scheduler_address)):
        done = subprocess.run([sys.executable, str(script), flag, value], capture_output=True, text=True, timeout=120)
        assert f"RAN {session.scheduler_address} True" in done.stdout, done.stdout + done.stderr
    listed = subprocess.run([sys.executable, "-m", "gpu_dask_kit", "sessions", "--json"], capture_output=True, text=True, timeout=60)
    assert session.scheduler_address in listed.stdout and "PRIVATE" not in listed.stdout  # addresses, never credentials
    from gpu_dask_kit.server.memory_cache import _default_snapshot

    assert len(_default_snapshot(session.scheduler_address, 10, "cpu")["workers"]) == 1
    assert session.n_workers == 1 and [r.id for r in registry.list_sessions()] == [session.id]


def test_another_process_connects_asynchronously_with_the_sessions_credentials(session, tmp_path):
    """connect mode with asynchronous=True (a notebook that awaits): the async client uses the credentials
    found for the scheduler, as the synchronous one does."""
    script = tmp_path / "attach.py"
    script.write_text(
        "import asyncio, sys\n"
        "import gpu_dask_kit as kit\n"
        "async def main():\n"
        "    s = await kit.start_cluster(scheduler_address=sys.argv[1], asynchronous=True, verbose=False)\n"
        "    print('SUM', await s.client.submit(sum, [1, 2, 3]))\n"
        "    await s.close()\n"
        "if __name__ == '__main__':\n"
        "    asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, str(script), session.scheduler_address], capture_output=True, text=True, timeout=120)
    assert "SUM 6" in done.stdout, done.stdout + done.stderr
    assert session.client.submit(lambda: 1).result(timeout=30) == 1  # connect mode left the owner's cluster running


def test_plain_tcp_and_clients_without_certificate_get_a_sentence(session):
    from distributed import Client

    plain = "tcp://" + session.scheduler_address.removeprefix("tls://")
    started = time.monotonic()
    with pytest.raises(OSError) as reset:
        Client(plain, timeout=5, set_as_default=False)
    hint = clients.connection_hint(reset.value)
    assert hint and session.id in hint and f"scheduler_address={session.scheduler_address!r}" in hint
    with pytest.raises(TypeError) as bare:
        Client(session.scheduler_address, timeout=5, set_as_default=False)
    assert "session.client" in clients.connection_hint(bare.value)
    from gpu_dask_kit.notebook import hints  # what a notebook prints under the traceback

    assert hints.explain(bare.value, session=session) == clients.connection_hint(bare.value)
    assert hints.explain(reset.value, session=session) == hint
    assert time.monotonic() - started < 15
    done, took = _connect_elsewhere(plain)
    assert "ConnectError" in done.stderr and f"scheduler_address={session.scheduler_address!r}" in done.stderr and took < 60, done.stderr
    assert clients.connection_hint(ValueError("unrelated")) is None and clients.connection_hint(OSError("tcp://10.0.0.1:1")) is None
    assert [r.id for r in registry.list_sessions()] == [session.id]


def test_a_foreign_certificate_is_refused_with_a_clear_error(session):
    done, took = _connect_elsewhere(session.scheduler_address, "from distributed.security import Security\nsec = Security.temporary()")
    assert "ConnectError" in done.stderr and "security=" in done.stderr and took < 60, done.stderr[-3000:]
    assert [r.id for r in registry.list_sessions()] == [session.id]


def test_deleted_or_unreadable_credentials(session):
    """The session itself keeps working (it holds its credentials in memory); another process is told
    where the files were and what to do."""
    folder = registry.credentials_dir(session.id)
    aside = folder.with_name("aside")
    connect = f"import gpu_dask_kit as kit\nkit.start_cluster(scheduler_address={session.scheduler_address!r}, verbose=False)"
    folder.rename(aside)
    try:
        assert session.client.submit(lambda: 1 + 1).result(timeout=30) == 2
        done = _python(connect)
        assert done.returncode == 1 and "ConnectError" in done.stderr and str(folder) in done.stderr, done.stderr
        assert "start a new one" in done.stderr and "Traceback" in done.stderr
        folder.mkdir(mode=0o700)
        (folder / credentials.CERT).mkdir()  # unreadable as a file, even for root
        done = _python(connect)
        assert "cannot be read" in done.stderr and str(folder) in done.stderr, done.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        aside.rename(folder)
    assert session.client.submit(lambda: 3).result(timeout=30) == 3


def test_opting_out_is_plain_tcp_and_says_who_could_connect(monkeypatch, no_new_processes):
    monkeypatch.setenv("JUPYTERHUB_USER", "learner")
    with pytest.warns(KitWarning, match="every other JupyterHub user of this machine") as caught:
        with _side_session(security=False) as plain:
            address = plain.scheduler_address
            assert address.startswith("tcp://") and not registry.credentials_dir(plain.id).exists()
    assert len([w for w in caught if issubclass(w.category, KitWarning)]) == 1
    assert address in str(caught[0].message)


def test_the_warning_names_the_other_accounts(monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    monkeypatch.setattr(credentials, "other_accounts", lambda: ["alice", "bob"])
    text = credentials.exposure("127.0.0.1", "tcp://127.0.0.1:1")
    assert "2 other account(s) of this machine (alice, bob)" in text and "security=False" in text
    assert "every machine that can reach 0.0.0.0" in credentials.exposure("0.0.0.0", "tcp://0.0.0.0:1")
    monkeypatch.setattr(credentials, "other_accounts", lambda: [])
    assert credentials.exposure("127.0.0.1", "tcp://127.0.0.1:1") is None


def test_opting_out_through_the_config_and_flags(runtime_dir):
    import dask

    from gpu_dask_kit.options import ClusterOptions
    from gpu_dask_kit.scripts import add_cluster_args, options_from_args

    with dask.config.set({"gpu-dask-kit.security": False}):
        assert ClusterOptions.from_config().security is False
    import argparse

    assert options_from_args(add_cluster_args(argparse.ArgumentParser()).parse_args(["--no-security"])) == {"security": False}
    before = sorted(runtime_dir.glob("session-*.json"))
    with pytest.raises(kit.OptionError, match="security"):
        kit.start_cluster(security="maybe", verbose=False)
    with pytest.raises(kit.OptionError, match="security"):
        kit.start_cluster(security=object(), verbose=False)
    assert sorted(runtime_dir.glob("session-*.json")) == before


def test_the_sidebar_shutdown_from_another_process_stops_a_tls_session(no_new_processes):
    """``DELETE sessions/<id>`` (the sidebar, `gpu-dask-kit sessions --cleanup`) runs in another process:
    it reaches the TLS scheduler with the session's credentials and stops it."""
    s = _side_session()
    workers = s.record.live_processes()
    assert workers and s.scheduler_address.startswith("tls://")
    done = _python(f"from gpu_dask_kit import cleanup\ncleanup.shutdown_session({s.id!r})")
    assert done.returncode == 0, done.stderr
    psutil.wait_procs(workers, timeout=30)
    assert not any(p.is_running() for p in workers)
    assert not registry.credentials_dir(s.id).exists() and s.id not in [r.id for r in registry.list_sessions()]
    started = time.monotonic()
    s.close_now()  # the notebook's close cell after the sidebar's stop: no wait for a scheduler that is gone (was 42 s)
    assert time.monotonic() - started < 15, "close() waited for the scheduler another process had stopped"
    assert cleanup is not None


# --- a second account (root only: useradd) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def stranger():
    yield from make_stranger()


def test_another_account_can_neither_connect_nor_read_the_credentials(session, stranger, runtime_dir):
    folder = registry.credentials_dir(session.id)
    os.chmod(runtime_dir, 0o755)  # even with the registry folder opened up, the credentials' own modes hold
    try:
        done, _ = run_as(stranger, f"open({str(folder / credentials.KEY)!r}).read()")
        assert "PermissionError" in done.stderr, done.stderr
        done, _ = run_as(stranger, f"import os; os.listdir({str(folder)!r})")
        assert "PermissionError" in done.stderr, done.stderr
    finally:
        os.chmod(runtime_dir, 0o700)
    for address in (session.scheduler_address, "tcp://" + session.scheduler_address.removeprefix("tls://")):
        done, _ = run_as(stranger, connect_code(address))
        assert refused_within(done, 15), (address, done.stdout, done.stderr[-2000:])
    code = f"import gpu_dask_kit as kit\nkit.start_cluster(scheduler_address={session.scheduler_address!r}, connect_timeout=5, verbose=False)"
    done, took = run_as(stranger, code)
    assert "ConnectError" in done.stderr and "is not one of your gpu-dask-kit sessions" in done.stderr and took < 60, done.stderr[-2000:]
    assert session.client.submit(lambda: 5).result(timeout=30) == 5  # the attempts changed nothing for the owner


def test_control_another_account_does_connect_to_an_opted_out_session(stranger, no_new_processes):
    """Without TLS the same attempt succeeds: the test above can see a connection; the opt-out warns, naming
    the account."""
    with pytest.warns(KitWarning, match=stranger.pw_name):
        plain = _side_session(security=False)
    try:
        done, _ = run_as(stranger, connect_code(plain.scheduler_address, timeout=10))
        assert "CONNECTED 0" in done.stdout, done.stdout + done.stderr[-2000:]  # the owner's (root's) uid
    finally:
        plain.close_now()


def _plus_new(check) -> str:
    """Start a cluster as dask-labextension's "+ NEW" does (``await make_cluster(..., asynchronous=True)`` on
    a running loop), run ``check(cluster)`` in a thread (the loop keeps serving the scheduler), close it."""
    import asyncio

    from gpu_dask_kit.integrations.labextension import make_cluster

    async def main() -> str:
        cluster = await make_cluster(device="cpu", n_workers=1, memory_limit="1GiB", asynchronous=True)
        try:
            await asyncio.to_thread(check, cluster)
            return cluster.scheduler_address
        finally:
            await cluster.close()

    return asyncio.run(main())


def test_the_plus_new_cluster_is_tls_with_private_credentials(no_new_processes):
    ids = []

    def check(cluster):
        assert cluster.scheduler_address.startswith("tls://")
        (record,) = [r for r in registry.list_sessions() if r.scheduler_address == cluster.scheduler_address]
        assert record.started_by == "labextension" and stat.S_IMODE(registry.credentials_dir(record.id).stat().st_mode) == 0o700
        ids.append(record.id)
        done, _ = _connect_elsewhere(cluster.scheduler_address.replace("tls://", "tcp://"))
        assert "ConnectError" in done.stderr and cluster.scheduler_address in done.stderr, done.stderr

    address = _plus_new(check)
    assert not [r for r in registry.list_sessions() if r.scheduler_address == address]
    assert ids and not registry.credentials_dir(ids[0]).exists(), "closing the cluster removes its credentials"


def test_another_account_cannot_use_a_plus_new_cluster(stranger, no_new_processes):
    def check(cluster):
        for address in (cluster.scheduler_address, "tcp://" + cluster.scheduler_address.removeprefix("tls://")):
            done, _ = run_as(stranger, connect_code(address))
            assert refused_within(done, 15), (address, done.stdout, done.stderr[-2000:])

    _plus_new(check)
