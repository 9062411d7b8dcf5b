"""The one start path around every deploy target: dask's config before and after, the script checks, the
error a failed start raises, the warning about a plain-TCP cluster (``security=False``) that others could
use. :func:`start` returns the target's :class:`~gpu_dask_kit.deploy.deployment.Deployment` and the dask
config to restore at close; :mod:`gpu_dask_kit.session` wraps it in a ``ClusterSession``.
"""

from __future__ import annotations

import warnings
from typing import Any

import dask.config

from . import clients, credentials, guard, registry
from .deploy.deployment import Deployment, target_module, target_name
from .environment import detect
from .errors import ClusterStartError, KitWarning, OptionError
from .links import link_config
from .options import ClusterOptions

__all__ = ["start"]

_CONFIG_KEYS = ("array.backend", "dataframe.backend")


def start(opts: ClusterOptions, started_by: str = "notebook", security: Any = None) -> tuple[Deployment, dict[str, Any]]:
    """Start (or connect) through the options' target; return ``(deployment, previous dask config)``.

    Bad options raise :class:`OptionError` before anything starts; any other failure leaves nothing
    running and raises :class:`ClusterStartError` saying why (local starts: also the script guard)."""
    name = target_name(opts)
    module = target_module(name)
    previous = {k: dask.config.get(k, None) for k in (*link_config(), *_CONFIG_KEYS)}
    if name == "local":
        registry.prune_dead()  # e.g. the record of the kernel before a restart, with nothing left running
        guard.make_main_spawnable()  # `python - < script.py`: workers start without importing "<stdin>"
    clients.clear_closed_scheduler()
    dask.config.set(link_config())  # the scheduler plugin formats the record's dashboard link with it
    try:
        deployment: Deployment = module.start(opts, started_by=started_by, security=security, report=detect(opts.device) if name == "local" else None)
    except BaseException as exc:
        dask.config.set(previous)
        if name != "local" or isinstance(exc, (OptionError, KeyboardInterrupt)):
            raise
        raise _start_error(exc) from exc
    dask.config.set({"array.backend": deployment.array_backend, "dataframe.backend": deployment.dataframe_backend})
    if name != "connect" and security is None and not opts.security:
        exposed = credentials.exposure(opts.host, deployment.client.scheduler.address)
        if exposed:
            warnings.warn(exposed, KitWarning, stacklevel=5)  # the caller of start_cluster()
    return deployment, previous


def _start_error(exc: BaseException) -> ClusterStartError:
    script = guard.reimports_main()
    cause = (
        f' If the worker output above says it reached start_cluster(), {script} needs its `if __name__ == "__main__":` guard.'
        if script and "Nanny failed to start" in str(exc)
        else " Run `gpu-dask-kit doctor` to check this machine."
    )
    return ClusterStartError(f"The cluster did not start ({type(exc).__name__}: {exc}). Everything that was started has been stopped.{cause}")
