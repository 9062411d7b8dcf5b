"""The connect target: an existing scheduler (``scheduler_address`` or ``scheduler_file``); nothing is started.

The kit never installs plugins on, nor stops, a cluster it did not start. :func:`start` returns a
:class:`~gpu_dask_kit.deploy.deployment.Deployment` without a cluster or plan (it cannot be scaled).
"""

from __future__ import annotations

import json
import time
from typing import Any

import dask.config

from .. import credentials, registry, scheduler_view
from ..environment import EnvironmentReport, detect
from ..errors import ConnectError
from ..options import ClusterOptions
from ..plan import client_backends
from .deployment import Deployment

__all__ = ["scheduler_file_address", "connect", "remote_mode_reason", "start"]


#: How long a scheduler file that does not parse yet is read again: ``dask scheduler`` writes it with a plain
#: ``open(..., "w")`` + ``json.dump``, so a reader that comes in between sees an empty or cut-off file (distributed's
#: own client reads it again for the same reason, "JSON file not yet flushed").
HALF_WRITTEN_GRACE_S = 2.0


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConnectError(f"scheduler_file={path!r} cannot be read ({exc.strerror or exc}). Check the path and its permissions.") from exc


def scheduler_file_address(path: str, grace: float = HALF_WRITTEN_GRACE_S) -> str | None:
    """The address in a scheduler file, checked; None while the file does not exist yet (the client waits).

    A file that does not parse is read again for ``grace`` seconds (the scheduler may be writing it) before it is
    called no scheduler file."""
    deadline = time.monotonic() + grace
    while True:
        text = _read(path)
        if text is None:
            return None
        try:
            data = json.loads(text)
            break
        except ValueError:
            if time.monotonic() >= deadline:
                data = None
                break
            time.sleep(0.05)
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ConnectError(
            f"scheduler_file={path!r} is not a scheduler file: expected the JSON object that "
            '`dask scheduler --scheduler-file PATH` writes, with an "address" such as "tcp://10.0.0.5:8786". '
            "Point scheduler_file at that file, or pass scheduler_address instead."
        )
    return address


def connect(opts: ClusterOptions, security: Any) -> Any:
    """A client of the scheduler the options name, once at least one worker is there."""
    target = opts.scheduler_file or opts.scheduler_address
    param = "scheduler_file" if opts.scheduler_file else "scheduler_address"
    address = scheduler_file_address(opts.scheduler_file) if opts.scheduler_file else opts.scheduler_address
    twin = credentials.tls_session(address or "") if address and address.startswith("tcp://") else None
    if twin is not None:
        raise ConnectError(
            f"{param}={target!r}: that is your gpu-dask-kit session {twin.id}, whose scheduler talks TLS only: "
            f"connect with scheduler_address={twin.scheduler_address!r} (the kit finds its credentials)."
        )
    if address and address.startswith("tls://") and security is None:
        security = credentials.for_address(address)  # a session of this account: its own credentials
    if address and address.startswith("tls://") and security is None and not dask.config.get("distributed.comm.tls.ca-file", None):
        raise ConnectError(
            f"{param}={target!r}: this scheduler uses TLS ({address}) and is not one of your gpu-dask-kit sessions "
            "(`gpu-dask-kit sessions` lists them), so the kit has no certificate for it: pass "
            "security=Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) "
            "(from distributed.security import Security), or ask whoever started the scheduler for them."
        )
    try:
        if opts.scheduler_file:
            client = scheduler_view.new_client(scheduler_file=opts.scheduler_file, timeout=opts.connect_timeout, security=security, set_as_default=True)
        else:
            client = scheduler_view.new_client(opts.scheduler_address, timeout=opts.connect_timeout, security=security, set_as_default=True)
    except (OSError, TimeoutError, ValueError, TypeError, AssertionError) as exc:
        raise ConnectError(
            f"{param}={target!r}: no scheduler answered within {opts.connect_timeout:g} s ({type(exc).__name__}: {exc}). "
            "Check the address (the scheduler prints it at start), that the scheduler runs, "
            "and TLS settings (security=) for tls:// addresses."
        ) from exc
    try:
        client.wait_for_workers(1, timeout=opts.connect_timeout)
    except (TimeoutError, OSError) as exc:
        client.close()
        raise ConnectError(
            f"{param}={target!r}: the scheduler answered but no worker joined within {opts.connect_timeout:g} s. "
            "Start workers (`dask worker ADDRESS` or `dask cuda worker ADDRESS`), or raise connect_timeout."
        ) from exc
    return client


