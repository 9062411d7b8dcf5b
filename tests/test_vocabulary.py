"""One word per idea: ``mode`` ("gpu" | "cpu") is the kit's word for where the workers compute; ``backend``
appears in the package (Python and the lab extension's TypeScript) only for dask's array/dataframe backend,
the deprecated ``session.backend`` alias and the reading of registry records written before the rename.

``kind`` had four meanings; each has its own word now: a session record's ``started_by`` ("notebook",
"script", "labextension", "connect"...), an option spec's ``form`` (choice/flag/count/list/text), a memory
bar's ``memory`` ("device"/"host", ``data-memory`` in the widget's markup) and gateway_login's ``auth``.
``kind`` is left to other libraries' objects (``inspect.Parameter.kind``, a NumPy ``dtype.kind``)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
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


def _uses(sources: list[Path], says: Callable[[str], bool], allowed: set[tuple[str, str]]) -> list[str]:
    """``file:line: text`` of each line that ``says`` the word and is not an allowed line."""
    found = []
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if says(line) and not any(path.name == name and text in line for name, text in allowed):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    return found


def _says_backend(line: str) -> bool:
    return "backend" in DASK_SENSE.sub("", line).lower()


def test_the_scan_reads_the_package_and_the_extension():
    names = {p.name for p in SOURCES}
    assert {"session_info.py", "registry.py", "monitor.py", "compute.py", "models.ts", "render.ts"} <= names
    assert len(SOURCES) > 40


def test_backend_means_only_dasks_backend():
    assert _uses(SOURCES, _says_backend, ALLOWED) == [], "say `mode` for gpu/cpu; `backend` is dask's array/dataframe backend"


@pytest.mark.parametrize("word", ["backend", "kind"])
def test_the_allow_list_is_still_needed(word):
    """Every allowed line still exists (an entry left after its line went would hide a new use)."""
    sources, allowed = {"backend": (SOURCES, ALLOWED), "kind": (KIND_SOURCES, KIND_ALLOWED)}[word]
    lines = {(p.name, line) for p in sources for line in p.read_text().splitlines()}
    for name, text in allowed:
        assert any(n == name and text in line for n, line in lines), (name, text)


#: Files the ``kind`` scan skips, each with why (none left: every meaning has its own word).
KIND_SKIPPED: dict[str, str] = {}
KIND_SOURCES = [
    *(p for p in PACKAGE.rglob("*") if p.suffix in {".py", ".html", ".j2"} and not KIND_SKIPPED.keys() & set(p.relative_to(PACKAGE).parts)),
    *(PACKAGE.parent / "labextension" / "src").rglob("*.ts"),
    *(PACKAGE.parent / "labextension" / "style").rglob("*.css"),
]
#: Other libraries' ``kind``, removed from a line before looking for what is left.
OTHER_LIBRARIES_KIND = re.compile(r"\.kind is (not )?inspect\.Parameter\.|dtype\.kind\b")
#: The only lines of the kit's own that may still say it: (file name, text the line contains).
KIND_ALLOWED = {
    ("registry.py", 'if "kind" in data:  # a record written before the key was renamed to "started_by"'),
    ("registry.py", 'data.setdefault("started_by", data.pop("kind"))'),
}
_KIND = re.compile(r"\bkind\b", re.I)


def _says_kind(line: str) -> bool:
    return _KIND.search(OTHER_LIBRARIES_KIND.sub("", line)) is not None


def test_the_kind_scan_reads_the_package_the_extension_and_its_style():
    names = {p.name for p in KIND_SOURCES}
    assert {"registry.py", "spec.py", "markup.py", "gateway_login.py", "models.ts", "render.ts", "base.css"} <= names
    assert not names & set(KIND_SKIPPED), "a skipped file was scanned"


def test_kind_is_not_a_name_of_the_kits_own_objects():
    assert _uses(KIND_SOURCES, _says_kind, KIND_ALLOWED) == [], "say started_by (a session record), form (an option spec), memory (a memory bar) or auth"


def test_the_kind_scan_finds_each_old_meaning():
    """The scan catches each of the four old spellings (so a pass above is not a scan that sees nothing)."""
    for line in (
        '    kind: str = "notebook"',
        "if spec.kind == 'flag':",
        "data-kind='{bar.kind}'",
        "    kind = options.gateway_auth",
        "head.appendChild(el('span', `gdk-kind gdk-kind-${session.kind}`));",
    ):
        assert _says_kind(line), line
    assert not _says_kind("if params[-1].kind is not inspect.Parameter.VAR_KEYWORD:") and not _says_kind("a.dtype.kind == 'f'")


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
