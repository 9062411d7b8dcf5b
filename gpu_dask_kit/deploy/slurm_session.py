"""The batch-scheduler targets (``deploy="slurm"``, ``"pbs"``, ``"sge"``, ``"lsf"``): workers are batch jobs;
:func:`start` returns the :class:`~gpu_dask_kit.deploy.deployment.Deployment` like every target.

:func:`start` makes the registry record, checks and submits through :func:`~.slurm.start_batch` (its
scheduler carries :class:`SlurmRecordPlugin`) and connects the client; the session object around it is
the same as for a local cluster (:mod:`gpu_dask_kit.session`). Scaling is in whole jobs. The record names the session's job name
and the ids of its live jobs, kept current as ``scale``/``adapt`` submit and cancel jobs, so that
``gpu-dask-kit sessions`` shows them and ``--cleanup`` (or the sidebar) can cancel them.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import psutil

from .. import credentials, registry, scheduler_view
from ..environment import EnvironmentReport, detect
from ..errors import OptionError
from ..plan import client_backends
from ..plugins import SessionRecordPlugin
from ..processes import process_identity
from .batch import SCHEDULERS
from .deployment import Deployment
from .slurm import JOB_HOOKS, cancel_jobs, close_batch, session_jobs, start_batch
from .slurm_plan import SlurmPlan

__all__ = ["start", "scale_target", "SlurmRecordPlugin", "prune_stale"]


@functools.cache
def _local_hosts() -> frozenset[str]:
    """The addresses of this machine (a worker elsewhere has a PID of another machine)."""
    found = {"127.0.0.1", "::1", "localhost"}
    for addresses in psutil.net_if_addrs().values():
        found.update(a.address.split("%")[0] for a in addresses)
    return frozenset(found)


class SlurmRecordPlugin(SessionRecordPlugin):
    """The kit's record plugin for batch sessions (every scheduler): it records the PIDs of workers on this machine only
    (a PID of another node names nothing here), and the job ids the cluster's jobs report."""

    def __init__(self, record: registry.SessionRecord) -> None:
        super().__init__(record)
        self._seen: tuple[int, list[int]] | None = None
        if record.slurm_job_name:
            JOB_HOOKS[record.slurm_job_name] = self.job_changed

    def job_changed(self, job_id: str, submitted: bool) -> None:
        ids = set(self.record.slurm_job_ids)
        ids = ids | {job_id} if submitted else ids - {job_id}
        self.record.slurm_job_ids = sorted(ids, key=lambda i: (len(i), i))  # numeric ids (PBS: "12.server") in order
        self._save()

    async def close(self) -> None:
        JOB_HOOKS.pop(self.record.slurm_job_name or "", None)
        await super().close()

    def _sync(self, scheduler: Any, force: bool = False) -> None:
        if self.closed:
            return
        workers = list(scheduler.workers.values())
        here = _local_hosts()
        pids = sorted(int(ws.pid) for ws in workers if getattr(ws, "pid", None) and ws.host in here)
        if (len(workers), pids) == self._seen and not force:
            return
        self._seen = (len(workers), pids)
        self.record.processes = [i for i in (process_identity(p) for p in pids) if i]
        self.record.n_workers = len(workers)
        self._save(force)

    def _save(self, force: bool = False) -> None:
        if self.closed:
            return
        try:
            registry.save(self.record) if force else registry.update(self.record)
        except OSError:
            pass  # a registry folder that vanished must not break the scheduler


def _scheduler(record: registry.SessionRecord) -> str:
    """The batch scheduler of a record's session (its options' deploy; SLURM for records older than PBS/SGE/LSF)."""
    deploy = (record.options or {}).get("deploy")
    return deploy if deploy in SCHEDULERS else "slurm"


def prune_stale() -> list[str]:
    """Remove the records of batch sessions whose owner died and whose jobs the scheduler no longer lists
    (what ``registry.prune_dead`` does for local sessions; only the scheduler knows whether the jobs are gone)."""
    removed = []
    for record in registry.list_sessions():
        if record.slurm_job_name and not record.alive and not record.live_processes():
            try:
                if not session_jobs(record.slurm_job_name, _scheduler(record), tuple(record.slurm_job_ids)):
                    registry.unregister(record.id)
                    removed.append(record.id)
            except Exception:
                continue
    return removed


def start(options: Any, *, started_by: str = "notebook", security: Any = None, report: EnvironmentReport | None = None, on_wait: Any = None) -> Deployment:
    """Check, submit, wait for the workers, connect (the deploy interface).

    Raises :class:`OptionError` before any job is submitted for bad options; on any later failure every job is
    cancelled and the scheduler closed before the error is raised.
    """
    if security is not None:
        raise OptionError(
            "security",
            security,
            f'True or False with deploy="{options.deploy}" (the kit makes the jobs\' credentials itself)',
            "leave security out: the jobs get the session's own certificate through dask-jobqueue",
        )
    registry.prune_dead()
    prune_stale()
    record = registry.new_record(scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=0, options=options.to_dict(), started_by=started_by)
    if options.security:  # the jobs read the files (their folder is the user's only); see credentials.file_security
        credentials.create(record.id)
        security = credentials.file_security(record.id)
    plugin: list[SlurmRecordPlugin] = []

    def plugins(plan: SlurmPlan) -> list[Any]:
        record.mode, record.slurm_job_name = plan.mode, plan.job_name
        plugin.append(SlurmRecordPlugin(record))
        return plugin

    try:
        cluster, plan = start_batch(options, on_wait=on_wait or print, scheduler_plugins=plugins, security=security)
    except BaseException:
        credentials.remove(record.id)
        raise
    finally:
        if record.slurm_job_name and (not plugin or plugin[0].closed):
            JOB_HOOKS.pop(record.slurm_job_name, None)  # a start that failed
    try:
        client = scheduler_view.new_client(cluster, set_as_default=True)
    except BaseException:
        close_batch(cluster)
        raise
    # CuPy-backed collections in this process only where it has a usable GPU (a login node has none)
    plan.array_backend, plan.dataframe_backend = client_backends(plan.mode, report or detect("auto"), plan.notes)
    arrays, frames = plan.array_backend, plan.dataframe_backend
    return Deployment(plan.scheduler_name, plan.mode, plan.reason, client, record, cluster, plan, list(plan.notes), arrays, frames, scale_by_jobs=True)


def scale_target(plan: SlurmPlan | None, n_workers: int) -> int:
    """The workers ``scale(n_workers)`` ends with: whole jobs of ``plan.workers_per_job`` workers.

    >>> from gpu_dask_kit.deploy.slurm_plan import SlurmPlan
    >>> scale_target(SlurmPlan("gpu", {}, 2, 2, "gdk-x"), 3), scale_target(None, 3)
    (4, 3)
    """
    per_job = plan.workers_per_job if plan is not None else 1
    return math.ceil(n_workers / per_job) * per_job


def cancel_session_jobs(record: registry.SessionRecord, timeout: float = 60.0) -> None:
    """Cancel every job of a batch session's record (its owner may be gone) and wait until the scheduler
    no longer lists them; nothing for a local session."""
    if record.slurm_job_name:
        cancel_jobs(record.slurm_job_name, timeout, scheduler=_scheduler(record), job_ids=tuple(record.slurm_job_ids))