def _make_worker_check() -> Any:
    def is_dask_cuda_worker(dask_worker: Any = None) -> bool:
        """Runs on each worker: True when it is a dask-cuda worker (``LocalCUDACluster`` or
        ``dask cuda worker``). Both install dask-cuda's worker plugins (``CPUAffinity``, ``RMMSetup``,
        ``CUDFSetup``, ``PreImport``) and preload ``dask_cuda.initialize``. Checked by module name, so no
        process needs to import dask_cuda for the check."""
        plugins = getattr(dask_worker, "plugins", {}) or {}
        if any(type(p).__module__.startswith("dask_cuda.") for p in plugins.values()):
            return True
        preloads = getattr(dask_worker, "preloads", None) or []
        return any("dask_cuda" in str(getattr(p, "name", p)) for p in preloads)

    return is_dask_cuda_worker


#: Defined in a function so that cloudpickle sends it by value: workers need not have the kit installed.
_dask_cuda_worker = _make_worker_check()


def remote_mode_reason(client: Any) -> tuple[str, str]:
    """("gpu" | "cpu", why) for a connected cluster: GPU when every worker is a dask-cuda worker.

    GPU utilisation metrics alone are not proof: a plain ``dask worker`` on a GPU host reports them too."""
    address = client.scheduler.address
    try:
        answers = client.run(_dask_cuda_worker)
    except Exception as exc:  # a worker that cannot run the check: do not guess GPU
        return "cpu", f"CPU: the workers of the scheduler at {address} could not be asked whether they are dask-cuda workers ({type(exc).__name__}: {exc})."
    cuda = sum(1 for v in answers.values() if v)
    if answers and cuda == len(answers):
        return "gpu", f"GPU: {cuda} dask-cuda worker(s) of the scheduler at {address} (dask-cuda plugins found on every worker)."
    if cuda:
        return "cpu", (
            f"CPU: mixed cluster behind the scheduler at {address}: {cuda} of {len(answers)} workers are dask-cuda workers, the others plain dask "
            "workers; the kit picks NumPy/pandas so every worker can run the tasks."
        )
    return "cpu", f"CPU: the workers of the scheduler at {address} are plain dask workers (no dask-cuda plugins)."


def start(options: ClusterOptions, *, started_by: str = "connect", security: Any = None, report: EnvironmentReport | None = None) -> Deployment:
    """Connect, decide the workers' mode and dask's backends in this process, register the session (the deploy interface)."""
    client = connect(options, security)
    try:
        mode, reason = remote_mode_reason(client)
        notes: list[str] = []
        array, dataframe = client_backends(mode, report or detect("auto"), notes)
        reason = " ".join([reason, *notes])  # the session of a connection shows its reason only
        try:
            link = client.dashboard_link or None
        except Exception:
            link = None
        n_workers = len(scheduler_view.workers(client))
        record = registry.register(
            scheduler_address=client.scheduler.address, dashboard_link=link, mode=mode, n_workers=n_workers, options=options.to_dict(), started_by="connect"
        )
    except BaseException:
        client.close()  # only the client: the cluster is not the kit's
        raise
    return Deployment("connect", mode, reason, client, record, notes=notes, array_backend=array, dataframe_backend=dataframe)
