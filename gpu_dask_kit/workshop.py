"""``gpu-dask-kit lab``: open the workshop's first notebook in JupyterLab, from a checkout or a wheel.

Two routes in, one behaviour:

- a source checkout (``make lab``): serve ``<checkout>/notebooks``; JupyterLab's user settings live in
  ``<sys.prefix>/share/gpu-dask-kit/lab-user-settings`` (inside ``.venv``), so nothing is written to the
  user's home on a shared machine;
- a ``pip install``: copy the notebooks shipped in the wheel (``<prefix>/share/gpu-dask-kit/notebooks``)
  into a folder the learner owns (``~/gpu-dask-kit-workshop``, or ``$GPU_DASK_KIT_WORKSHOP_DIR``), only
  the files that are missing there (a second run never overwrites the learner's edits), and serve it;
  JupyterLab keeps the user's own settings.

Either way the "get notified about Jupyter news?" toast is answered (only where the setting is not set
yet), the browser opens ``00_start_here.ipynb``, and the URL with its token is printed last, once the
server answers. Standard library only: importing this module starts nothing and writes nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FIRST_NOTEBOOK",
    "LabSetup",
    "checkout_notebooks",
    "shipped_notebooks",
    "workshop_dir",
    "copy_workshop",
    "quiet_notifications",
    "prepare_lab",
    "lab_command",
    "run_lab",
]

FIRST_NOTEBOOK = "00_start_here.ipynb"
WORKSHOP_DIR_ENV = "GPU_DASK_KIT_WORKSHOP_DIR"
# What the learner gets: the notebooks and their outline, not the test machinery next to them.
NOT_COPIED = {"nbval-sanitize.cfg", ".ipynb_checkpoints", "__pycache__"}
NOTIFICATION_SETTINGS = Path("@jupyterlab") / "apputils-extension" / "notification.jupyterlab-settings"


def checkout_notebooks() -> Path | None:
    """``<checkout>/notebooks`` when the kit runs from a source checkout (editable install), else None."""
    root = Path(__file__).resolve().parent.parent
    notebooks = root / "notebooks"
    if (root / "pyproject.toml").is_file() and (notebooks / FIRST_NOTEBOOK).is_file():
        return notebooks
    return None


def shipped_notebooks() -> Path | None:
    """The notebooks the wheel installs under ``<prefix>/share/gpu-dask-kit/notebooks``, or None."""
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        folder = Path(prefix) / "share" / "gpu-dask-kit" / "notebooks"
        if (folder / FIRST_NOTEBOOK).is_file():
            return folder
    return None


def workshop_dir() -> Path:
    """Where a pip-installed kit puts the learner's copy: ``$GPU_DASK_KIT_WORKSHOP_DIR`` or ``~/gpu-dask-kit-workshop``."""
    return Path(os.environ.get(WORKSHOP_DIR_ENV) or Path.home() / "gpu-dask-kit-workshop").expanduser()


def copy_workshop(source: Path, dest: Path) -> list[Path]:
    """Copy the files of ``source`` that ``dest`` lacks; never overwrite. Returns the files copied.

    >>> import tempfile; src, dst = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp()) / "w"
    >>> _ = (src / "a.ipynb").write_text("new"); _ = (src / "nbval-sanitize.cfg").write_text("x")
    >>> [p.name for p in copy_workshop(src, dst)], copy_workshop(src, dst)
    (['a.ipynb'], [])
    """
    copied = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if any(part in NOT_COPIED for part in rel.parts) or not path.is_file():
            continue
        target = dest / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        target.chmod(target.stat().st_mode | 0o200)  # the learner edits them, even from a read-only prefix
        copied.append(target)
    return copied


def quiet_notifications(settings_dir: Path) -> bool:
    """Answer JupyterLab's "news?" toast with "no" in ``settings_dir``, unless the user already chose.

    Returns True when the file was written."""
    path = settings_dir / NOTIFICATION_SETTINGS
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}, indent=2) + "\n")
    return True


def _default_user_settings_dir() -> Path:
    """The settings dir JupyterLab uses when none is given (``$JUPYTERLAB_SETTINGS_DIR`` or the config dir's)."""
    if os.environ.get("JUPYTERLAB_SETTINGS_DIR"):
        return Path(os.environ["JUPYTERLAB_SETTINGS_DIR"])
    from jupyter_core.paths import jupyter_config_dir

    return Path(jupyter_config_dir()) / "lab" / "user-settings"


@dataclass
class LabSetup:
    """What ``gpu-dask-kit lab`` serves and why (``messages`` are printed before the server starts)."""

    notebook_dir: Path
    settings_dir: Path | None  # passed as LabApp.user_settings_dir; None: the user's own
    first_notebook: str | None  # opened in the browser, relative to notebook_dir
    messages: list[str] = field(default_factory=list)


