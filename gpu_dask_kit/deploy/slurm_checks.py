"""What SLURM itself says, read before anything is submitted: partitions, their limits, pending reasons.

Parsing is pure (doctested); :func:`preflight` asks ``sinfo`` / ``sbatch --test-only`` and raises
:class:`~gpu_dask_kit.errors.OptionError` naming the option to change. Nothing here submits a job.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from dataclasses import dataclass

from ..errors import ClusterStartError, OptionError

__all__ = ["Partition", "parse_slurm_time", "gpus_in_gres", "missing_commands", "partitions", "preflight", "pending_advice"]

_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
WALLTIME_FORMS = '"MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS" (SLURM\'s time formats)'


def parse_slurm_time(text: str, parameter: str = "walltime") -> int:
    """Seconds in a SLURM time string (``sbatch -t`` forms); ``OptionError`` for anything else.

    >>> parse_slurm_time("30"), parse_slurm_time("01:00:00"), parse_slurm_time("1-12"), parse_slurm_time("2-00:30")
    (1800, 3600, 129600, 174600)
    >>> parse_slurm_time("1h")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gpu_dask_kit.errors.OptionError: walltime='1h' is not accepted: expected "MM", "MM:SS", ... (SLURM's time formats). Write one hour as "01:00:00".
    """
    match = _TIME.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise OptionError(parameter, text, WALLTIME_FORMS, 'write one hour as "01:00:00"')
    days, a, b, c = (int(g) if g is not None else None for g in match.groups())
    first = int(a or 0)  # the regex always matches a first number
    if days is not None:  # D-HH[:MM[:SS]]
        seconds = days * 86400 + first * 3600 + (b or 0) * 60 + (c or 0)
    elif c is not None:  # HH:MM:SS
        seconds = first * 3600 + (b or 0) * 60 + c
    else:  # MM or MM:SS
        seconds = first * 60 + (b or 0)
    if seconds <= 0:
        raise OptionError(parameter, text, WALLTIME_FORMS, "a walltime must be longer than zero")
    return seconds


def gpus_in_gres(gres: str) -> int:
    """GPUs per node in one ``sinfo -o %G`` field (0 when none).

    >>> gpus_in_gres("gpu:4"), gpus_in_gres("gpu:a100:4(S:0-1),gpu:v100:2"), gpus_in_gres("(null)")
    (4, 6, 0)
    """
    return sum(int(n) for n in re.findall(r"(?:^|,)gpu(?::[\w.-]+)?:(\d+)", gres))


@dataclass
class Partition:
    """One partition as ``sinfo`` reports it (limits are the largest over its node types)."""

    name: str
    default: bool
    up: bool
    max_seconds: int | None  # None: no time limit
    cpus: int
    memory_mib: int
    gpus: int
    nodes: str


def partitions() -> dict[str, Partition]:
    """Every partition ``sinfo`` lists, by name. Raises ``ClusterStartError`` when SLURM does not answer."""
    out = _run(["sinfo", "-h", "-o", "%P|%a|%l|%c|%m|%G|%N"])
    found: dict[str, Partition] = {}
    for line in out.splitlines():
        name, avail, limit, cpus, mem, gres, nodes = line.split("|")
        default = name.endswith("*")
        name = name.rstrip("*")
        seconds = None if limit in ("infinite", "UNLIMITED", "n/a") else parse_slurm_time(limit, "sinfo time limit")
        part = Partition(name, default, avail == "up", seconds, int(cpus.rstrip("+")), int(mem.rstrip("+")), gpus_in_gres(gres), nodes)
        if name in found:  # several node types: keep the largest of each
            old = found[name]
            part.cpus, part.memory_mib, part.gpus = max(old.cpus, part.cpus), max(old.memory_mib, part.memory_mib), max(old.gpus, part.gpus)
            part.nodes = old.nodes + "," + part.nodes
        found[name] = part
    return found


def missing_commands() -> str | None:
    """None when SLURM's commands are on PATH, else a sentence saying what to do."""
    missing = [c for c in ("sbatch", "squeue", "scancel", "sinfo") if shutil.which(c) is None]
    if not missing:
        return None
    return (
        f"SLURM's commands ({', '.join(missing)}) are not on this machine's PATH: run the notebook on your "
        "cluster's login node (or after `module load slurm`); to try it here, install Debian's packages "
        "(apt-get install slurmctld slurmd munge slurm-client) and start a one-node SLURM with .ci/slurm/start"
    )


def _run(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterStartError(f"`{' '.join(cmd)}` failed ({exc}); is SLURM's controller up? Try `sinfo`.") from exc
    if proc.returncode != 0:
        raise ClusterStartError(f"`{' '.join(cmd)}` failed: {proc.stderr.strip() or proc.stdout.strip()}. Is SLURM's controller up? Try `sinfo`.")
    return proc.stdout


def _hostnames(nodes: str) -> set[str]:
    return {h.split(".")[0] for h in _run(["scontrol", "show", "hostnames", nodes]).split()}


def preflight(
    partition: str | None,
    walltime: str | None,
    gpus: int,
    cpus: int,
    memory_mib: int,
    loopback: bool,
    script: str,
    memory_option: tuple[str, object] = ("job_memory", None),
) -> Partition:
    """Check a worker job against what SLURM offers, without submitting it; returns the partition used.

    ``gpus``/``cpus``/``memory_mib`` are per job; ``loopback`` says the scheduler listens on 127.0.0.1
    (then every node of the partition must be this machine); ``script`` is the job script, handed to
    ``sbatch --test-only`` (SLURM's own verdict on account, QOS and extra directives).
    """
    problem = missing_commands()
    if problem:
        raise OptionError("deploy", "slurm", "'slurm' only where SLURM's commands are installed", problem)
    parts = partitions()
    names = ", ".join(sorted(parts)) or "none"
    if partition is None:
        default = [p for p in parts.values() if p.default]
        if not default:
            raise OptionError("partition", None, f"one of the partitions sinfo lists ({names})", "this SLURM has no default partition: name one")
        part = default[0]
    elif partition not in parts:
        raise OptionError("partition", partition, f"one of the partitions `sinfo` lists: {names}", "pick one of them (ask your admins which has GPUs)")
    else:
        part = parts[partition]
    where = f"partition {part.name!r}"
    if not part.up:
        raise OptionError("partition", part.name, "a partition that is up", f"{where} is not up now (see `sinfo`): pick another")
    seconds = parse_slurm_time(walltime) if walltime is not None else None
    if seconds is not None and part.max_seconds is not None and seconds > part.max_seconds:
        raise OptionError(
            "walltime", walltime, f"at most the time limit of {where} ({_hms(part.max_seconds)})", "lower walltime, or use a partition with a longer limit"
        )
    if gpus and part.gpus == 0:
        raise OptionError("gpus_per_job", gpus, f"0: the nodes of {where} have no GPUs", "pick a GPU partition (`sinfo -o '%P %G'`), or use device='cpu'")
    if gpus > part.gpus:
        raise OptionError(
            "gpus_per_job", gpus, f"at most {part.gpus}, the GPUs of one node of {where}", f"ask for {part.gpus} or fewer GPUs per job and more workers"
        )
    if cpus > part.cpus:
        raise OptionError(
            "job_cores", cpus, f"at most {part.cpus}, the cores of one node of {where}", "ask for fewer cores per job (job_cores, threads_per_worker)"
        )
    if memory_mib > part.memory_mib:
        name, value = memory_option
        raise OptionError(
            name,
            value,
            f"at most {part.memory_mib} MiB per job, the memory of one node of {where} (asked: {memory_mib} MiB)",
            "ask for less memory per job (job_memory, or memory_limit per worker)",
        )
    if loopback:
        here = socket.gethostname().split(".")[0]
        others = _hostnames(part.nodes) - {here}
        if others:
            raise OptionError(
                "host",
                "127.0.0.1",
                f"an address the nodes of {where} can reach (it has other nodes: {', '.join(sorted(others)[:3])})",
                "pass interface='ib0' (or the login node's network interface), or host=<this machine's address>",
            )
    verdict = _test_only(script)
    if verdict:
        raise ClusterStartError(f"SLURM refuses the worker job ({verdict}); check account, partition and job_extra_directives. Nothing was submitted.")
    return part


def _test_only(script: str) -> str:
    """SLURM's objection to ``script`` (``sbatch --test-only``: nothing is queued), or '' when it would run."""
    proc = subprocess.run(["sbatch", "--test-only"], input=script, capture_output=True, text=True, timeout=60)
    return "" if proc.returncode == 0 else (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "; ")


def _hms(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


_ADVICE = {
    "None": "SLURM's scheduler has not looked at the jobs yet: wait longer (start_timeout)",
    "Resources": (
        "the nodes are busy or too small for the request now: ask for less (job_cores, job_memory, gpus_per_job), another partition, or a longer start_timeout"
    ),
    "Priority": "other jobs are ahead in the queue: wait longer (start_timeout) or use a less busy partition",
    "PartitionTimeLimit": "walltime is over the partition's limit: lower walltime",
    "PartitionNodeLimit": "the request is larger than the partition allows: ask for less per job",
    "PartitionDown": "the partition is down: pick another partition",
    "PartitionInactive": "the partition is inactive: pick another partition",
    "ReqNodeNotAvail": "the nodes the job needs are not available (down, drained or reserved): pick another partition",
    "BeginTime": "a job_extra_directives line (--begin) delays the start: drop it",
    "Dependency": "a job_extra_directives line (--dependency) holds the job: drop it",
    "JobHeldUser": "the jobs are held: `scontrol release` them, or drop --hold",
    "JobHeldAdmin": "an administrator holds the jobs: ask your admins",
}


def pending_advice(reason: str) -> str:
    """What to change for a SLURM pending reason.

    >>> pending_advice("Priority")
    'other jobs are ahead in the queue: wait longer (start_timeout) or use a less busy partition'
    >>> pending_advice("QOSMaxGRESPerUser")
    "a limit of your account or QOS (QOSMaxGRESPerUser): ask for fewer jobs or resources, or ask your admins about the account's limits"
    """
    if reason in _ADVICE:
        return _ADVICE[reason]
    if reason.startswith(("QOS", "Assoc", "MaxJobs", "MaxCpu", "MaxGRES")):
        return f"a limit of your account or QOS ({reason}): ask for fewer jobs or resources, or ask your admins about the account's limits"
    return f"SLURM's reason is {reason!r} (see `man squeue`, JOB REASON CODES)"
