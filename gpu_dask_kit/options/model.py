"""ClusterOptions: every knob of a kit session, normalised and checked, from keywords, JSON or dask config.

Only checks that need no hardware live here; checks against the machine (a pool larger than the
device, a GPU index that does not exist) are made when the plan is made, before anything starts.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import dask.config

from .. import config as _config
from ..errors import OptionError
from ..memory import describe_size
from .spec import _BY_KEY, BATCH_DEPLOYS, OPTION_SPECS, option_name

__all__ = ["ClusterOptions", "configured", "options_from_mapping"]


def configured() -> dict[str, Any]:
    """Every option's value in ``dask.config`` (``gpu-dask-kit.*``), by option name, unchecked.

    Keys may be spelled with dashes or underscores, in either case for ``CUDA_VISIBLE_DEVICES``
    (dask merges ``-`` and ``_`` but not case); a spelling that differs from the packaged default wins.
    """
    _config.ensure_defaults()
    section = dask.config.get("gpu-dask-kit", default={}) or {}
    values = {name: spec.default for name, spec in OPTION_SPECS.items()}
    seen: set[str] = set()
    for key, value in section.items() if isinstance(section, Mapping) else ():
        name = option_name(key)
        if name is not None and (name not in seen or value != OPTION_SPECS[name].default):
            values[name] = value
            seen.add(name)
    return values


#: dask-cuda parameters the kit sets itself (no option of its own), and what it does instead.
_SET_BY_THE_KIT = {
    "rmm_release_threshold": (
        "the kit sets dask-cuda's rmm_release_threshold itself on async workers (rmm_async=True): a share of each GPU "
        "that the pool keeps when idle, handing back what it holds above it (notebook 01 prints the share); there is "
        "no option for it"
    ),
}


def unknown_option(key: Any, value: Any) -> OptionError:
    """The error for a name that is no option: the closest option name, or what the kit does for a dask-cuda parameter
    it sets itself, or where the list is."""
    close = difflib.get_close_matches(key, list(_BY_KEY), n=1) if isinstance(key, str) else []
    hint = _SET_BY_THE_KIT.get(key) or (f"did you mean {_BY_KEY[close[0]]!r}?" if close else "see `gpu-dask-kit doctor --options` for the list")
    return OptionError(key, value, "one of the option names: " + ", ".join(OPTION_SPECS), hint)


#: The dataclass defaults: each spec's default.
_D = {name: spec.default for name, spec in OPTION_SPECS.items()}


@dataclass(frozen=True)
class ClusterOptions:
    """Every knob of a kit session, normalised and checked. ``OPTION_SPECS`` documents each field.

    Build it with :meth:`from_config` to fill unset fields from ``dask.config``:

    >>> opts = ClusterOptions.from_config(device="cpu", n_workers=2, memory_limit="1GiB")
    >>> opts.device, opts.n_workers, opts.memory_limit
    ('cpu', 2, 1073741824)
    """

    device: str = _D["device"]
    n_workers: int | None = _D["n_workers"]
    threads_per_worker: int | None = _D["threads_per_worker"]
    memory_limit: Any = _D["memory_limit"]
    device_memory_limit: Any = _D["device_memory_limit"]
    rmm_pool_size: Any = _D["rmm_pool_size"]
    rmm_maximum_pool_size: Any = _D["rmm_maximum_pool_size"]
    rmm_async: bool | None = _D["rmm_async"]
    rmm_managed_memory: bool = _D["rmm_managed_memory"]
    enable_cudf_spill: bool = _D["enable_cudf_spill"]
    CUDA_VISIBLE_DEVICES: str | None = _D["CUDA_VISIBLE_DEVICES"]
    protocol: str = _D["protocol"]
    local_directory: str | None = _D["local_directory"]
    dashboard_address: str | None = _D["dashboard_address"]
    scheduler_address: str | None = _D["scheduler_address"]
    scheduler_file: str | None = _D["scheduler_file"]
    connect_timeout: float = _D["connect_timeout"]
    host: str = _D["host"]
    security: bool = _D["security"]
    start_timeout: float = _D["start_timeout"]
    deploy: str = _D["deploy"]
    partition: str | None = _D["partition"]
    account: str | None = _D["account"]
    walltime: str = _D["walltime"]
    job_cores: int | None = _D["job_cores"]
    job_memory: int | None = _D["job_memory"]
    gpus_per_job: int | None = _D["gpus_per_job"]
    job_extra_directives: tuple[str, ...] = _D["job_extra_directives"]
    interface: str | None = _D["interface"]
    gateway_address: str | None = _D["gateway_address"]  # deploy="gateway" (gpu_dask_kit/deploy/gateway.py)
    gateway_auth: str = _D["gateway_auth"]
    gateway_cluster_options: tuple[tuple[str, Any], ...] = _D["gateway_cluster_options"]
    gpus_per_user: int | None = _D["gpus_per_user"]  # a shared machine (gpu_dask_kit/gpu_plan.py)
    gpu_assignment: str = _D["gpu_assignment"]
    _explicit: frozenset = field(default=frozenset(), repr=False, compare=False)

    def __new__(cls, *args: Any, **kwargs: Any) -> ClusterOptions:
        """Refuse a keyword that is no option with the kit's error (the dataclass would raise a bare TypeError)."""
        for key, value in kwargs.items():
            if key not in OPTION_SPECS and key != "_explicit":
                raise unknown_option(key, value)
        return super().__new__(cls)

    def __post_init__(self) -> None:
        for name, spec in OPTION_SPECS.items():
            object.__setattr__(self, name, spec.normalise(getattr(self, name)))
        self._check_combinations()

    def _check_combinations(self) -> None:
        if self.scheduler_address and self.scheduler_file:
            raise OptionError(
                "scheduler_address",
                self.scheduler_address,
                "either scheduler_address or scheduler_file, not both",
                f"drop one of them (scheduler_file={self.scheduler_file!r} was also given)",
            )
        if self.rmm_async and self.rmm_pool_size is not None:
            raise OptionError(
                "rmm_async",
                True,
                f"either rmm_async=True or rmm_pool_size, not both (rmm_pool_size, {describe_size(self.rmm_pool_size)}, was also given)",
                "pick one: a pool (rmm_pool_size) or the async allocator (rmm_async=True), which needs no sizing",
            )
        if self.rmm_maximum_pool_size is not None and self.rmm_pool_size is None:
            raise OptionError(
                "rmm_maximum_pool_size",
                self.rmm_maximum_pool_size,
                "a maximum together with rmm_pool_size",
                "set rmm_pool_size too, or drop rmm_maximum_pool_size",
            )
        if (
            self.rmm_maximum_pool_size is not None
            and type(self.rmm_maximum_pool_size) is type(self.rmm_pool_size)
            and self.rmm_maximum_pool_size < self.rmm_pool_size
        ):
            raise OptionError(
                "rmm_maximum_pool_size",
                self.rmm_maximum_pool_size,
                f"at least rmm_pool_size ({describe_size(self.rmm_pool_size)})",
                "raise the maximum or lower the pool size",
            )
        if self.rmm_managed_memory and self.rmm_async:
            raise OptionError("rmm_managed_memory", True, "managed memory or the async allocator, not both", "drop one of them")
        if self.deploy in (*BATCH_DEPLOYS, "gateway") and self.connect_mode:
            name = "scheduler_address" if self.scheduler_address else "scheduler_file"
            starts = "the kit submits the jobs" if self.deploy in BATCH_DEPLOYS else "the gateway starts the cluster"
            raise OptionError(
                name,
                getattr(self, name),
                f'either deploy="{self.deploy}" ({starts}) or a running scheduler, not both',
                f'drop {name} to start a cluster with deploy="{self.deploy}", or drop deploy="{self.deploy}" to connect',
            )

    @classmethod
    def from_config(cls, **overrides: Any) -> ClusterOptions:
        """Options from ``dask.config`` (``gpu-dask-kit.*``), with explicit ``overrides`` winning.

        Keys may be dashed (``{"n-workers": 2}``, as YAML writes them). Unknown names raise
        :class:`OptionError` with the closest valid name.
        """
        given: dict[str, Any] = {}
        for key, value in overrides.items():
            name = option_name(key)
            if name is None:
                raise unknown_option(key, value)
            if name in given:
                raise OptionError(name, value, "each option once", f"{key!r} and another spelling of {name} were both given: keep one")
            given[name] = value
        base = configured()
        options = cls(**{**base, **given}, _explicit=frozenset(given))
        if options.deploy not in BATCH_DEPLOYS:
            _refuse_slurm_options(options, given, base)
        return options

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ClusterOptions:
        """Options from a JSON object (REST bodies, registry files): the same keys and checks as keywords."""
        if not isinstance(values, Mapping):
            raise OptionError("options", values, "a JSON object of option names and values")
        return cls.from_config(**dict(values))

    @property
    def connect_mode(self) -> bool:
        """True when the session attaches to an existing scheduler instead of starting one."""
        return bool(self.scheduler_address or self.scheduler_file)

    @property
    def explicit(self) -> frozenset:
        """The option names the caller passed explicitly (the rest came from the config)."""
        return self._explicit

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict, keyed by option name (lists for list options)."""
        return {f.name: (list(value) if isinstance(value := getattr(self, f.name), tuple) else value) for f in fields(self) if not f.name.startswith("_")}

    def replace(self, **changes: Any) -> ClusterOptions:
        """A copy with ``changes`` applied (and checked)."""
        return dataclasses.replace(self, **changes, _explicit=self._explicit | frozenset(changes))

    def changed_from(self, other: ClusterOptions) -> dict[str, tuple[Any, Any]]:
        """The options that differ from ``other``: ``{name: (other's value, this value)}``."""
        return {n: (getattr(other, n), getattr(self, n)) for n in OPTION_SPECS if getattr(other, n) != getattr(self, n)}


def _refuse_slurm_options(options: ClusterOptions, given: Mapping[str, Any], base: Mapping[str, Any]) -> None:
    """A batch-job option given explicitly (other than as configured) needs a batch deploy (slurm, pbs, sge, lsf)."""
    for name in given:
        spec = OPTION_SPECS[name]
        if not spec.slurm_only:
            continue
        try:
            as_configured = spec.normalise(base[name])
        except OptionError:
            as_configured = None
        if getattr(options, name) != as_configured:
            raise OptionError(
                name,
                given[name],
                f'a batch deploy (deploy="slurm", "pbs", "sge" or "lsf"): {name} is a batch-job option and deploy is {options.deploy!r}',
                f'pass deploy="slurm" (or "pbs", "sge", "lsf") to submit the workers as batch jobs, or leave {name} out',
            )


def options_from_mapping(values: Mapping[str, Any]) -> ClusterOptions:
    """Options from a JSON-like mapping (REST bodies, registry files); same checks as keywords."""
    return ClusterOptions.from_dict(values)
