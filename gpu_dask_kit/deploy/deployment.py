"""The one object every deploy target returns (modelled on distributed's ``SpecCluster`` and
dask-jobqueue's ``JobQueueCluster`` + ``job_cls``): the cluster, its client, the scale rule, the record.

A target is a module ``gpu_dask_kit.deploy.<name>`` with
``start(options, *, started_by, security, report) -> Deployment``; :func:`target_module` finds it, so adding a
target (e.g. dask-gateway) is one new module plus its option entries (the ``deploy`` choices).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any

from .. import registry, scheduler_view
from ..errors import OptionError
from ..plan import ClusterPlan

__all__ = ["Deployment", "target_module", "target_name", "wait_for_workers"]

#: ``deploy`` names whose module has another name (kept for imports from before the interface).
#: Every batch scheduler (SLURM, PBS, SGE, LSF) is one target module, its differences one table row (deploy/batch.py).
_MODULES = {"slurm": "slurm_session", "pbs": "slurm_session", "sge": "slurm_session", "lsf": "slurm_session"}


def target_name(options: Any) -> str:
    """The target the options ask for: ``connect`` when a scheduler is named, else ``options.deploy``."""
    return "connect" if options.connect_mode else str(options.deploy)


def target_module(name: str) -> Any:
    """The module implementing target ``name`` (imported on first use: SLURM needs dask-jobqueue)."""
    return importlib.import_module(f"{__package__}.{_MODULES.get(name, name)}")


def wait_for_workers(client: Any, n_workers: int, timeout: float) -> bool:
    """Wait until exactly ``n_workers`` workers are connected and running; False on timeout.

    Asks the scheduler through the client, not ``Client.wait_for_workers``: with a local cluster that calls
    ``cluster.wait_for_workers``, which replaces ``cluster.scheduler_info`` with a snapshot; after a scale
    down, the worker-removal message still in flight then raises KeyError in distributed's (2026.7.1)
    worker-status watcher, and the cluster's close stops half-way (status stays "closing")."""
    deadline = time.monotonic() + timeout
    while True:
        workers = scheduler_view.workers(client).values()
        if len(workers) == n_workers and all(w.get("status", "running") == "running" for w in workers):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


@dataclass
class Deployment:
    """A started target. ``plan`` is None (and ``cluster`` too) for a connection to a cluster the kit did
    not start; ``scale_by_jobs``: the cluster scales in whole jobs (``cluster.scale(jobs=...)``)."""

    target: str  # "local" | "slurm" | "pbs" | "sge" | "lsf" | "gateway" | "connect"
    mode: str  # "gpu" | "cpu"
    reason: str
    client: Any
    record: registry.SessionRecord
    cluster: Any = None
    plan: ClusterPlan | Any = None
    notes: list[str] = field(default_factory=list)
    array_backend: str = "numpy"
    dataframe_backend: str = "pandas"
    scale_by_jobs: bool = False

    def scale_target(self, n_workers: int) -> int:
        """The workers :meth:`scale` ends with (whole jobs on a batch scheduler, one per GPU locally); checked, not planned again."""
        if self.cluster is None or self.plan is None:
            hint = "this session is a connection to an existing scheduler: scale that cluster where it was started"
            raise OptionError("n_workers", n_workers, "scaling of a cluster the kit started", hint)
        return int(self.plan.spec.scale_target(n_workers))

    def scale(self, n_workers: int, timeout: float = 60.0) -> bool:
        """Ask for ``n_workers`` (rounded by :meth:`scale_target`) and wait; False when they did not come in time."""
        target = self.scale_target(n_workers)
        if self.scale_by_jobs:
            self.cluster.scale(jobs=target // self.plan.spec.workers_per_unit)  # dask-jobqueue's own rule
        else:
            self.cluster.scale(target)
        return wait_for_workers(self.client, target, timeout)

    def close(self, timeout: float = 15.0) -> None:
        """Close the client, then the cluster (its scheduler plugin removes the record). A connection
        closes only its client: the kit never stops a cluster it did not start."""
        try:
            self.client.close(timeout=timeout)
        finally:
            if self.cluster is not None:
                try:
                    self.cluster.close(timeout=timeout)
                except KeyError:
                    # distributed 2026.7.1 race: after a scale down, the worker-status watcher may handle the removal of
                    # a worker the scheduler already forgot; it raises at the very end of close, after the scheduler
                    # and every worker process were closed. Nothing is left running; the error means nothing to a user.
                    pass
