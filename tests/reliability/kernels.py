"""Real Jupyter kernels (ipykernel through jupyter_client) for the reliability tests.

A :class:`Kernel` is an ``AsyncKernelManager`` plus its client. ``execute`` runs one cell the way a
notebook does and returns everything the kernel published for it (streams, errors, results), and
every stream message of the kernel's life is also kept in ``Kernel.streams`` so tests can look for
warnings printed at any time. The kernel process's own stdout/stderr (where worker processes and
logging handlers bound to the real fd write) go to a file, also searched by the tests.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from jupyter_client.manager import AsyncKernelManager

from gpu_dask_kit.processes import running  # re-exported for the reliability tests (zombies count as gone)


class CellError(AssertionError):
    """A cell raised in the kernel (or did not finish in time)."""


@dataclass
class CellResult:
    code: str
    elapsed: float
    streams: list[tuple[str, str]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    result: str | None = None  # text/plain of execute_result

    @property
    def stdout(self) -> str:
        return "".join(text for name, text in self.streams if name == "stdout")

    @property
    def stderr(self) -> str:
        return "".join(text for name, text in self.streams if name == "stderr")

    def last_json(self) -> Any:
        """The last stdout line, parsed as JSON (cells print their measurements as one JSON line)."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        if not lines:
            raise CellError(f"cell printed nothing on stdout; streams={self.streams!r}")
        return json.loads(lines[-1])


class Kernel:
    """One real ipykernel (the venv's ``python3`` kernel spec) with a private registry folder."""

    def __init__(self, runtime_dir: Path, log_path: Path, cwd: Path) -> None:
        self.runtime_dir = Path(runtime_dir)
        self.log_path = Path(log_path)
        self.cwd = Path(cwd)
        self.km = AsyncKernelManager(kernel_name="python3")
        self.kc = None
        self.streams: list[tuple[str, str]] = []  # every stream message, any cell, whole life (restarts too)
        self._log = None

    @property
    def pid(self) -> int:
        return int(self.km.provisioner.pid)

    async def start(self, timeout: float = 90) -> Kernel:
        env = dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(self.runtime_dir), PYTHONUNBUFFERED="1")
        env.pop("JPY_PARENT_PID", None)
        self._log = open(self.log_path, "ab")
        await self.km.start_kernel(env=env, cwd=str(self.cwd), stdout=self._log, stderr=self._log)
        await self._connect(timeout)
        return self

    async def _connect(self, timeout: float) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        self.kc = self.km.client()
        self.kc.start_channels()
        await self.kc.wait_for_ready(timeout=timeout)

    async def restart(self, now: bool, timeout: float = 90) -> None:
        """``KernelManager.restart_kernel``: ``now=True`` kills the kernel's process group with SIGKILL
        at once (Jupyter's forced restart); ``now=False`` asks the kernel to shut down first."""
        await self.km.restart_kernel(now=now)
        await self._connect(timeout)

    async def reconnect_after_crash(self, timeout: float = 90) -> None:
        """Start a new kernel after the old process died by itself (what Jupyter's auto-restarter does)."""
        await self.km.restart_kernel(now=True)
        await self._connect(timeout)

    async def execute(self, code: str, timeout: float = 120, check: bool = True) -> CellResult:
        assert self.kc is not None
        started = time.monotonic()
        msg_id = self.kc.execute(code)
        result = CellResult(code=code, elapsed=0.0)
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CellError(f"cell did not finish within {timeout} s: {code!r}; output so far {result.streams!r}")
            try:
                msg = await self.kc.get_iopub_msg(timeout=remaining)
            except TimeoutError:
                continue
            except Exception as exc:  # queue.Empty from the async client
                if type(exc).__name__ == "Empty":
                    continue
                raise
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "stream":
                self.streams.append((content["name"], content["text"]))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if kind == "stream":
                result.streams.append((content["name"], content["text"]))
            elif kind == "error":
                result.error = content
            elif kind == "execute_result":
                result.result = content["data"].get("text/plain")
            elif kind == "status" and content["execution_state"] == "idle":
                break
        reply = await self.kc.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = await self.kc.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
        result.elapsed = time.monotonic() - started
        if check and (result.error is not None or reply["content"]["status"] != "ok"):
            err = result.error or reply["content"]
            raise CellError(f"cell failed: {code!r}\n{err.get('ename')}: {err.get('evalue')}\n" + "\n".join(err.get("traceback", [])))
        return result

    async def shutdown(self, now: bool = False) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=now)
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def all_output(self) -> str:
        """Every stream the kernel published plus its process output file."""
        return "".join(text for _, text in self.streams) + self.log_text()


def tree(pid: int) -> list[psutil.Process]:
    """``pid`` and its descendants (psutil objects remember the create time: a recycled pid is not them)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def wait_all_gone(procs: list[psutil.Process], timeout: float, poll: float = 0.05, since: float | None = None) -> tuple[float | None, dict[int, float]]:
    """Wait until every process in ``procs`` is gone. Return (seconds until the last one went, or None
    on timeout; {pid: seconds until it went}), counted from ``since`` (a ``time.monotonic()``; default now)."""
    started = time.monotonic() if since is None else since
    gone_at: dict[int, float] = {}
    while True:
        now = time.monotonic() - started
        alive = {p.pid for p in running(procs)}
        for proc in procs:
            if proc.pid not in alive and proc.pid not in gone_at:
                gone_at[proc.pid] = round(now, 3)
        if not alive:
            return round(now, 3), gone_at
        if now > timeout:
            return None, gone_at
        time.sleep(poll)


def end(procs: list[psutil.Process]) -> list[int]:
    """Kill (by pid, checked against the create time) those of ``procs`` still running; return their pids."""
    left = running(procs)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(left, timeout=5)
    return [p.pid for p in left]


def describe(pids) -> list[dict]:
    """pid, parent, status, age and command line of each pid still present (for leak reports)."""
    out = []
    for pid in sorted(pids):
        try:
            proc = psutil.Process(pid)
            out.append(
                {
                    "pid": pid,
                    "ppid": proc.ppid(),
                    "status": proc.status(),
                    "age_s": round(time.time() - proc.create_time(), 1),
                    "cmd": " ".join(proc.cmdline())[:300],
                }
            )
        except psutil.Error:
            out.append({"pid": pid, "gone": True})
    return out
