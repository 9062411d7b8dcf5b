"""Which cell of the open notebook makes a name the kernel lacks (a cell skipped above): named by the heading it is under.

JupyterLab starts a notebook's kernel with ``JPY_SESSION_NAME`` set to the notebook's path, and ipykernel puts that in
the namespace as ``__session__``. A kernel started another way (nbval, jupyter_client) has none: then this says nothing,
and the hints fall back to the kernel's input history.

>>> import json, os, tempfile
>>> cells = [{"cell_type": "markdown", "source": ["## Futures: work you start now\\n", "text"]},
...          {"cell_type": "code", "source": ["def square(i):\\n", "    return i * i"]},
...          {"cell_type": "code", "source": "futures = client.map(square, range(3))"}]
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "09.ipynb")
>>> _ = open(path, "w").write(json.dumps({"cells": cells}))
>>> cell_making({"__session__": path}, "square")
'the 1st code cell under the heading "Futures: work you start now"'
>>> cell_making({"__session__": path}, "futures"), cell_making({"__session__": path}, "nothing") is None
('the 2nd code cell under the heading "Futures: work you start now"', True)
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

from .cellreads import _stored

__all__ = ["cell_making", "names_above"]

_ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def _notebook(namespace: Any) -> Path | None:
    """The open notebook's file: ``__session__`` as given, or under the kernel's folder (the notebook's own)."""
    given = namespace.get("__session__") if isinstance(namespace, dict) else None
    if not isinstance(given, str) or not given.endswith(".ipynb"):
        return None
    for candidate in (Path(given), Path.cwd() / given, Path.cwd() / Path(given).name):
        if candidate.is_file():
            return candidate
    return None


def _bound(source: str) -> set[str]:
    """The names a cell's code binds at its top level (assignment, def, class, import, for target); magics left out."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {name for statement in tree.body for name in _stored(statement)}


def _binds(source: str, name: str) -> bool:
    """True when a cell's code binds ``name`` at its top level."""
    return name in _bound(source)


def _heading(source: str) -> str | None:
    """The last Markdown heading in a cell's text, without its ``#`` and emphasis."""
    found = [line.lstrip("#").strip() for line in source.splitlines() if re.match(r"#{1,6}\s", line)]
    return found[-1].replace("`", "").replace("*", "") if found else None


def _cells(namespace: Any) -> list[tuple[str, str]] | None:
    """The open notebook's cells, in order, as (cell type, source); None when the notebook is not known."""
    path = _notebook(namespace)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"] if path is not None else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(cells, list):
        return None
    found = []
    for cell in cells:
        if isinstance(cell, dict):
            source = cell.get("source", "")
            found.append((str(cell.get("cell_type")), "".join(source) if isinstance(source, list) else str(source)))
    return found


def names_above(namespace: Any, key: str) -> set[str] | None:
    """The names the open notebook's code cells above exercise ``key``'s answer cell bind (the lesson's names, the
    earlier exercises' answers included); None when the notebook or the exercise's check cell is not found.

    >>> import json, os, tempfile
    >>> cells = [{"cell_type": "code", "source": "medians = {1: 2.0}"},
    ...          {"cell_type": "code", "source": "speed_up = ..."},
    ...          {"cell_type": "code", "source": 'exercises.check("07-2", globals())'},
    ...          {"cell_type": "code", "source": "speed_ups = {1: 1.0}"}]
    >>> path = os.path.join(tempfile.mkdtemp(), "07.ipynb")
    >>> _ = open(path, "w").write(json.dumps({"cells": cells}))
    >>> sorted(names_above({"__session__": path}, "07-2")), names_above({"__session__": path}, "01-1") is None
    (['medians'], True)
    """
    cells = _cells(namespace)
    if cells is None:
        return None
    sources = [source for cell_type, source in cells if cell_type == "code"]
    checks = [i for i, source in enumerate(sources) if re.search(rf"""exercises\.check\(\s*["']{re.escape(key)}["']""", source)]
    if not checks or checks[0] < 1:
        return None
    names: set[str] = set()
    for source in sources[: checks[0] - 1]:  # the cell right above the check is the answer cell
        names |= _bound(source)
    return names


def cell_making(namespace: Any, name: str) -> str | None:
    """'the 2nd code cell under the heading "Futures: ..."': the first code cell of the open notebook that makes
    ``name``; None when the notebook is not known or no cell of it makes ``name``."""
    heading, under = None, 0
    for cell_type, source in _cells(namespace) or []:
        if cell_type == "markdown":
            found = _heading(source)
            if found:
                heading, under = found, 0
            continue
        if cell_type != "code":
            continue
        under += 1
        if _binds(source, name):
            place = f"{_ORDINALS.get(under, f'{under}th')} code cell"
            where = f'under the heading "{heading}"' if heading else f"of {os.path.basename(str(_notebook(namespace)))}"
            return f"the {place} {where}"
    return None
