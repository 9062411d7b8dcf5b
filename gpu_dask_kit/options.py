"""ClusterOptions: every user knob of a kit session, documented once and validated up front.

One name per knob everywhere: the keyword argument, the dataclass field, the CLI flag (``_`` -> ``-``),
the dask-config key under ``gpu-dask-kit`` (``_`` -> ``-``), the widget label and the JSON key.
Defaults come from ``dask.config`` (the package's ``gpu-dask-kit.yaml``, overridable by YAML files and
``DASK_GPU_DASK_KIT__...`` environment variables); explicit arguments win.

Only checks that need no hardware live here; checks against the machine (a pool larger than the
device, a GPU index that does not exist) are made by :mod:`gpu_dask_kit.cluster` before it starts anything.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import dask.config

from . import config as _config
from .errors import OptionError
from .memory import Size, describe_size, parse_size

__all__ = ["ClusterOptions", "OPTION_DOCS", "option_names", "config_key"]


def _doc(text: str, accepted: str, unit: str = "", per_worker: bool = False, gpu_only: bool = False) -> dict:
    return {"help": text, "accepted": accepted, "unit": unit, "per_worker": per_worker, "gpu_only": gpu_only}


_SIZE = 'a size ("4GiB", bytes) or a fraction of the total (0.8, "80%")'

#: The one place each knob is documented. CLI help, widget tooltips and the README table come from it.
OPTION_DOCS: dict[str, dict] = {
    "device": _doc("Which cluster to start: 'gpu' (LocalCUDACluster), 'cpu' (LocalCluster) or 'auto' (GPU when one is usable).", '"auto", "gpu" or "cpu"'),
    "n_workers": _doc("Number of worker processes. Default: one per visible GPU, or min(4, cores) on CPU.", "a whole number >= 1, or None for the default"),
    "threads_per_worker": _doc("Threads in each worker. Default: 1 on GPU, cores / workers on CPU.", "a whole number >= 1, or None for the default", per_worker=True),
    "memory_limit": _doc("Host memory each worker may use before it spills to disk and, past it, is restarted.", f'"auto", {_SIZE} of the machine\'s memory, or None for no limit', "bytes", per_worker=True),
    "device_memory_limit": _doc("GPU memory each worker may fill before it spills to host memory.", f'{_SIZE} of the GPU, or "off" to never spill', "bytes", per_worker=True, gpu_only=True),
    "rmm_pool_size": _doc("Initial size of the RMM memory pool on each GPU worker (one cudaMalloc up front instead of many).", f'{_SIZE} of the GPU, or None for no pool', "bytes", per_worker=True, gpu_only=True),
    "rmm_maximum_pool_size": _doc("Largest size the RMM pool may grow to. Needs rmm_pool_size.", f'{_SIZE} of the GPU, or None for no maximum', "bytes", per_worker=True, gpu_only=True),
    "rmm_async": _doc("Use RMM's asynchronous allocator (cudaMallocAsync) instead of a pool. Not together with rmm_pool_size.", "True or False", gpu_only=True),
    "rmm_managed_memory": _doc("Use CUDA managed (unified) memory, which can oversubscribe the GPU. Slower; for teaching only.", "True or False", gpu_only=True),
    "enable_cudf_spill": _doc("Let cuDF spill its own buffers to host memory (cuDF's built-in spilling).", "True or False", gpu_only=True),
    "CUDA_VISIBLE_DEVICES": _doc("Which GPUs get a worker, by index or UUID, in order.", 'a comma-separated list such as "0,1", or None for every GPU', gpu_only=True),
    "protocol": _doc("Network protocol between scheduler and workers. 'ucx' needs distributed-ucxx.", '"tcp" or "ucx"'),
    "local_directory": _doc("Folder for the workers' spill files and scratch space.", "a path to a writable folder, or None for the system temp folder"),
    "dashboard_address": _doc("Where the dashboard listens. ':0' picks a free port (no 'port 8787 in use').", '"host:port" such as "127.0.0.1:0", ":8787", or None to turn the dashboard off'),
    "scheduler_address": _doc("Connect to an existing scheduler (SLURM, Kubernetes, `dask scheduler`) instead of starting a cluster.", '"tcp://host:port" (or tls://, ucx://), or None'),
    "scheduler_file": _doc("Connect to an existing scheduler through the JSON file it wrote (`dask scheduler --scheduler-file`).", "a path to an existing file, or None"),
    "connect_timeout": _doc("Seconds to wait for the scheduler and its first worker in connect mode.", "a number of seconds > 0", "seconds"),
    "host": _doc("Network interface the scheduler and workers listen on. Keep 127.0.0.1 on shared machines.", 'an IP address or host name such as "127.0.0.1"'),
}


def option_names() -> tuple[str, ...]:
    """The option names in documentation order.

    >>> option_names()[:3]
    ('device', 'n_workers', 'threads_per_worker')
    """
    return tuple(OPTION_DOCS)


def config_key(name: str) -> str:
    """The dask-config key of an option (under ``gpu-dask-kit``).

    >>> config_key("rmm_pool_size"), config_key("CUDA_VISIBLE_DEVICES")
    ('gpu-dask-kit.rmm-pool-size', 'gpu-dask-kit.cuda-visible-devices')
    """
    return "gpu-dask-kit." + name.lower().replace("_", "-")


_OFF = {"off", "none", "false", "no", "0", ""}


def _is_off(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, str) and value.strip().lower() in _OFF)


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in choices:
        raise OptionError(name, value, " or ".join(repr(c) for c in choices))
    return text


def _ascii_digits(text: str, max_len: int) -> bool:
    """True for 1..max_len ASCII digits (``str.isdigit`` also accepts "²", which ``int`` rejects)."""
    return text.isascii() and text.isdigit() and len(text) <= max_len


def _count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    number = int(value.strip()) if isinstance(value, str) and _ascii_digits(value.strip(), 18) else value
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        shown = number if isinstance(number, int) and not isinstance(number, bool) else value  # "0" from a form: n_workers=0
        raise OptionError(name, shown, OPTION_DOCS[name]["accepted"], f"pass {name}=1 or more, or leave it out for the default")
    return number


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "1", "on"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no", "0", "off"}:
        return False
    raise OptionError(name, value, "True or False")


def _size(name: str, value: Any) -> Size:
    try:
        return parse_size(value, name)
    except OverflowError:  # e.g. "1e400GB": dask's parse_bytes overflows instead of raising ValueError
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "the number is too large") from None


def _optional_size(name: str, value: Any) -> Size | None:
    return None if _is_off(value) else _size(name, value)


def _host_memory(name: str, value: Any) -> Size | str | None:
    if _is_off(value):
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return _size(name, value)


def _devices(name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = value
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    if isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    if not isinstance(text, str):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    items = [item.strip() for item in text.split(",")]
    for item in items:
        if not (_ascii_digits(item, 6) or item.startswith(("GPU-", "MIG-"))):
            raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "use GPU indices (see `gpu-dask-kit doctor`) or UUIDs")
    if len(set(items)) != len(items):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "list each GPU once")
    return ",".join(items)


def _port(text: str) -> bool:
    return _ascii_digits(text, 5) and int(text) <= 65535


def _address(name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    text = value.strip()
    if "://" not in text:
        text = "tcp://" + text
    scheme, _, rest = text.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in {"tcp", "tls", "ucx", "ucxx", "inproc", "ws", "wss"} or not host or not _port(port):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "copy the address the scheduler printed at start, e.g. tcp://10.0.0.5:8786")
    return text


def _dashboard(name: str, value: Any) -> str | None:
    if _is_off(value):
        return None
    text = f"127.0.0.1:{value}" if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    host, sep, port = text.strip().rpartition(":")
    if not sep or not _port(port):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"], 'use ":0" to let the system pick a free port')
    return f"{host or '127.0.0.1'}:{int(port)}"


def _path(name: str, value: Any, must_exist: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, (str, os.PathLike)) or "\0" in os.fspath(value):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    path = os.path.abspath(os.path.expanduser(os.fspath(value)))
    if must_exist and not os.path.isfile(path):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "the file was not found; start the scheduler first (`dask scheduler --scheduler-file PATH`)")
    if not must_exist:
        # The folder is created at start (plan.py): it, or its nearest existing parent, must be a folder we can write to.
        existing = path
        while not os.path.exists(existing) and os.path.dirname(existing) != existing:
            existing = os.path.dirname(existing)
        too_long = any(len(os.fsencode(part)) > 255 for part in path.split(os.sep))
        if too_long or not (os.path.isdir(existing) and os.access(existing, os.W_OK)):
            raise OptionError(name, value, OPTION_DOCS[name]["accepted"], "choose a folder you can write to")
    return path


def _seconds(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"]) from None
    if isinstance(value, bool) or not (0 < number < 86400):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    return number


_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _host(name: str, value: Any) -> str:
    if not isinstance(value, str) or not _HOST.fullmatch(value.strip()):
        raise OptionError(name, value, OPTION_DOCS[name]["accepted"])
    return value.strip()


_NORMALISE = {
    "device": lambda n, v: _choice(n, v, ("auto", "gpu", "cpu")),
    "n_workers": _count,
    "threads_per_worker": _count,
    "memory_limit": _host_memory,
    "device_memory_limit": _optional_size,
    "rmm_pool_size": _optional_size,
    "rmm_maximum_pool_size": _optional_size,
    "rmm_async": _flag,
    "rmm_managed_memory": _flag,
    "enable_cudf_spill": _flag,
    "CUDA_VISIBLE_DEVICES": _devices,
    "protocol": lambda n, v: _choice(n, v, ("tcp", "ucx")),
    "local_directory": lambda n, v: _path(n, v, must_exist=False),
    "dashboard_address": _dashboard,
    "scheduler_address": _address,
    "scheduler_file": lambda n, v: _path(n, v, must_exist=True),
    "connect_timeout": _seconds,
    "host": _host,
}


@dataclass(frozen=True)
class ClusterOptions:
    """Every knob of a kit session, normalised and checked. See ``OPTION_DOCS`` for each field.

    Build it with :meth:`from_config` to fill unset fields from ``dask.config``:

    >>> opts = ClusterOptions.from_config(device="cpu", n_workers=2, memory_limit="1GiB")
    >>> opts.device, opts.n_workers, opts.memory_limit
    ('cpu', 2, 1073741824)
    """

    device: str = "auto"
    n_workers: int | None = None
    threads_per_worker: int | None = None
    memory_limit: Any = "auto"
    device_memory_limit: Any = 0.8
    rmm_pool_size: Any = None
    rmm_maximum_pool_size: Any = None
    rmm_async: bool = False
    rmm_managed_memory: bool = False
    enable_cudf_spill: bool = False
    CUDA_VISIBLE_DEVICES: str | None = None
    protocol: str = "tcp"
    local_directory: str | None = None
    dashboard_address: str | None = "127.0.0.1:0"
    scheduler_address: str | None = None
    scheduler_file: str | None = None
    connect_timeout: float = 30.0
    host: str = "127.0.0.1"
    _explicit: frozenset = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, normalise in _NORMALISE.items():
            object.__setattr__(self, name, normalise(name, getattr(self, name)))
        self._check_combinations()

    def _check_combinations(self) -> None:
        if self.scheduler_address and self.scheduler_file:
            raise OptionError("scheduler_address", self.scheduler_address, "either scheduler_address or scheduler_file, not both",
                              f"drop one of them (scheduler_file={self.scheduler_file!r} was also given)")
        if self.rmm_async and self.rmm_pool_size is not None:
            raise OptionError("rmm_async", True, "rmm_async=True without rmm_pool_size, or rmm_pool_size without rmm_async",
                              "pick one: a pool (rmm_pool_size) or the async allocator (rmm_async=True)")
        if self.rmm_maximum_pool_size is not None and self.rmm_pool_size is None:
            raise OptionError("rmm_maximum_pool_size", self.rmm_maximum_pool_size, "a maximum together with rmm_pool_size",
                              "set rmm_pool_size too, or drop rmm_maximum_pool_size")
        if (self.rmm_maximum_pool_size is not None and type(self.rmm_maximum_pool_size) is type(self.rmm_pool_size)
                and self.rmm_maximum_pool_size < self.rmm_pool_size):
            raise OptionError("rmm_maximum_pool_size", self.rmm_maximum_pool_size, f"at least rmm_pool_size ({describe_size(self.rmm_pool_size)})",
                              "raise the maximum or lower the pool size")
        if self.rmm_managed_memory and self.rmm_async:
            raise OptionError("rmm_managed_memory", True, "managed memory or the async allocator, not both", "drop one of them")

    @classmethod
    def from_config(cls, **overrides: Any) -> "ClusterOptions":
        """Options from ``dask.config`` (``gpu-dask-kit.*``), with explicit ``overrides`` winning.

        Unknown names raise :class:`OptionError` with the closest valid name.
        """
        _config.ensure_defaults()
        names = option_names()
        for key in overrides:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"did you mean {close[0]!r}?" if close else "see `gpu-dask-kit doctor --options` for the list"
                raise OptionError(key, overrides[key], "one of the option names: " + ", ".join(names), hint)
        values = {}
        for name in names:
            if name in overrides:
                values[name] = overrides[name]
            else:
                values[name] = dask.config.get(config_key(name), default=getattr(cls, name))
        return cls(**values, _explicit=frozenset(overrides))

    @property
    def connect_mode(self) -> bool:
        """True when the session attaches to an existing scheduler instead of starting one."""
        return bool(self.scheduler_address or self.scheduler_file)

    @property
    def explicit(self) -> frozenset:
        """The option names the caller passed explicitly (the rest came from the config)."""
        return self._explicit

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict, keyed by option name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}

    def replace(self, **changes: Any) -> "ClusterOptions":
        """A copy with ``changes`` applied (and checked)."""
        return dataclasses.replace(self, **changes, _explicit=self._explicit | frozenset(changes))

    def changed_from(self, other: "ClusterOptions") -> dict[str, tuple[Any, Any]]:
        """The options that differ from ``other``: ``{name: (other's value, this value)}``."""
        return {n: (getattr(other, n), getattr(self, n)) for n in option_names() if getattr(other, n) != getattr(self, n)}


def options_from_mapping(values: Mapping[str, Any]) -> ClusterOptions:
    """Options from a JSON-like mapping (REST bodies, registry files); same checks as keywords."""
    if not isinstance(values, Mapping):
        raise OptionError("options", values, "a JSON object of option names and values")
    return ClusterOptions.from_config(**dict(values))


def options_markdown_table() -> str:
    """The README's option table, generated from ``OPTION_DOCS`` and the packaged defaults."""
    defaults = ClusterOptions.from_config()
    rows = ["| option (kwarg, `--flag`, config key) | default | accepted | what it does |", "|---|---|---|---|"]
    for name, doc in OPTION_DOCS.items():
        extra = (" Per worker." if doc["per_worker"] else "") + (" GPU only." if doc["gpu_only"] else "")
        rows.append(f"| `{name}` | `{getattr(defaults, name)!r}` | {doc['accepted']} | {doc['help']}{extra} |")
    return "\n".join(rows) + "\n"