def prepare_lab(notebook_dir: str | os.PathLike | None = None) -> LabSetup:
    """Decide the folder and settings for ``gpu-dask-kit lab``; copy the workshop on a pip install.

    ``notebook_dir`` given: serve it as it is. Else a checkout's ``notebooks/``, else the learner's copy."""
    messages = []
    if notebook_dir is not None:
        folder = Path(notebook_dir).expanduser().resolve()
        if not folder.is_dir():
            raise ValueError(
                f"--notebook-dir={str(notebook_dir)!r} is not a folder. Pass the folder with the "
                "workshop notebooks, or leave --notebook-dir out to get the workshop."
            )
        settings = None
    elif (checkout := checkout_notebooks()) is not None:
        folder, settings = checkout, Path(sys.prefix) / "share" / "gpu-dask-kit" / "lab-user-settings"
    elif (shipped := shipped_notebooks()) is not None:
        folder, settings = workshop_dir(), None
        copied = copy_workshop(shipped, folder)
        if copied:
            messages.append(
                f"Copied {len(copied)} workshop file(s) into {folder} (yours to edit; a later `gpu-dask-kit lab` only adds missing files, it never overwrites)."
            )
        else:
            messages.append(f"Workshop folder: {folder} (nothing new to copy; your edits are kept).")
    else:
        raise ValueError(
            "No workshop notebooks found: this install ships none under "
            f"{Path(sys.prefix) / 'share' / 'gpu-dask-kit' / 'notebooks'}. Reinstall gpu-dask-kit, "
            "or pass --notebook-dir FOLDER to serve a folder of notebooks."
        )
    quiet_notifications(settings or _default_user_settings_dir())
    first = FIRST_NOTEBOOK if (folder / FIRST_NOTEBOOK).is_file() else None
    return LabSetup(folder, settings, first, messages)


def lab_command(
    notebook_dir: str | os.PathLike,
    port: int | None,
    open_browser: bool = False,
    *,
    settings_dir: str | os.PathLike | None = None,
    first_notebook: str | None = None,
) -> list[str]:
    """The JupyterLab command line `gpu-dask-kit lab` runs (127.0.0.1 only; the token comes by environment).

    JupyterLab never opens the browser itself (``open_browser`` is ours to do, once the server answers)."""
    # Warnings and errors only: the URL printed once the server answers stays the last line a learner sees.
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--Application.log_level=WARN",
        f"--ServerApp.root_dir={notebook_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if port:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if settings_dir is not None:
        cmd.append(f"--LabApp.user_settings_dir={settings_dir}")
    if first_notebook:
        cmd.append(f"--LabApp.default_url=/lab/tree/{first_notebook}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(proc: subprocess.Popen, base: str, token: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(base + "api/status", headers={"Authorization": f"token {token}"})
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.25)
    return False


def run_lab(notebook_dir: str | os.PathLike | None = None, port: int | None = None, open_browser: bool = True, ready_timeout: float = 120) -> int:
    """Start JupyterLab on the workshop, print the URL last, and wait for it to stop (Ctrl-C stops it)."""
    try:
        setup = prepare_lab(notebook_dir)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in setup.messages:
        print(line, flush=True)
    port = port or _free_port()
    token = secrets.token_hex(24)
    env = dict(os.environ, JUPYTER_TOKEN=token)  # not on the command line, where `ps` shows it to others
    cmd = lab_command(setup.notebook_dir, port, settings_dir=setup.settings_dir, first_notebook=setup.first_notebook)
    print(f"Starting JupyterLab on {setup.notebook_dir} (127.0.0.1 only) ...", flush=True)
    proc = subprocess.Popen(cmd, env=env, cwd=setup.notebook_dir)
    # Ctrl-C reaches JupyterLab too (same terminal): it asks and stops; we wait for it.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        base = f"http://127.0.0.1:{port}/"
        if not _wait_ready(proc, base, token, ready_timeout):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
                print(f"error: JupyterLab did not answer on {base} within {ready_timeout:.0f} s; stopped it. Its messages are above.", file=sys.stderr)
            else:
                print(
                    f"error: JupyterLab exited with code {proc.returncode} before serving (messages above). "
                    "If the port is taken, pass --port with another one.",
                    file=sys.stderr,
                )
            return 1
        page = f"lab/tree/{setup.first_notebook}" if setup.first_notebook else "lab"
        url = f"{base}{page}?token={token}"
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        print(f"\n    JupyterLab is ready. Open this URL in your browser (Ctrl-C here stops it):\n\n    {url}\n", flush=True)
        return proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)
        signal.signal(signal.SIGINT, previous)
