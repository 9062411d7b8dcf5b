"""The batch schedulers dask-jobqueue speaks, in one small table: what differs between SLURM, PBS, SGE and LSF.

Everything else (the worker spec, ``dask cuda worker`` arguments, submitting, waiting, scaling, closing)
is the same code for all four (:mod:`.slurm_plan`, :mod:`.slurm`). A :class:`BatchScheduler` names the
dask-jobqueue cluster class, the commands (submit, cancel, status), the keyword the account goes to, how
GPUs and a job's size are asked for (:func:`job_request`), the walltime's form, the pre-flight check the
scheduler offers, and the options it cannot take (refused with what to do instead). Pure: nothing runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import dask.config

from ..errors import OptionError
from ..options.spec import BATCH_DEPLOYS

__all__ = ["BatchScheduler", "SCHEDULERS", "BATCH_DEPLOYS", "scheduler_for", "job_request", "walltime_for", "refuse_options", "sge_gpu_complex"]

_COMPLEX = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class BatchScheduler:
    """One batch scheduler. ``queue_check``: the command that fails for an unknown queue (the queue's name is
    appended); ``verify``: a submit that only checks the job script (read from stdin) and queues nothing."""

    name: str  # the deploy value
    title: str  # for people
    cluster: str  # dask-jobqueue's cluster class (its module is the name)
    submit: str
    cancel: str
    status: str
    prefix: str  # the job script's directive prefix
    account_keyword: str  # dask-jobqueue's keyword for options.account
    install: str  # how to get the commands
    queue_check: tuple[str, ...] = ()
    verify: tuple[str, ...] = ()
    refuses: dict[str, str] = field(default_factory=dict)  # option -> what to do instead

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.submit, self.cancel, self.status, *self.queue_check[:1])))

    @property
    def module(self) -> str:
        """dask-jobqueue's module of the scheduler (``dask_jobqueue.<module>``)."""
        return self.name

    @property
    def job(self) -> str:
        """dask-jobqueue's job class (``SLURMJob``, ``PBSJob``, ...)."""
        return self.cluster.replace("Cluster", "Job")


_SGE_CORES = "SGE asks for cores through a parallel environment your site names: add job_extra_directives=['-pe smp N'] (see `qconf -spl`)"
_SGE_MEMORY = (
    "SGE sites name their memory request differently: add job_extra_directives=['-l h_vmem=16G'] (or mem_free, see `qconf -sc`); "
    "memory_limit still sets each worker's limit"
)

# fmt: off
SCHEDULERS: dict[str, BatchScheduler] = {s.name: s for s in (
    BatchScheduler("slurm", "SLURM", "SLURMCluster", "sbatch", "scancel", "squeue", "#SBATCH", "account",
                   "apt-get install slurmctld slurmd munge slurm-client, then .ci/slurm/start", ("sinfo",)),
    BatchScheduler("pbs", "PBS", "PBSCluster", "qsub", "qdel", "qstat", "#PBS", "account",
                   "run the notebook on your PBS cluster's login node (or after `module load pbs`)", ("qstat", "-Q")),
    BatchScheduler("sge", "SGE", "SGECluster", "qsub", "qdel", "qstat", "#$", "project",
                   "run it on your Grid Engine's submit host; to try it here: apt-get install gridengine-master gridengine-exec "
                   "gridengine-client, then .ci/sge/start", ("qconf", "-sq"), ("qsub", "-w", "v"),
                   refuses={"job_cores": _SGE_CORES, "job_memory": _SGE_MEMORY}),
    BatchScheduler("lsf", "LSF", "LSFCluster", "bsub", "bkill", "bjobs", "#BSUB", "project",
                   "run the notebook on your LSF cluster's login node (after sourcing LSF's profile.lsf)", ("bqueues",)),
)}
# fmt: on

assert tuple(SCHEDULERS) == BATCH_DEPLOYS, "the options' deploy choices and this table name the same schedulers"


def scheduler_for(name: str) -> BatchScheduler:
    """The table row of ``deploy=name``; OptionError for a name that is no batch scheduler."""
    if name not in SCHEDULERS:
        raise OptionError("deploy", name, " or ".join(f'"{n}"' for n in SCHEDULERS), "pick the batch scheduler your cluster runs")
    return SCHEDULERS[name]


