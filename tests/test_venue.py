"""The venue check (`gpu-dask-kit check`) and the output refresh, on tiny notebooks (the real 00 under `check`:
tests/test_wheel.py, from the installed wheel)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from gpu_dask_kit import venue
from gpu_dask_kit.cli import main as cli_main

REPO_NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _write(folder: Path, name: str, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / name
    nbformat.write(nb, path)
    return path


@pytest.fixture
def tiny(tmp_path):
    """00_ok passes and records the scale it saw; 01_bad fails in its second cell; notes.ipynb is not a workshop notebook."""
    folder = tmp_path / "nbs"
    folder.mkdir()
    _write(folder, "00_ok.ipynb", "import os\nprint('scale', os.environ['GPU_DASK_KIT_SCALE'])", "1 + 1")
    _write(folder, "01_bad.ipynb", "x = 1", "raise ValueError('boom: the venue has no such thing')", "print('never')")
    _write(folder, "notes.ipynb", "raise SystemExit('must not run')")
    return folder


def test_find_notebooks_takes_numbered_ones_in_order(tiny):
    assert [p.name for p in venue.find_notebooks(tiny)] == ["00_ok.ipynb", "01_bad.ipynb"]
    assert venue.find_notebooks(tiny / "missing") == []


def test_check_reports_pass_fail_seconds_and_the_failing_cell(tiny, tmp_path, capsys):
    out = tmp_path / "report"
    code = venue.run_check(scale="full", notebook_dir=tiny, output_dir=out, timeout=120)
    text = capsys.readouterr().out

    assert code == 1
    assert "mode: CPU" in text or "mode: GPU" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith(("00_ok", "01_bad", "total"))}
    assert rows["00_ok.ipynb"].split()[1] == "pass"
    assert rows["01_bad.ipynb"].split()[1] == "FAIL"
    assert "cell 1: ValueError: boom: the venue has no such thing" in rows["01_bad.ipynb"]
    assert "1/2" in rows["total"] and "1 failed" in rows["total"]
    float(rows["00_ok.ipynb"].split()[2])  # seconds column

    report = json.loads((out / "report.json").read_text())
    assert report["passed"] is False and report["scale"] == "full" and report["mode"] in ("cpu", "gpu")
    assert report["reason"]
    ok, bad = report["notebooks"]
    assert ok == {"notebook": "00_ok.ipynb", "passed": True, "seconds": ok["seconds"], "error": None, "cell": None}
    assert bad["passed"] is False and bad["cell"] == 1 and bad["error"].startswith("ValueError: boom")

    executed = nbformat.read(out / "00_ok.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "scale full\n"  # the kernel saw GPU_DASK_KIT_SCALE
    failed = nbformat.read(out / "01_bad.ipynb", as_version=4)
    assert failed.cells[1].outputs[0]["output_type"] == "error"
    assert not (out / "notes.ipynb").exists()


def test_check_returns_zero_when_all_pass(tiny, tmp_path, capsys):
    (tiny / "01_bad.ipynb").unlink()
    assert venue.run_check(notebook_dir=tiny, output_dir=tmp_path / "r", timeout=120) == 0
    assert "all passed" in capsys.readouterr().out


def test_check_with_no_notebooks_or_a_bad_scale_returns_two(tmp_path, capsys):
    assert venue.run_check(notebook_dir=tmp_path, output_dir=tmp_path / "r") == 2
    assert "no NN_*.ipynb notebooks" in capsys.readouterr().err
    assert venue.run_check(scale="huge", notebook_dir=tmp_path) == 2


def test_cli_check_runs_the_same(tiny, tmp_path, capsys):
    code = cli_main(["check", "--notebook-dir", str(tiny), "--output-dir", str(tmp_path / "cli"), "--timeout", "120"])
    assert code == 1
    assert (tmp_path / "cli" / "report.json").exists()


def test_a_notebook_over_its_time_fails_with_a_timeout(tmp_path):
    folder = tmp_path / "slow"
    folder.mkdir()
    path = _write(folder, "00_slow.ipynb", "import time\ntime.sleep(30)")
    result = venue.execute_notebook(path, timeout=3)
    assert not result.passed and "Timeout" in result.error and result.seconds < 25


def test_refresh_rewrites_passing_notebooks_and_leaves_failing_ones(tiny):
    before_bad = (tiny / "01_bad.ipynb").read_text()
    assert venue.refresh_outputs(tiny, timeout=120) == 1
    ok = nbformat.read(tiny / "00_ok.ipynb", as_version=4)
    assert ok.cells[0].outputs[0]["text"] == "scale small\n"  # refresh always runs at small scale
    assert ok.cells[1].execution_count == 2
    assert "execution" not in ok.cells[0].metadata  # no timestamps: stable diffs
    assert (tiny / "01_bad.ipynb").read_text() == before_bad
    assert not list(tiny.glob("*.tmp"))


def test_default_notebook_dir_prefers_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert venue.default_notebook_dir() == REPO_NOTEBOOKS  # no ./notebooks here: the checkout's
    (tmp_path / "notebooks").mkdir()
    _write(tmp_path / "notebooks", "00_x.ipynb", "1")
    assert venue.default_notebook_dir() == tmp_path / "notebooks"


def test_a_kernel_that_dies_before_replying_is_started_once_more(tmp_path, monkeypatch):
    """make test, fourteenth session: a venue kernel died before replying ("ZMQError: Address already in use": a TCP
    port it was given was taken by another process before it bound it) and the notebook was reported failed. A kernel
    that dies at start ran nothing: a second one (new ports) runs the notebook. Here the first kernel exits at once."""
    import sys

    base = venue._kernel_manager_class()
    started = []

    class FirstDies(base):
        async def _async_pre_start_kernel(self, **kw):
            cmd, kw = await super()._async_pre_start_kernel(**kw)
            started.append(cmd)
            return ([sys.executable, "-c", "raise SystemExit(1)"] if len(started) == 1 else cmd), kw

    monkeypatch.setattr(venue, "_kernel_manager_class", lambda: FirstDies)
    _write(tmp_path, "00_once.ipynb", "print('ran')")
    result = venue.execute_notebook(tmp_path / "00_once.ipynb", timeout=120, output_path=tmp_path / "out.ipynb")
    assert result.passed and len(started) == 2, (result, started)
    assert nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0]["text"] == "ran\n"
