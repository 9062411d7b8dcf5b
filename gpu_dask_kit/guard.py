"""Scripts never hang: the ``if __name__ == "__main__":`` guard, checked before any process starts.

Dask starts each local worker with multiprocessing's *spawn* (or *forkserver*) method: the new process
imports the user's script again (as ``__mp_main__``) before it runs the worker. A script without the guard
then calls ``start_cluster()`` in every worker, and each of those would start a cluster of its own; the
user sees the first lines printed several times and a hang. So:

- :func:`check_script` (in the user's process, before anything starts) finds the line of the running
  script that leads to ``start_cluster()`` and raises :class:`~gpu_dask_kit.errors.ClusterStartError` with
  the two-line fix when that line is outside a ``__main__`` guard: nothing is started, nothing is left.
- :func:`refuse_in_worker_bootstrap` (in a worker that is importing the script) never starts a cluster:
  it prints one line and exits that process, so the user's process fails within seconds.
- :func:`make_main_spawnable`: a main module that cannot be imported again (``python - < script.py``
  names its file ``<stdin>``) would make every worker fail to start. Workers do not need it (Dask sends
  functions by value), so its pseudo file name is dropped and the workers start without importing it.
"""

from __future__ import annotations

import ast
import multiprocessing
import os
import sys
from types import FrameType
from typing import Any

from .errors import ClusterStartError

__all__ = ["GUARD_FIX", "check_start", "check_script", "refuse_in_worker_bootstrap", "make_main_spawnable", "reimports_main"]

GUARD_FIX = 'if __name__ == "__main__":\n        session = gpu_dask_kit.start_cluster(...)   # and the code that uses it, indented'
_GUARD_WORDS = ("__name__", "parent_process", "current_process")


def _start_method() -> str:
    import dask.config

    return str(dask.config.get("distributed.worker.multiprocessing-method", "spawn") or "spawn")


def reimports_main() -> str | None:
    """The file a spawned worker would import again (the running script), or None (no re-import)."""
    if _start_method() == "fork":
        return None
    from multiprocessing import spawn

    data = spawn.get_preparation_data("gpu-dask-kit-check")
    name = data.get("init_main_from_name")
    if name is not None:  # `python -m pkg.mod`; spawn never runs a package's __main__.py again
        return None if name == "__main__" or name.endswith(".__main__") else getattr(sys.modules.get("__main__"), "__file__", None)
    path = data.get("init_main_from_path")
    if path is None or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return str(path)


def make_main_spawnable() -> str | None:
    """Drop the pseudo file name of a main module that cannot be imported again (``<stdin>``); return it."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or getattr(main, "__spec__", None) is not None or _start_method() == "fork":
        return None
    full = path if os.path.isabs(path) else os.path.join(getattr(multiprocessing.process, "ORIGINAL_DIR", None) or os.getcwd(), path)
    if os.path.isfile(full):
        return None
    del main.__file__  # type: ignore[union-attr]  # spawn then starts workers without importing it (it could not: no such file)
    return path


def _script_frame(path: str) -> FrameType | None:
    """The outermost frame that runs the main script's top level (None when not called from there)."""
    main = sys.modules.get("__main__")
    frame: FrameType | None = sys._getframe(1)
    found = None
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is getattr(main, "__dict__", None):
            found = frame
        frame = frame.f_back
    if found is None:
        return None
    try:
        return found if os.path.samefile(found.f_code.co_filename, path) else None
    except OSError:
        return None


def _guarded(source: str, line: int) -> bool | None:
    """True when ``line`` lies in an ``if`` block whose test mentions ``__name__`` (or multiprocessing's
    process checks); None when the source cannot be parsed."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(w in ast.unparse(node.test) for w in _GUARD_WORDS):
            for block in (node.body, node.orelse):
                if block and block[0].lineno <= line <= (block[-1].end_lineno or block[-1].lineno):
                    return True
    return False


def check_start(options: Any) -> None:
    """Before a start: refuse in a worker importing the script; check the script's guard for a local start."""
    refuse_in_worker_bootstrap()
    if not options.connect_mode and getattr(options, "deploy", "local") == "local":
        check_script()


def check_script() -> None:
    """Raise the guard message when the running script calls ``start_cluster()`` outside its guard."""
    path = reimports_main()
    if path is None:
        return
    frame = _script_frame(path)
    if frame is None:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            guarded = _guarded(fh.read(), frame.f_lineno)
    except OSError:
        return
    if guarded is False:
        raise ClusterStartError(guard_message(path, frame.f_lineno))


def guard_message(path: str, line: int | None) -> str:
    where = f"{os.path.basename(path)}, line {line}" if line else os.path.basename(path)
    return (
        f'Nothing was started: this script starts a cluster outside an `if __name__ == "__main__":` block ({where}). '
        f"Dask starts each worker as a new Python process that imports {os.path.basename(path)} again, so every worker "
        "would run that line too and start a cluster of its own (the script would print its first lines again and hang). "
        "Put the code that starts and uses the cluster under the guard:\n\n"
        f"    {GUARD_FIX}\n"
    )


_SPAWN_FILE = os.path.join("multiprocessing", "spawn.py")


def in_worker_bootstrap() -> bool:
    """True in a process that multiprocessing is still preparing: the call comes from ``spawn.prepare``
    importing the parent's main script (spawn and forkserver start every worker that way)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "prepare" and code.co_filename.endswith(_SPAWN_FILE):
            return True
        frame = frame.f_back
    return False


def refuse_in_worker_bootstrap() -> None:
    """In a worker importing the user's script: never start a cluster; say one line and end this process."""
    if not in_worker_bootstrap():
        return
    main = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    path = getattr(main, "__file__", None) or "the main script"
    print(
        f"gpu-dask-kit: a worker process importing {os.path.basename(path)} reached start_cluster(); it starts no cluster "
        'and exits. Put the code that starts the cluster under `if __name__ == "__main__":`.',
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(3)
