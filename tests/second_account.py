"""A real second account (``useradd``) for security tests, and a way to run Python as it.

Needs root; the fixture skips with the reason elsewhere. The account runs the system Python with this
checkout and the venv's libraries on its path (the project's venv may sit on a Python under /root, which
other accounts cannot run)."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent


def make_stranger() -> Iterator[pwd.struct_passwd]:
    """Generator for a fixture: a new account, removed (with anything it still runs) at the end."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to create a second account with useradd (CI runs as root)")
    if shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("useradd/runuser missing (Debian: apt-get install -y passwd util-linux)")
    name = f"gdksec{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
    entry = pwd.getpwnam(name)
    try:
        yield entry
    finally:
        for proc in psutil.process_iter(["uids"]):
            try:
                if proc.info["uids"].real == entry.pw_uid:  # only the test account's processes
                    proc.kill()
            except (psutil.Error, TypeError):
                pass
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def run_as(user: pwd.struct_passwd, code: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    """Run Python ``code`` as ``user`` with an empty registry of its own; the result and the seconds it took."""
    paths = os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]])
    env = {"HOME": user.pw_dir, "PATH": "/usr/bin:/bin", "PYTHONPATH": paths, "GPU_DASK_KIT_RUNTIME_DIR": f"{user.pw_dir}/gdk-runtime"}
    python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.path.exists(python):
        pytest.skip(f"{python} is missing: the second account needs a Python of this version")
    command = ["runuser", "-u", user.pw_name, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()], python, "-c", code]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd="/tmp")
    return done, time.monotonic() - started


def connect_code(address: str, timeout: float = 5) -> str:
    """Python that connects a plain ``Client`` and runs ``os.getuid`` in a worker: prints ``CONNECTED <uid>``,
    or ``REFUSED <seconds the attempt took> <error>`` and exits 3."""
    return (
        "import os, sys, time\nfrom distributed import Client\nstarted = time.monotonic()\n"
        f"try:\n    c = Client({address!r}, timeout={timeout})\n"
        "except Exception as exc:\n    print('REFUSED', round(time.monotonic() - started, 1), type(exc).__name__, exc)\n    sys.exit(3)\n"
        "print('CONNECTED', c.submit(os.getuid).result())"
    )


def refused_within(done: subprocess.CompletedProcess, seconds: float) -> bool:
    """True when ``connect_code`` was refused within ``seconds`` (counted inside the account's process, so
    the time to start Python there, long on a loaded machine, is not counted)."""
    words = done.stdout.split()
    return done.returncode == 3 and words[:1] == ["REFUSED"] and float(words[1]) < seconds
