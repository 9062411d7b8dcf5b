"""An answer cell that cancels its own results (``client.cancel(futures)``, ``future.release()``): re-running it cannot
help, so the check says which call to remove instead of "re-run your answer cell"."""

from __future__ import annotations

import ast
from typing import Any

from .replay import answer_cell

__all__ = ["own_cancel"]

#: Calls that drop results on the cluster.
DROPS = ("cancel", "release", "unpublish_dataset")


def own_cancel(namespace: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """The first call in the answer cell of ``names`` that drops results on the cluster, as written; None when none.

    >>> own_cancel({"In": ["", "f = c.submit(abs, 1)\\nc.cancel([f])", "check()"]}, ("f",))
    'c.cancel([f])'
    """
    cell = answer_cell(namespace, names)  # the latest cell that assigns any of them (a def is no assignment)
    try:
        tree = ast.parse(cell) if cell is not None else None
    except SyntaxError:
        return None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DROPS:
            return ast.unparse(node)
    return None
