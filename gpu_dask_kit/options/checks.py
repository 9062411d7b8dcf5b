"""Pure checks of single option values: each takes the option's spec and a value, and returns the
normalised value or raises :class:`~gpu_dask_kit.errors.OptionError` naming the option, the value, what
is accepted (the spec's ``accepted`` text) and what to do. The SLURM options' checks are in
:mod:`.slurm_checks`.

No hardware, no dask config: the checks that need the machine (a pool larger than the GPU, a partition
that does not exist) come later, when the plan is made. :mod:`.spec` pairs one of these with every option.
"""

from __future__ import annotations

import os
import re
from typing import Any, Protocol

from ..errors import OptionError
from ..memory import Size, parse_size

__all__ = [
    "Spec",
    "is_off",
    "blank",
    "choice",
    "count",
    "flag",
    "optional_flag",
    "size",
    "optional_size",
    "host_memory",
    "devices",
    "address",
    "dashboard",
    "writable_folder",
    "existing_file",
    "seconds",
    "host",
]


class Spec(Protocol):
    """What a check reads from an option's spec (:class:`gpu_dask_kit.options.OptionSpec`)."""

    name: str
    accepted: str
    choices: tuple[str, ...]


_OFF = {"off", "none", "false", "no", "0", ""}


def is_off(value: Any) -> bool:
    """None, False, or text that means "off" ("off", "none", "false", "no", "0", "").

    >>> is_off(None), is_off("Off "), is_off(0.8)
    (True, True, False)
    """
    return value is None or value is False or (isinstance(value, str) and value.strip().lower() in _OFF)


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _digits(text: str, max_len: int) -> bool:
    """True for 1..max_len ASCII digits (``str.isdigit`` also accepts "²", which ``int`` rejects)."""
    return text.isascii() and text.isdigit() and len(text) <= max_len


def choice(spec: Spec, value: Any) -> str:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in spec.choices:
        raise OptionError(spec.name, value, " or ".join(repr(c) for c in spec.choices))
    return text


def count(spec: Spec, value: Any) -> int | None:
    """A whole number >= 1, or None; digits as text ("2" from a form or a flag) count as the number."""
    if value is None:
        return None
    number = int(value.strip()) if isinstance(value, str) and _digits(value.strip(), 18) else value
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        shown = number if isinstance(number, int) and not isinstance(number, bool) else value  # "0" -> n_workers=0
        raise OptionError(spec.name, shown, spec.accepted, f"pass {spec.name}=1 or more, or leave it out for the default")
    return number


def flag(spec: Spec, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "1", "on"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no", "0", "off"}:
        return False
    raise OptionError(spec.name, value, spec.accepted)


def optional_flag(spec: Spec, value: Any) -> bool | None:
    """True, False, or None (automatic); "auto"/"none"/"" as text mean None."""
    if value is None or (isinstance(value, str) and value.strip().lower() in {"auto", "none", ""}):
        return None
    return flag(spec, value)


def size(spec: Spec, value: Any) -> Size:
    try:
        return parse_size(value, spec.name)
    except OverflowError:  # e.g. "1e400GB": dask's parse_bytes overflows instead of raising ValueError
        raise OptionError(spec.name, value, spec.accepted, "the number is too large") from None


def optional_size(spec: Spec, value: Any) -> Size | None:
    return None if is_off(value) else size(spec, value)


def host_memory(spec: Spec, value: Any) -> Size | str | None:
    if is_off(value):
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return size(spec, value)


def devices(spec: Spec, value: Any) -> str | None:
    if blank(value):
        return None
    text = value
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    if isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    if not isinstance(text, str):
        raise OptionError(spec.name, value, spec.accepted)
    items = [item.strip() for item in text.split(",")]
    for item in items:
        if not (_digits(item, 6) or item.startswith(("GPU-", "MIG-"))):
            raise OptionError(spec.name, value, spec.accepted, "use GPU indices (see `gpu-dask-kit doctor`) or UUIDs")
    if len(set(items)) != len(items):
        raise OptionError(spec.name, value, spec.accepted, "list each GPU once")
    return ",".join(items)


def _port(text: str) -> bool:
    return _digits(text, 5) and int(text) <= 65535


def address(spec: Spec, value: Any) -> str | None:
    if blank(value):
        return None
    if not isinstance(value, str):
        raise OptionError(spec.name, value, spec.accepted)
    text = value.strip()
    if "://" not in text:
        text = "tcp://" + text
    scheme, _, rest = text.partition("://")
    hostname, _, port = rest.rpartition(":")
    if scheme not in {"tcp", "tls", "ucx", "ucxx", "inproc", "ws", "wss"} or not hostname or not _port(port):
        raise OptionError(spec.name, value, spec.accepted, "copy the address the scheduler printed at start, e.g. tcp://10.0.0.5:8786")
    return text


def dashboard(spec: Spec, value: Any) -> str | None:
    """Where the dashboard listens: "host:port", a port alone (int or digits: "0" is a free port, as distributed reads
    it; learner review 36), or off (None, False, "off", "none").

    >>> dashboard(None, "0"), dashboard(None, 8788), dashboard(None, ":0"), dashboard(None, "off")
    ('127.0.0.1:0', '127.0.0.1:8788', '127.0.0.1:0', None)
    """
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if is_off(value):
        return None
    text = f"127.0.0.1:{value}" if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        raise OptionError(spec.name, value, spec.accepted)
    hostname, sep, port = text.strip().rpartition(":")
    if not sep or not _port(port):
        raise OptionError(spec.name, value, spec.accepted, 'use ":0" to let the system pick a free port')
    return f"{hostname or '127.0.0.1'}:{int(port)}"


def _path(spec: Spec, value: Any) -> str | None:
    if blank(value):
        return None
    if not isinstance(value, (str, os.PathLike)) or "\0" in os.fspath(value):
        raise OptionError(spec.name, value, spec.accepted)
    return os.path.abspath(os.path.expanduser(os.fspath(value)))


def existing_file(spec: Spec, value: Any) -> str | None:
    path = _path(spec, value)
    if path is not None and not os.path.isfile(path):
        raise OptionError(spec.name, value, spec.accepted, "the file was not found; start the scheduler first (`dask scheduler --scheduler-file PATH`)")
    return path


def writable_folder(spec: Spec, value: Any) -> str | None:
    """A folder created at start: it, or its nearest existing parent, must be a folder we can write to."""
    path = _path(spec, value)
    if path is None:
        return None
    existing = path
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    too_long = any(len(os.fsencode(part)) > 255 for part in path.split(os.sep))
    if too_long or not (os.path.isdir(existing) and os.access(existing, os.W_OK)):
        raise OptionError(spec.name, value, spec.accepted, "choose a folder you can write to")
    return path


def seconds(spec: Spec, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise OptionError(spec.name, value, spec.accepted) from None
    if isinstance(value, bool) or not (0 < number < 86400):
        raise OptionError(spec.name, value, spec.accepted)
    return number


_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def host(spec: Spec, value: Any) -> str:
    if not isinstance(value, str) or not _HOST.fullmatch(value.strip()):
        raise OptionError(spec.name, value, spec.accepted)
    return value.strip()
