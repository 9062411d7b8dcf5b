"""gpu_dask_kit.workshop: which folder `gpu-dask-kit lab` serves, the learner's copy, the lab command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpu_dask_kit import workshop
from gpu_dask_kit.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_checkout_serves_notebooks_with_settings_in_the_venv(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    setup = workshop.prepare_lab()
    assert setup.notebook_dir == REPO / "notebooks" and setup.first_notebook == "00_start_here.ipynb"
    assert setup.settings_dir == tmp_path / "venv" / "share" / "gpu-dask-kit" / "lab-user-settings"
    news = json.loads((setup.settings_dir / workshop.NOTIFICATION_SETTINGS).read_text())
    assert news == {"fetchNews": "false", "checkForUpdates": False}


def test_pip_route_copies_missing_files_only(monkeypatch, tmp_path):
    shipped = tmp_path / "prefix" / "share" / "gpu-dask-kit" / "notebooks"
    shipped.mkdir(parents=True)
    for name in ("00_start_here.ipynb", "01_x.ipynb", "README.md", "nbval-sanitize.cfg"):
        (shipped / name).write_text(name)
    shipped.joinpath("00_start_here.ipynb").chmod(0o444)  # a read-only prefix
    home, dest = tmp_path / "home", tmp_path / "home" / "ws"
    monkeypatch.setattr(workshop, "checkout_notebooks", lambda: None)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(home / ".jupyter"))
    monkeypatch.setenv(workshop.WORKSHOP_DIR_ENV, str(dest))
    first = workshop.prepare_lab()
    assert first.notebook_dir == dest and first.settings_dir is None
    assert sorted(p.name for p in dest.iterdir()) == ["00_start_here.ipynb", "01_x.ipynb", "README.md"]
    assert first.messages == [
        f"Copied 3 workshop file(s) into {dest} (yours to edit; a later `gpu-dask-kit lab` only adds missing files, it never overwrites)."
    ]
    (dest / "00_start_here.ipynb").write_text("my edits")  # writable although the source was not
    second = workshop.prepare_lab()
    assert (dest / "00_start_here.ipynb").read_text() == "my edits"
    assert "nothing new to copy" in second.messages[0]
    settings = home / ".jupyter" / "lab" / "user-settings" / workshop.NOTIFICATION_SETTINGS
    assert json.loads(settings.read_text())["fetchNews"] == "false"


def test_the_users_own_news_choice_is_kept(tmp_path):
    path = tmp_path / workshop.NOTIFICATION_SETTINGS
    path.parent.mkdir(parents=True)
    path.write_text('{"fetchNews": "true"}')
    assert workshop.quiet_notifications(tmp_path) is False
    assert path.read_text() == '{"fetchNews": "true"}'


def test_no_notebooks_anywhere_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(workshop, "checkout_notebooks", lambda: None)
    monkeypatch.setattr(workshop, "shipped_notebooks", lambda: None)
    assert main(["lab", "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "No workshop notebooks found" in err and "--notebook-dir" in err


def test_lab_command_opens_the_first_notebook_quietly(tmp_path):
    cmd = workshop.lab_command(tmp_path, 8899, settings_dir=tmp_path / "s", first_notebook="00_start_here.ipynb")
    assert "--LabApp.default_url=/lab/tree/00_start_here.ipynb" in cmd
    assert f"--LabApp.user_settings_dir={tmp_path / 's'}" in cmd and "--ServerApp.port_retries=0" in cmd
    assert not any("token" in part.lower() for part in cmd)  # the token goes by environment, not argv


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    from gpu_dask_kit._version import __version__

    assert capsys.readouterr().out.strip() == f"gpu-dask-kit {__version__}"
