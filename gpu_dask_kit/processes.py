"""Process identity and ending processes by PID.

A process is identified by its PID *and* its start time, so a recycled PID is never taken for the
process the kit started. :func:`end_processes` is the one way the kit ends processes: it waits, then
terminates, then kills, and only ever signals the processes it is given.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import psutil

__all__ = ["process_identity", "same_process", "processes", "end_processes", "running"]


def process_identity(pid: int) -> dict[str, Any] | None:
    """``{"pid", "create_time"}`` of a running process, or None.

    >>> import os
    >>> process_identity(os.getpid())["pid"] == os.getpid()
    True
    """
    try:
        return {"pid": pid, "create_time": psutil.Process(pid).create_time()}
    except psutil.Error:
        return None


def same_process(identity: dict[str, Any]) -> psutil.Process | None:
    """The process if it still runs and is the one recorded (not a recycled pid, not a zombie)."""
    try:
        proc = psutil.Process(int(identity["pid"]))
        if abs(proc.create_time() - float(identity["create_time"])) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE:
            return proc
    except (psutil.Error, KeyError, TypeError, ValueError):
        pass
    return None


def processes(pids: Iterable[int]) -> list[psutil.Process]:
    """The running processes among ``pids`` (the others are left out)."""
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return procs


def running(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    """The processes among ``procs`` that still run (a zombie counts as exited)."""
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            pass
    return alive


def end_processes(procs: list[psutil.Process], timeout: float, grace: float = 3.0) -> list[int]:
    """Wait up to ``timeout`` s for these processes to exit (a zombie counts as exited); terminate the
    ones still running, wait ``grace`` s, kill what is left. Returns the PIDs that had to be ended.
    Only the given processes are ever signalled."""
    deadline = time.monotonic() + timeout
    alive, interval = running(procs), 0.005
    while alive and time.monotonic() < deadline:
        time.sleep(interval)
        alive, interval = running(alive), min(interval * 2, 0.1)
    for proc in alive:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, left = psutil.wait_procs(alive, timeout=grace)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    return [p.pid for p in alive]
