"""One word per idea: ``mode`` ("gpu" | "cpu") is the kit's word for where the workers compute; ``backend``
appears in the package (Python and the lab extension's TypeScript) only for dask's array/dataframe backend,
the deprecated ``session.backend`` alias and the reading of registry records written before the rename."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import gpu_dask_kit
from gpu_dask_kit.session_info import SessionInfo

PACKAGE = Path(gpu_dask_kit.__file__).parent
SOURCES = [
    *(p for p in PACKAGE.rglob("*.py") if "exercises" not in p.relative_to(PACKAGE).parts),
    *(PACKAGE.parent / "labextension" / "src").rglob("*.ts"),
]
#: dask's sense of the word, removed from a line before looking for what is left.
DASK_SENSE = re.compile(r"(array|dataframe)[._]backend|to_backend|client_backends|dask's (array and dataframe )?backends")
#: The only other lines allowed to say it: (file name, text the line contains).
ALLOWED = {
    ("session_info.py", "def backend(self) -> str:"),
    ("session_info.py", "session.backend is deprecated; use session.mode"),
    ("registry.py", 'if "backend" in data:  # a record written before the key was renamed to "mode"'),
    ("registry.py", 'data.setdefault("mode", data.pop("backend"))'),
}


def _other_uses() -> list[str]:
    found = []
    for path in SOURCES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "backend" not in DASK_SENSE.sub("", line).lower():
                continue
            if not any(path.name == name and text in line for name, text in ALLOWED):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    return found


def test_the_scan_reads_the_package_and_the_extension():
    names = {p.name for p in SOURCES}
    assert {"session_info.py", "registry.py", "monitor.py", "compute.py", "models.ts", "render.ts"} <= names
    assert len(SOURCES) > 40


def test_backend_means_only_dasks_backend():
    assert _other_uses() == [], "say `mode` for gpu/cpu; `backend` is dask's array/dataframe backend"


def test_the_allow_list_is_still_needed():
    """Every allowed line still exists (an entry left after its line went would hide a new use)."""
    lines = {(p.name, line) for p in SOURCES for line in p.read_text().splitlines()}
    for name, text in ALLOWED:
        assert any(n == name and text in line for n, line in lines), (name, text)


class _Info(SessionInfo):
    def __init__(self, mode: str) -> None:
        self.mode = mode


@pytest.mark.parametrize("mode", ["gpu", "cpu"])
def test_session_backend_is_a_deprecated_alias_of_mode(mode):
    with pytest.warns(DeprecationWarning, match=r"session\.backend is deprecated; use session\.mode"):
        assert _Info(mode).backend == mode
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _Info(mode).mode == mode
