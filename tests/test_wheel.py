"""The `pip install` route: build the wheel once, install it into a fresh virtual environment, use it.

No checkout on the way: every command runs from the fresh venv's ``bin/`` with ``HOME`` in a temporary
folder and the checkout off ``sys.path``. Slow (a fresh venv of JupyterLab, Dask, scikit-learn...):
about a minute with uv and a warm package cache, `gpu-dask-kit check` of one notebook half a minute more.
"""

from __future__ import annotations

import contextlib
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

from gpu_dask_kit._version import __version__

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
URL_RE = re.compile(r"http://127\.0\.0\.1:\d+/lab/tree/00_start_here\.ipynb\?token=[0-9a-f]+")


def _run(cmd, env, cwd, timeout=600, check=True):
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"{cmd} exited {out.returncode}\nstdout:\n{out.stdout[-4000:]}\nstderr:\n{out.stderr[-4000:]}")
    return out


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """(venv bin dir, env, home): the wheel built from this checkout, installed in a fresh venv."""
    base = tmp_path_factory.mktemp("wheel")
    dist, venv, home = base / "dist", base / "venv", base / "home"
    home.mkdir()
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    build = (
        [uv, "build", "--wheel", "--out-dir", str(dist), str(REPO)]
        if uv
        else [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist), str(REPO)]
    )
    _run(build, dict(os.environ), REPO)
    wheels = list(dist.glob("gpu_dask_kit-*.whl"))
    assert len(wheels) == 1, wheels
    _run([sys.executable, "-m", "venv", str(venv)], dict(os.environ), base)
    install = (
        [uv, "pip", "install", "--python", str(venv / "bin" / "python"), str(wheels[0])]
        if uv
        else [str(venv / "bin" / "python"), "-m", "pip", "install", str(wheels[0])]
    )
    _run(install, dict(os.environ), base)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV", "GPU_DASK_KIT", "DASK_"))}
    env.update(HOME=str(home), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", PYTHONNOUSERSITE="1")
    return venv / "bin", env, home


def test_version_and_doctor(wheel_venv):
    bin_dir, env, home = wheel_venv
    out = _run([str(bin_dir / "gpu-dask-kit"), "--version"], env, home)
    assert out.stdout.strip() == f"gpu-dask-kit {__version__}"
    where = _run([str(bin_dir / "python"), "-c", "import gpu_dask_kit; print(gpu_dask_kit.__file__)"], env, home)
    assert where.stdout.strip().startswith(str(bin_dir.parent)), "the kit must come from the wheel, not the checkout"
    doctor = _run([str(bin_dir / "gpu-dask-kit"), "doctor"], env, home)
    assert "Mode for device='auto':" in doctor.stdout and "Why:" in doctor.stdout


def test_labextension_enabled(wheel_venv):
    bin_dir, env, home = wheel_venv
    out = _run([str(bin_dir / "jupyter"), "labextension", "list"], env, home)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)  # it colours "enabled" and "OK"
    assert re.search(r"gpu-dask-kit v\S+ enabled\s+OK", text), text
    assert str(bin_dir.parent / "share" / "jupyter" / "labextensions") in text


def test_lab_copies_workshop_and_serves_first_notebook(wheel_venv):
    bin_dir, env, home = wheel_venv
    workshop = home / "gpu-dask-kit-workshop"
    proc = subprocess.Popen(
        [str(bin_dir / "gpu-dask-kit"), "lab", "--no-browser"], env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    try:
        children = []
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
            assert resp.status == 200
        token = url.rsplit("token=", 1)[1]
        api = url.split("/lab/")[0] + "/api/contents/00_start_here.ipynb"
        req = urllib.request.Request(api, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            model = json.loads(resp.read())
        assert model["type"] == "notebook" and model["path"] == "00_start_here.ipynb"
    finally:
        proc.terminate()
        proc.wait(60)
        _gone, alive = psutil.wait_procs(children, timeout=30)
        for p in alive:
            p.kill()
    text = "".join(lines)
    assert f"into {workshop}" in text, text
    assert (workshop / "00_start_here.ipynb").is_file() and not (workshop / "nbval-sanitize.cfg").exists()
    # the URL is the last thing printed before the server's own (quiet) messages
    assert text.rstrip().splitlines()[-1].strip().startswith("http://127.0.0.1:"), text
    settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    assert json.loads((settings / "notification.jupyterlab-settings").read_text())["fetchNews"] == "false"
    assert not alive, f"left running: {alive}"


def test_second_run_keeps_the_learners_edits(wheel_venv):
    bin_dir, env, home = wheel_venv
    folder = home / "second"
    env = dict(env, GPU_DASK_KIT_WORKSHOP_DIR=str(folder))
    code = "from gpu_dask_kit.workshop import prepare_lab; print(prepare_lab().messages[0])"
    first = _run([str(bin_dir / "python"), "-c", code], env, home).stdout
    assert f"workshop file(s) into {folder}" in first
    (folder / "00_start_here.ipynb").write_text("my edits")
    (folder / "01_gpu_cluster_setup.ipynb").unlink()
    second = _run([str(bin_dir / "python"), "-c", code], env, home).stdout
    assert f"Copied 1 workshop file(s) into {folder}" in second
    assert (folder / "00_start_here.ipynb").read_text() == "my edits"
    assert (folder / "01_gpu_cluster_setup.ipynb").is_file()


def test_every_notebook_ships_and_check_runs_one_from_the_wheel(wheel_venv):
    """The wheel ships every notebook of the checkout unchanged, `check` finds them outside a checkout, and
    `gpu-dask-kit check` runs the shipped 00_start_here (small scale) from the installed wheel. Every notebook's
    own run is nbval's (`make test-notebooks`, exercises solved): each notebook executes once per CI run."""
    bin_dir, env, home = wheel_venv
    code = "from gpu_dask_kit.venue import default_notebook_dir; print(default_notebook_dir())"
    shipped = Path(_run([str(bin_dir / "python"), "-c", code], env, home).stdout.strip())
    assert str(shipped).startswith(str(bin_dir.parent)), shipped
    names = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(names) >= 10 and sorted(p.name for p in shipped.glob("[0-9][0-9]_*.ipynb")) == names
    changed = [n for n in names if (shipped / n).read_bytes() != (REPO / "notebooks" / n).read_bytes()]
    assert not changed, f"shipped notebooks differ from the checkout's: {changed}"
    folder = home / "one-notebook"
    folder.mkdir()
    shutil.copy(shipped / "00_start_here.ipynb", folder)
    cmd = [str(bin_dir / "gpu-dask-kit"), "check", "--scale", "small", "--notebook-dir", str(folder), "--output-dir", str(home / "vc")]
    out = _run(cmd, env, home, timeout=900, check=False)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    report = json.loads((home / "vc" / "report.json").read_text())
    assert report["passed"] and [n["notebook"] for n in report["notebooks"]] == ["00_start_here.ipynb"], report
    assert not _running_from(bin_dir.parent), "`check` left processes of the wheel's venv running"


def _running_from(prefix: Path, timeout: float = 15) -> list[int]:
    """PIDs of processes still running a program of ``prefix`` (this test's fresh venv) after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            with contextlib.suppress(psutil.Error):
                if any(part.startswith(str(prefix)) for part in (proc.info["cmdline"] or [])[:2]) and proc.status() != psutil.STATUS_ZOMBIE:
                    left.append(proc.info["pid"])
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
