"""Pure checks of the batch-job options' values (``deploy="slurm"``, ``"pbs"``, ``"sge"``, ``"lsf"``): names,
time limits, job memory and extra directives. Same contract as :mod:`.checks`; whether a partition, queue
or account exists is asked of the scheduler later, when the plan is made.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import OptionError
from .checks import Spec, blank, size

__all__ = ["identifier", "interface", "walltime", "directives", "job_memory"]

_IDENTIFIER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_INTERFACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,14}")


def identifier(spec: Spec, value: Any) -> str | None:
    """A scheduler's name (partition, queue, account, complex): letters, digits, "_", "." and "-", up to 64; or None."""
    if blank(value):
        return None
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value.strip()):
        raise OptionError(spec.name, value, spec.accepted, "copy the name as your scheduler lists it (`sinfo`, `qstat -Q`, `qconf -sql`, `bqueues`)")
    return value.strip()


def interface(spec: Spec, value: Any) -> str | None:
    """A network interface name such as "ib0" or "eth0" (at most 15 characters, as Linux allows); or None."""
    if blank(value):
        return None
    if not isinstance(value, str) or not _INTERFACE.fullmatch(value.strip()):
        raise OptionError(spec.name, value, spec.accepted, "list the interfaces of a compute node with `ip -brief link`")
    return value.strip()


_WALLTIME = [  # SLURM's --time forms; a "D-" prefix allows hours (HH) to 23
    (re.compile(r"(?P<m>[0-9]{1,7})"), "MM"),
    (re.compile(r"(?P<m>[0-9]{1,7}):(?P<s>[0-9]{1,2})"), "MM:SS"),
    (re.compile(r"(?P<h>[0-9]{1,5}):(?P<m>[0-9]{1,2}):(?P<s>[0-9]{1,2})"), "HH:MM:SS"),
    (re.compile(r"(?P<d>[0-9]{1,4})-(?P<h>[0-9]{1,2})"), "D-HH"),
    (re.compile(r"(?P<d>[0-9]{1,4})-(?P<h>[0-9]{1,2}):(?P<m>[0-9]{1,2})"), "D-HH:MM"),
    (re.compile(r"(?P<d>[0-9]{1,4})-(?P<h>[0-9]{1,2}):(?P<m>[0-9]{1,2}):(?P<s>[0-9]{1,2})"), "D-HH:MM:SS"),
]
_WALLTIME_HINT = 'write it as text in one of SLURM\'s forms, e.g. "30", "01:30:00" or "2-00:00:00" (in YAML, quote it)'


def walltime(spec: Spec, value: Any) -> str:
    """A SLURM time limit, as text: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS".

    Numbers are refused, because YAML reads an unquoted 01:00:00 as the number 3600.

    >>> from gpu_dask_kit.options import OPTION_SPECS
    >>> walltime(OPTION_SPECS["walltime"], " 1-12:00 ")
    '1-12:00'
    """
    text = value.strip() if isinstance(value, str) else None
    match = next(((m, form) for regex, form in _WALLTIME if text and (m := regex.fullmatch(text))), None)
    if match is None:
        raise OptionError(spec.name, value, spec.accepted, _WALLTIME_HINT)
    parts = {k: int(v) for k, v in match[0].groupdict().items()}
    if parts.get("s", 0) > 59 or ("h" in parts and parts.get("m", 0) > 59) or ("d" in parts and parts["h"] > 23):
        raise OptionError(spec.name, value, spec.accepted, f"in the form {match[1]}, hours go to 23 after a day, minutes and seconds to 59")
    if not any(parts.values()):
        raise OptionError(spec.name, value, spec.accepted, "give a time limit above zero (SLURM reads 0 as no limit)")
    return text  # type: ignore[return-value]


def directives(spec: Spec, value: Any) -> tuple[str, ...]:
    """Extra job directives (``#SBATCH``/``#PBS``/``#$``/``#BSUB`` lines): a list of strings or one string, each one
    option such as "--qos=debug" or "-l place=scatter"."""
    if blank(value):
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
        raise OptionError(spec.name, value, spec.accepted)
    cleaned = []
    for item in items:
        line = item.strip()
        if any(c in item for c in "\n\r\0"):
            raise OptionError(spec.name, value, spec.accepted, "give one directive per list item, without line breaks")
        prefix = next((p for p in ("#SBATCH", "#PBS", "#BSUB", "#$") if line.upper().startswith(p)), None)
        if prefix:
            raise OptionError(spec.name, value, spec.accepted, f"leave out '{prefix}' (the kit writes it): {line[len(prefix) :].strip()!r}")
        if not line.startswith("-"):
            raise OptionError(
                spec.name,
                value,
                spec.accepted,
                "each directive is an sbatch option (qsub/bsub for PBS, SGE, LSF), e.g. '--qos=debug' or '-l place=scatter'",
            )
        cleaned.append(line)
    return tuple(cleaned)


def job_memory(spec: Spec, value: Any) -> int | None:
    """Bytes (at least 1 MiB: SLURM counts memory in MiB), or None; a fraction has no total to be taken of."""
    if blank(value):
        return None
    parsed = size(spec, value)
    if isinstance(parsed, float):
        raise OptionError(spec.name, value, spec.accepted, 'give the memory of one job with a unit, e.g. "16GiB"')
    if parsed < 2**20:
        raise OptionError(spec.name, value, spec.accepted, 'batch schedulers count memory in MiB: give at least "1MiB", e.g. "16GiB"')
    return parsed
