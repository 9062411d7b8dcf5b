"""One version number: the JupyterLab extension's package.json says the Python package's version.

``gpu_dask_kit/_version.py`` is the source (hatch reads it for the wheel); when you bump it, bump
``labextension/package.json``'s ``version`` to the same string (npm and PEP 440 agree on plain
``X.Y.Z``; keep to that form).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def python_version() -> str:
    tree = ast.parse((REPO / "gpu_dask_kit" / "_version.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("gpu_dask_kit/_version.py defines no __version__")


def test_labextension_version_is_the_python_version():
    npm = json.loads((REPO / "labextension" / "package.json").read_text())["version"]
    assert npm == python_version(), (
        f"labextension/package.json has version {npm!r} but gpu_dask_kit/_version.py has {python_version()!r}: set both to the same X.Y.Z"
    )


def test_the_installed_package_reports_the_same_version():
    import gpu_dask_kit

    assert gpu_dask_kit.__version__ == python_version()
