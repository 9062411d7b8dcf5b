"""A real ``dask-gateway-server`` on 127.0.0.1 for the gateway tier: local (unsafe) backend, one shared
password for every user (``SimpleAuthenticator``), clusters run as processes of this machine.

:func:`start_gateway` writes the config, starts the server, waits until its API answers and returns a
:class:`GatewayServer`; :meth:`GatewayServer.stop` stops it by PID and ends (by PID) anything it left.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

PASSWORD = "workshop-password"

_CONFIG = """
from dask_gateway_server.options import Options, Integer, Float
c.Gateway.address = "127.0.0.1:{api_port}"
c.Proxy.address = "127.0.0.1:{proxy_port}"
c.Gateway.backend_class = "dask_gateway_server.backends.local.UnsafeLocalBackend"
c.Gateway.authenticator_class = "dask_gateway_server.auth.SimpleAuthenticator"
c.SimpleAuthenticator.password = {password!r}
c.LocalBackend.cluster_start_timeout = 60
c.LocalBackend.worker_start_timeout = 60
c.ClusterConfig.scheduler_cmd = {scheduler_cmd!r}
c.ClusterConfig.worker_cmd = {worker_cmd!r}
c.ClusterConfig.environment = {environment!r}
c.ClusterConfig.cluster_max_workers = 4
c.ClusterConfig.scheduler_memory = "512 M"

def options_handler(options, user=None):
    return {{"worker_cores": options.worker_cores, "worker_memory": int(options.worker_memory * 2**30)}}

c.Backend.cluster_options = Options(
    Integer("worker_cores", default=1, min=1, max=2, label="Worker cores"),
    Float("worker_memory", default=1, min=0.25, max=2, label="Worker memory (GiB)"),
    handler=options_handler,
)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class GatewayServer:
    address: str  # what clients use (the proxy's HTTP address)
    process: subprocess.Popen
    log: Path
    seen: set[int] = field(default_factory=set)  # PIDs of every process it started that we saw
    baseline: set[int] = field(default_factory=set)  # its own helpers (the proxy), not a cluster's

    def descendants(self) -> list[psutil.Process]:
        try:
            found = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        self.seen.update(p.pid for p in found)
        return found

    def stop(self, timeout: float = 20.0) -> list[int]:
        """Stop the server by PID (SIGTERM, then SIGKILL); end what it left by PID; the PIDs left before that."""
        self.descendants()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        left = [pid for pid in sorted(self.seen) if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


def start_gateway(workdir: Path, *, worker_cmd: list[str] | None = None, environment: dict[str, str] | None = None, timeout: float = 60.0) -> GatewayServer:
    """Start a gateway server (its cwd and logs in ``workdir``) and wait until its API answers."""
    bindir = os.path.dirname(sys.executable)
    api, proxy = free_port(), free_port()
    config = workdir / "gateway_config.py"
    config.write_text(
        _CONFIG.format(
            api_port=api,
            proxy_port=proxy,
            password=PASSWORD,
            scheduler_cmd=[os.path.join(bindir, "dask"), "scheduler"],
            worker_cmd=worker_cmd or [os.path.join(bindir, "dask"), "worker"],
            environment=environment or {},
        )
    )
    log = workdir / "gateway.log"
    env = dict(os.environ, **(environment or {}))  # the local backend lets PATH and PYTHONPATH of its own environment win
    env["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    with open(log, "w") as out:
        process = subprocess.Popen([os.path.join(bindir, "dask-gateway-server"), "-f", str(config)], cwd=workdir, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = GatewayServer(f"http://127.0.0.1:{proxy}", process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dask-gateway-server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{server.address}/api/health", timeout=2) as r:
                if r.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"dask-gateway-server did not answer within {timeout} s:\n{log.read_text()[-3000:]}")
