"""The steps around starting a local cluster or connecting to one: dask's config before and after, the
script checks, and the error a failed start raises. :mod:`gpu_dask_kit.session` wraps the result in a
:class:`~gpu_dask_kit.session.ClusterSession`."""

from __future__ import annotations

from typing import Any

import dask.config

from . import clients, guard, registry
from .deploy import connect as _connect
from .deploy import local as _local
from .environment import detect
from .errors import ClusterStartError, OptionError
from .links import link_config
from .options import ClusterOptions
from .plan import ClusterPlan, make_plan

__all__ = ["local", "slurm", "connect", "scale_target"]


def local(opts: ClusterOptions, kind: str, security: Any = None) -> tuple[ClusterPlan, Any, Any, registry.SessionRecord, dict[str, Any]]:
    """Start the kit's local cluster; return ``(plan, cluster, client, record, previous dask config)``."""
    plan = make_plan(opts, detect(opts.device))  # raises OptionError before anything starts
    config = {**link_config(), "array.backend": plan.array_backend, "dataframe.backend": plan.dataframe_backend}
    previous = {k: dask.config.get(k, None) for k in config}
    registry.prune_dead()  # e.g. the record of the kernel before a restart, with nothing left running
    guard.make_main_spawnable()  # `python - < script.py`: workers start without importing "<stdin>"
    clients.clear_closed_scheduler()
    dask.config.set(config)  # the scheduler plugin formats the record's dashboard link with it
    try:
        cluster, client, record = _local.start(opts, plan, kind=kind, security=security)
    except BaseException as exc:
        dask.config.set(previous)
        if isinstance(exc, (OptionError, KeyboardInterrupt)):
            raise
        script = guard.reimports_main()
        cause = (
            f' If the worker output above says it reached start_cluster(), {script} needs its `if __name__ == "__main__":` guard.'
            if script and "Nanny failed to start" in str(exc)
            else " Run `gpu-dask-kit doctor` to check this machine."
        )
        raise ClusterStartError(
            f"The {plan.mode.upper()} cluster did not start ({type(exc).__name__}: {exc}). Everything that was started has been stopped.{cause}"
        ) from exc
    if plan.client_cupy_rmm:
        from .allocator import use_rmm_for_cupy

        use_rmm_for_cupy()  # only now: no CUDA context in this process before the workers exist
    return plan, cluster, client, record, previous


def slurm(opts: ClusterOptions, kind: str, security: Any = None) -> tuple[Any, Any, Any, registry.SessionRecord, dict[str, Any]]:
    """deploy="slurm": the workers are SLURM jobs (:mod:`gpu_dask_kit.deploy.slurm_session`); same return as :func:`local`."""
    from .deploy import slurm_session  # dask-jobqueue: imported only for SLURM sessions

    previous = {k: dask.config.get(k, None) for k in (*link_config(), "array.backend", "dataframe.backend")}
    clients.clear_closed_scheduler()
    dask.config.set(link_config())  # the scheduler plugin formats the record's dashboard link with it
    try:
        cluster, client, record, plan = slurm_session.start(opts, kind=kind, security=security)
    except BaseException:
        dask.config.set(previous)
        raise
    dask.config.set({"array.backend": plan.array_backend, "dataframe.backend": plan.dataframe_backend})
    return plan, cluster, client, record, previous


def scale_target(options: ClusterOptions, plan: Any) -> int:
    """The worker count ``session.scale`` asks for: checked against this machine (one worker per GPU), or
    rounded to whole jobs on SLURM (no check against this machine)."""
    if options.deploy == "slurm":
        from .deploy.slurm_session import scale_target as slurm_target

        return int(slurm_target(plan, options.n_workers or 1))
    return make_plan(options, detect(options.device)).n_workers


def connect(opts: ClusterOptions, security: Any) -> tuple[Any, str, str, registry.SessionRecord, dict[str, Any]]:
    """Connect to an existing scheduler; return ``(client, mode, reason, record, previous dask config)``."""
    previous = {k: dask.config.get(k, None) for k in (*link_config(), "array.backend", "dataframe.backend")}
    dask.config.set(link_config())
    clients.clear_closed_scheduler()
    try:
        client = _connect.connect(opts, security)
    except BaseException:
        dask.config.set(previous)
        raise
    mode, reason = _connect.remote_mode_reason(client)
    array, dataframe = _connect.remote_backends(mode)
    dask.config.set({"array.backend": array, "dataframe.backend": dataframe})
    try:
        link = client.dashboard_link or None
    except Exception:
        link = None
    n_workers = len(client.scheduler_info(n_workers=-1)["workers"])
    record = registry.register(
        scheduler_address=client.scheduler.address, dashboard_link=link, backend=mode, n_workers=n_workers, options=opts.to_dict(), kind="connect"
    )
    return client, mode, reason, record, previous