def walltime_for(scheduler: BatchScheduler, seconds: int) -> str:
    """A walltime in the scheduler's own form: SLURM and PBS/SGE HH:MM:SS, LSF HH:MM (rounded up).

    >>> walltime_for(SCHEDULERS["pbs"], 5400), walltime_for(SCHEDULERS["lsf"], 5430)
    ('01:30:00', '01:31')
    """
    if scheduler.name == "lsf":
        minutes = math.ceil(seconds / 60)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def refuse_options(scheduler: BatchScheduler, options: Any) -> None:
    """OptionError for an option this scheduler cannot take (its ``refuses``), when it is set.

    >>> from types import SimpleNamespace
    >>> refuse_options(SCHEDULERS["sge"], SimpleNamespace(job_cores=4, job_memory=None))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gpu_dask_kit.errors.OptionError: job_cores=4 is not accepted: expected None with deploy="sge" ... SGE asks for cores through a parallel environment ...
    """
    for name, advice in scheduler.refuses.items():
        value = getattr(options, name)
        if value is not None:
            raise OptionError(name, value, f'None with deploy="{scheduler.name}" (dask-jobqueue\'s {scheduler.cluster} has no keyword for it)', advice)


def sge_gpu_complex() -> str:
    """The consumable complex SGE GPU jobs ask for (``-l <complex>=N``): dask config ``gpu-dask-kit.sge-gpu-complex``,
    default "gpu" (sites name it gpu, gpus, ngpus...; `qconf -sc` lists them)."""
    name = dask.config.get("gpu-dask-kit.sge-gpu-complex", None) or "gpu"
    if not isinstance(name, str) or not _COMPLEX.fullmatch(name):
        raise OptionError("gpu-dask-kit.sge-gpu-complex", name, "a complex name as `qconf -sc` lists it (letters, digits, _ . -)", "fix the dask config key")
    return name


def job_request(
    scheduler: BatchScheduler, kwargs: dict[str, Any], extra: list[str], *, cpus: int | None, memory: int | None, gpus: int, gpu_complex: str = "gpu"
) -> None:
    """Add the job's size to dask-jobqueue keywords ``kwargs`` and directives ``extra``, in the scheduler's syntax.

    ``cpus``/``memory`` (bytes): the job's own request when the options gave one (job_cores, job_memory),
    else None (dask-jobqueue then asks for the workers' cores and memory); ``gpus``: GPUs per job (0: CPU job).

    >>> kw, extra = {"cores": 2, "memory": 2**31}, []
    >>> job_request(SCHEDULERS["pbs"], kw, extra, cpus=None, memory=None, gpus=1); kw["resource_spec"]
    'select=1:ncpus=2:ngpus=1:mem=2048mb'
    >>> kw, extra = {"cores": 1, "memory": 2**30}, []
    >>> job_request(SCHEDULERS["lsf"], kw, extra, cpus=4, memory=None, gpus=2); (kw["ncpus"], extra)
    (4, ['-gpu "num=2"'])
    """
    if scheduler.name == "slurm":
        if cpus is not None:
            kwargs["job_cpu"] = cpus
        if memory is not None:
            kwargs["job_mem"] = f"{math.ceil(memory / 2**20)}M"
        if gpus:
            extra.insert(0, f"--gres=gpu:{gpus}")
    elif scheduler.name == "pbs":  # PBS Pro's chunk syntax, the whole job on one host
        spec = f"select=1:ncpus={cpus or kwargs['cores']}" + (f":ngpus={gpus}" if gpus else "")
        kwargs["resource_spec"] = spec + f":mem={math.ceil((memory or kwargs['memory']) / 2**20)}mb"
    elif scheduler.name == "sge":  # a consumable complex the site defines (`qconf -sc`)
        kwargs["resource_spec"] = f"{gpu_complex}={gpus}" if gpus else None
    elif scheduler.name == "lsf":
        kwargs["ncpus"] = cpus or kwargs["cores"]
        kwargs["mem"] = memory or kwargs["memory"]
        if gpus:
            extra.insert(0, f'-gpu "num={gpus}"')
