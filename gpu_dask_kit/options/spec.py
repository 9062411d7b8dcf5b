"""The spec of every cluster option: each knob declared ONCE here, in ``OPTION_SPECS``.

An :class:`OptionSpec` holds the check, the default, the accepted forms, the unit, per-worker / GPU-only /
SLURM-only, the doc and how the CLI and the widget show it. Everything else is derived from it: the
dataclass defaults and the normaliser (:mod:`.model`), the CLI flags (:mod:`gpu_dask_kit.scripts`), the
widget's form, ``start_cluster``'s signature and docstring, the README table and the packaged YAML
(:mod:`.docs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import checks as v
from . import gateway_checks as gv
from . import slurm_checks as sv

__all__ = ["OptionSpec", "OPTION_SPECS", "OPTION_DOCS", "BATCH_DEPLOYS", "option_names", "option_name", "config_key"]

Size = int | float | str

#: The ``deploy`` values whose workers are batch jobs submitted through dask-jobqueue (one row each in
#: :data:`gpu_dask_kit.deploy.batch.SCHEDULERS`); the options marked ``slurm_only`` apply to all of them.
BATCH_DEPLOYS = ("slurm", "pbs", "sge", "lsf")


@dataclass(frozen=True)
class OptionSpec:
    """Everything about one knob. ``check(spec, value)`` returns the normalised value or raises OptionError.

    ``slurm_only``: an option of the batch schedulers (every deploy in :data:`BATCH_DEPLOYS`; the name is
    older than PBS/SGE/LSF; a scheduler that cannot take one refuses it when the plan is made).

    ``form`` is the value's form for the CLI and the widget: "choice" (``choices``), "flag" (a switch),
    "count" (a whole number), "list" (repeatable) or "text". ``in_form``: the widget's form shows it.
    """

    name: str
    check: Callable[[Any, Any], Any]
    default: Any
    annotation: Any
    doc: str
    accepted: str = ""
    form: str = "text"
    choices: tuple[str, ...] = ()
    unit: str = ""
    per_worker: bool = False
    gpu_only: bool = False
    slurm_only: bool = False
    in_form: bool = False

    def __post_init__(self) -> None:
        if self.form == "choice" and not self.accepted:  # the accepted text of a choice is its choices
            quoted = [f'"{c}"' for c in self.choices]
            object.__setattr__(self, "accepted", ", ".join(quoted[:-1]) + " or " + quoted[-1])

    def normalise(self, value: Any) -> Any:
        return self.check(self, value)

    @property
    def config_key(self) -> str:
        return "gpu-dask-kit." + self.name.lower().replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """CLI flags: the name with dashes (and its lower-case form when the name has capitals)."""
        dashed = "--" + self.name.replace("_", "-")
        return (dashed,) if dashed == dashed.lower() else (dashed, dashed.lower())

    def help(self) -> str:
        """Doc + accepted forms + per worker / GPU only / batch only: tooltips, CLI help, docstrings."""
        text = f"{self.doc} Accepted: {self.accepted}."
        text += " Per worker." if self.per_worker else ""
        text += " GPU only (ignored in CPU mode)." if self.gpu_only else ""
        deploys = " or ".join(f'"{d}"' for d in BATCH_DEPLOYS)
        return text + (f" Batch jobs only (needs deploy={deploys})." if self.slurm_only else "")


_SIZE = 'a size ("4GiB", bytes) or a fraction of the total (0.8, "80%")'
_COUNT = "a whole number >= 1, or None for the default"
_Spec = OptionSpec

#: The one place each knob is declared, in documentation order (a table: kept one entry per option, unformatted).
# fmt: off
OPTION_SPECS: dict[str, OptionSpec] = {s.name: s for s in (
    _Spec("device", v.choice, "auto", str, "Which cluster to start: 'gpu' (LocalCUDACluster), 'cpu' (LocalCluster) or 'auto' (GPU when one is usable).",
          form="choice", choices=("auto", "gpu", "cpu"), in_form=True),
    _Spec("n_workers", v.count, None, int | None, "Number of worker processes. Default: one per visible GPU, or min(4, cores) on CPU.",
          _COUNT, form="count", in_form=True),
    _Spec("threads_per_worker", v.count, None, int | None, "Threads in each worker. Default: 1 on GPU, cores / workers on CPU.",
          _COUNT, form="count", per_worker=True, in_form=True),
    _Spec("memory_limit", v.host_memory, "auto", Size | None,
          "Host memory limit of each worker: it writes data to disk above a share of it (the target and spill fractions, 60 % and 70 % by "
          "default) and is restarted at 95 % of it.",
          f'"auto", {_SIZE} of the machine\'s memory, or None for no limit', unit="bytes", per_worker=True, in_form=True),
    _Spec("device_memory_limit", v.optional_size, 0.8, Size | None, "GPU memory each worker may fill before it spills to host memory.",
          f'{_SIZE} of the GPU, or "off" to never spill', unit="bytes", per_worker=True, gpu_only=True, in_form=True),
    _Spec("rmm_pool_size", v.optional_size, None, Size | None,
          "Initial size of the RMM memory pool on each GPU worker (one cudaMalloc up front instead of many).",
          f"{_SIZE} of the GPU, or None for no pool", unit="bytes", per_worker=True, gpu_only=True, in_form=True),
    _Spec("rmm_maximum_pool_size", v.optional_size, None, Size | None, "Largest size the RMM pool may grow to. Needs rmm_pool_size.",
          f"{_SIZE} of the GPU, or None for no maximum", unit="bytes", per_worker=True, gpu_only=True),
    _Spec("rmm_async", v.optional_flag, None, bool | None,
          "RMM's asynchronous allocator (cudaMallocAsync). None (auto): on a GPU it is used unless rmm_pool_size is set, because it "
          "needs no sizing and gives freed memory back to the GPU (above 10% of it, at each synchronisation); a pool (rmm_pool_size) is faster for many small "
          "allocations. Never both: True together with rmm_pool_size is an error.",
          "True or False, or None for auto", form="flag", gpu_only=True),
    _Spec("rmm_managed_memory", v.flag, False, bool, "Use CUDA managed (unified) memory, which can oversubscribe the GPU. Slower; for teaching only.",
          "True or False", form="flag", gpu_only=True),
    _Spec("enable_cudf_spill", v.flag, False, bool, "Let cuDF spill its own buffers to host memory (cuDF's built-in spilling).",
          "True or False", form="flag", gpu_only=True, in_form=True),
    _Spec("CUDA_VISIBLE_DEVICES", v.devices, None, str | list[int] | None, "Which GPUs get a worker, by index or UUID, in order.",
          'a comma-separated list such as "0,1", or None for every GPU', gpu_only=True),
    _Spec("protocol", v.choice, "tcp", str, "Network protocol between scheduler and workers. 'ucx' needs distributed-ucxx.",
          form="choice", choices=("tcp", "ucx"), in_form=True),
    _Spec("local_directory", v.writable_folder, None, str | None, "Folder for the workers' spill files and scratch space.",
          "a path to a writable folder, or None for the system temp folder"),
    _Spec("dashboard_address", v.dashboard, "127.0.0.1:0", str | None, "Where the dashboard listens. ':0' picks a free port (no 'port 8787 in use').",
          '"host:port" such as "127.0.0.1:0", ":8787", or None to turn the dashboard off'),
    _Spec("scheduler_address", v.address, None, str | None,
          "Connect to an existing scheduler (SLURM, Kubernetes, `dask scheduler`) instead of starting a cluster.",
          '"tcp://host:port" (or tls://, ucx://), or None'),
    _Spec("scheduler_file", v.existing_file, None, str | None,
          "Connect to an existing scheduler through the JSON file it wrote (`dask scheduler --scheduler-file`).",
          "a path to an existing file, or None"),
    _Spec("connect_timeout", v.seconds, 30.0, float, "Seconds to wait for the scheduler and its first worker in connect mode.",
          "a number of seconds > 0", unit="seconds"),
    _Spec("host", v.host, "127.0.0.1", str, "Network interface the scheduler and workers listen on. Keep 127.0.0.1 on shared machines.",
          'an IP address or host name such as "127.0.0.1"'),
    _Spec("security", v.flag, True, bool, "TLS with a certificate of the session's own (in your registry folder, readable by you only), so no "
          "other account of the machine can connect. False: plain TCP, which every account that can reach the scheduler can use.",
          "True or False (or a distributed Security object passed to start_cluster)", form="flag"),
    _Spec("start_timeout", v.seconds, 120.0, float,
          "Seconds to wait for the workers of a new cluster (any deploy; on SLURM this includes the jobs' time in the queue).",
          "a number of seconds > 0", unit="seconds"),
    _Spec("deploy", v.choice, "local", str, "Where the workers run: 'local' (processes on this machine), 'slurm', 'pbs', 'sge' or 'lsf' "
          "(batch jobs of that scheduler, through dask-jobqueue) or 'gateway' (a Dask Gateway's cluster, e.g. on a JupyterHub). To use "
          "a scheduler that is already running, pass scheduler_address or scheduler_file instead.",
          form="choice", choices=("local", *BATCH_DEPLOYS, "gateway"), in_form=True),
    _Spec("partition", sv.identifier, None, str | None, "Partition (SLURM) or queue (PBS, SGE, LSF) the worker jobs are submitted to.",
          "a name as `sinfo`, `qstat -Q`, `qconf -sql` or `bqueues` lists it, or None for the default partition", slurm_only=True, in_form=True),
    _Spec("account", sv.identifier, None, str | None, "Account (SLURM -A, PBS -A) or project (SGE -P, LSF -P) the worker jobs are charged to.",
          "an account or project name, or None for your default", slurm_only=True, in_form=True),
    _Spec("walltime", sv.walltime, "01:00:00", str, "Time limit of each worker job; the scheduler ends the job, and its workers, when it is "
          "reached. Given in SLURM's forms for every scheduler; written as HH:MM:SS for PBS and SGE, HH:MM for LSF.",
          'a SLURM time as text: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"', slurm_only=True, in_form=True),
    _Spec("job_cores", v.count, None, int | None, "CPU cores each worker job asks for (SLURM --cpus-per-task, PBS ncpus, LSF -n; "
          "not SGE: use a parallel environment in job_extra_directives). Default: the worker's threads.",
          "a whole number >= 1, or None for the default", form="count", unit="cores", slurm_only=True, in_form=True),
    _Spec("job_memory", sv.job_memory, None, Size | None, "Memory each worker job asks for (SLURM --mem, PBS mem, LSF -M; not SGE: "
          "use your site's complex in job_extra_directives). Default: from memory_limit.",
          'a size with a unit such as "16GiB" (at least 1MiB), or None for the default', unit="bytes", slurm_only=True, in_form=True),
    _Spec("gpus_per_job", v.count, None, int | None, "GPUs each worker job asks for (SLURM --gres=gpu:N, PBS ngpus=N, SGE -l "
          "gpu=N with the complex named by the config key gpu-dask-kit.sge-gpu-complex, LSF -gpu \"num=N\"). Default: one per GPU worker.",
          "a whole number >= 1, or None for the default", form="count", gpu_only=True, slurm_only=True, in_form=True),
    _Spec("job_extra_directives", sv.directives, (), list[str] | str,
          'Extra options for every worker job, as the submit command takes them, e.g. ["--qos=debug"] (sbatch), ["-l place=scatter"] (qsub).',
          "a list of sbatch options (qsub or bsub options for PBS, SGE, LSF), or one, each without '#SBATCH'/'#PBS'/'#$'/'#BSUB' and line breaks",
          form="list", slurm_only=True, in_form=True),
    _Spec("interface", sv.interface, None, str | None, "Network interface the workers use to reach the scheduler, e.g. 'ib0' for InfiniBand.",
          'an interface name such as "ib0" or "eth0", or None for the default route', slurm_only=True),
    # -- Dask Gateway (deploy="gateway"): gpu_dask_kit/deploy/gateway.py --
    _Spec("gateway_address", gv.gateway_address, None, str | None,
          "The Dask Gateway's address (deploy='gateway'). None: dask-gateway's own config (`gateway.address`; a hub with Dask Gateway sets it).",
          '"http(s)://host[:port][/path]" as the admin gives it, or None'),
    _Spec("gateway_auth", v.choice, "auto", str,
          "How to log in to the Dask Gateway: 'jupyterhub' (the hub's JUPYTERHUB_API_TOKEN), 'basic' or 'kerberos' (user name and password "
          "or ticket from dask-gateway's config `gateway.auth.kwargs`), or 'auto' (the hub's token inside a hub, else dask-gateway's config).",
          form="choice", choices=("auto", "jupyterhub", "basic", "kerberos")),
    _Spec("gateway_cluster_options", gv.gateway_cluster_options, (), dict[str, Any] | tuple[tuple[str, Any], ...],
          "Extra cluster options for the Dask Gateway, by the gateway's names (e.g. image, worker GPUs); threads_per_worker and "
          "memory_limit map to its worker_cores and worker_memory. An option the gateway does not offer is an error.",
          "a mapping (or its JSON text) of the names `Gateway().cluster_options()` lists to values, or {}"),
    # -- Sharing one multi-GPU machine between users (an instructor's dask config): gpu_dask_kit/gpu_plan.py --
    _Spec("gpus_per_user", v.count, None, int | None,
          "GPUs each user's cluster takes on a shared multi-GPU machine (an instructor's setting); None: every visible GPU, "
          "with a warning when other processes use them.", _COUNT, form="count", gpu_only=True),
    _Spec("gpu_assignment", v.choice, "least-loaded", str,
          "How gpus_per_user picks the GPUs: 'least-loaded' (least memory held by other processes, as NVML tells) or 'by-user' "
          "(a stable rule from the user name, the same GPUs every time).", form="choice", choices=("least-loaded", "by-user"), gpu_only=True),
)}
# fmt: on

#: Per-option docs as plain dicts (help, accepted, unit, per_worker, gpu_only, slurm_only), for older callers.
OPTION_DOCS: dict[str, dict[str, Any]] = {
    s.name: {"help": s.doc, "accepted": s.accepted, "unit": s.unit, "per_worker": s.per_worker, "gpu_only": s.gpu_only, "slurm_only": s.slurm_only}
    for s in OPTION_SPECS.values()
}

_BY_KEY = {key: s.name for s in OPTION_SPECS.values() for key in {s.name, s.name.replace("_", "-"), s.name.lower(), s.name.lower().replace("_", "-")}}


def option_names() -> tuple[str, ...]:
    """The option names in documentation order.

    >>> option_names()[:3]
    ('device', 'n_workers', 'threads_per_worker')
    """
    return tuple(OPTION_SPECS)


def option_name(key: str) -> str | None:
    """The option a keyword, JSON or config key names, dashed or not; None when it names none.

    >>> option_name("n-workers"), option_name("cuda-visible-devices"), option_name("n_worker")
    ('n_workers', 'CUDA_VISIBLE_DEVICES', None)
    """
    return _BY_KEY.get(key) if isinstance(key, str) else None


def config_key(name: str) -> str:
    """The dask-config key of an option (under ``gpu-dask-kit``).

    >>> config_key("rmm_pool_size"), config_key("CUDA_VISIBLE_DEVICES")
    ('gpu-dask-kit.rmm-pool-size', 'gpu-dask-kit.cuda-visible-devices')
    """
    return OPTION_SPECS[name].config_key
