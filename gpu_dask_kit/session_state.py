"""The sessions of this process: the open ones, and the current one (the last ``start_cluster()``).

Kept apart from :mod:`gpu_dask_kit.session` (the lifecycle) so that both the session and the entry points
that start clusters without making them current (dask-labextension's "+ NEW") share one list.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["lock", "current", "set_current", "add", "forget", "owned", "open_sessions"]

lock = threading.RLock()
_current: Any = None
_open: list[Any] = []


def current(alive: bool = False) -> Any:
    """The current session if it is not closed (and, with ``alive``, still running), else None."""
    with lock:
        session = _current
        if session is None or session.closed or (alive and not session.is_alive()):
            return None
        return session


def set_current(session: Any) -> None:
    global _current
    with lock:
        _current = session


def add(session: Any) -> None:
    with lock:
        _open.append(session)


def forget(session: Any) -> bool:
    """Drop a closing session (also as the current one); False when it was already closed."""
    global _current
    with lock:
        if session.closed:
            return False
        if _current is session:
            _current = None
        if session in _open:
            _open.remove(session)
        return True


def owned(session_id: str) -> Any:
    """The open session of this process with this registry id, or None."""
    with lock:
        return next((s for s in _open if s.id == session_id), None)


def open_sessions() -> list[Any]:
    with lock:
        return list(_open)
