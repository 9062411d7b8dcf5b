"""View-model of the controls' form, derived from the option specs. Plain data: no ipywidgets, no cluster.

Which options the form shows (``in_form``), as what (``widget``: drop-down, checkbox, text, lines), with
which tooltip (the spec's help) and placeholder all come from :data:`gpu_dask_kit.options.OPTION_SPECS`.
GPU-only fields are shown in GPU mode only, SLURM-only fields only when deploy="slurm" is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...options import OPTION_SPECS, ClusterOptions
from ...options.spec import BATCH_DEPLOYS

__all__ = [
    "FORM_FIELDS",
    "CHOICES",
    "FieldSpec",
    "form_fields",
    "field_value",
    "tooltip",
    "placeholder",
    "visible_fields",
    "parse_form",
    "button_disabled",
]

#: The knobs the control form shows, in spec order; each label is the option's own name.
FORM_FIELDS: tuple[str, ...] = tuple(name for name, spec in OPTION_SPECS.items() if spec.in_form)
#: Options shown as a drop-down, with their choices (every one accepted by ClusterOptions).
CHOICES: dict[str, tuple[str, ...]] = {name: OPTION_SPECS[name].choices for name in FORM_FIELDS if OPTION_SPECS[name].form == "choice"}
_WIDGET = {"choice": "choice", "flag": "flag", "list": "lines"}  # anything else: a one-line text box


@dataclass(frozen=True)
class FieldSpec:
    """One form field: ``widget`` is "choice" (drop-down), "flag" (checkbox), "lines" (one item a line) or "text"."""

    name: str
    widget: str
    value: Any
    choices: tuple[str, ...]
    tooltip: str
    placeholder: str
    gpu_only: bool = False
    slurm_only: bool = False


def tooltip(name: str) -> str:
    """The hover text of an option: its spec's help (doc, accepted forms, per worker, GPU/SLURM only).

    >>> tooltip("n_workers").startswith("Number of worker processes.")
    True
    """
    return OPTION_SPECS[name].help()


def placeholder(name: str) -> str:
    """What an empty field means, from the spec's accepted text ("..., or None for the default" -> "the default").

    >>> placeholder("n_workers"), placeholder("rmm_pool_size"), placeholder("device")
    ('the default', 'no pool', '')
    """
    found = re.search(r"or None (?:for|to) (.+)$", OPTION_SPECS[name].accepted)
    return found[1] if found else ""


def _size_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if value % factor == 0:
            return f"{value // factor}{unit}"
    return str(value)


def field_value(name: str, value: Any) -> Any:
    """The form's text (or checkbox state) for a normalised option value; parsing it gives the value back.

    >>> field_value("memory_limit", 2**31), field_value("device_memory_limit", 0.8), field_value("n_workers", None)
    ('2GiB', '0.8', '')
    >>> field_value("device_memory_limit", None), field_value("enable_cudf_spill", True)
    ('off', True)
    >>> field_value("job_extra_directives", ("--qos=debug", "--exclusive"))
    '--qos=debug\\n--exclusive'
    """
    spec = OPTION_SPECS[name]
    if spec.form == "flag":
        return bool(value)
    if spec.form == "list":
        return "\n".join(value or ())
    if value is None:
        return "off" if spec.default is not None else ""  # a default turned off, or no value at all
    if spec.unit == "bytes" and isinstance(value, (int, float)):
        return _size_text(value)
    return str(value)


def form_fields(options: ClusterOptions) -> list[FieldSpec]:
    """The control form for ``options`` (defaults from config, or a running session's options)."""
    return [
        FieldSpec(
            name,
            _WIDGET.get(OPTION_SPECS[name].form, "text"),
            field_value(name, getattr(options, name)),
            CHOICES.get(name, ()),
            tooltip(name),
            placeholder(name),
            OPTION_SPECS[name].gpu_only,
            OPTION_SPECS[name].slurm_only,
        )
        for name in FORM_FIELDS
    ]


def visible_fields(device: str, deploy: str, gpu_available: bool) -> tuple[str, ...]:
    """The fields shown for the chosen ``device`` and ``deploy``: GPU-only ones in GPU mode (device="gpu",
    or "auto" where a GPU is usable), batch-job ones when deploy is a batch scheduler (slurm, pbs, sge, lsf).

    >>> "rmm_pool_size" in visible_fields("auto", "local", gpu_available=False)
    False
    >>> "partition" in visible_fields("cpu", "slurm", gpu_available=False)
    True
    """
    gpu = device == "gpu" or (device == "auto" and gpu_available)
    return tuple(n for n in FORM_FIELDS if (gpu or not OPTION_SPECS[n].gpu_only) and (deploy in BATCH_DEPLOYS or not OPTION_SPECS[n].slurm_only))


def _raw(name: str, value: Any) -> Any:
    if isinstance(value, str) and OPTION_SPECS[name].form == "list":
        return [line.strip() for line in value.splitlines() if line.strip()]
    return None if isinstance(value, str) and not value.strip() else value


def parse_form(values: Mapping[str, Any], base: ClusterOptions | None = None, visible: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``start_cluster`` from the form's values; raises the kit's ``OptionError``.

    Only fields that are shown (``visible``; default: all) and differ from the configured defaults are
    passed (so a CPU start does not report GPU options as "ignored"); options the running session ``base``
    was given explicitly outside the form (``local_directory``, ``scheduler_address``, ...) are kept, so an
    unchanged form reuses that session.

    >>> parse_form({"device": "cpu", "n_workers": "2", "memory_limit": "auto"})
    {'device': 'cpu', 'n_workers': '2'}
    """
    shown = FORM_FIELDS if visible is None else visible
    carried = {n: getattr(base, n) for n in sorted(base.explicit) if n not in FORM_FIELDS} if base else {}
    raw = {n: _raw(n, v) for n, v in values.items() if n in shown}
    wanted = ClusterOptions.from_config(**carried, **raw)  # raises OptionError naming the field
    defaults = ClusterOptions.from_config()
    changed = {n: raw[n] for n in raw if getattr(wanted, n) != getattr(defaults, n)}
    return {**carried, **changed}


def button_disabled(running: bool, busy: bool, can_scale: bool) -> dict[str, bool]:
    """Which buttons are disabled: everything while busy; Stop/Restart/Scale need a running cluster,
    Scale one the kit started (not a connection to an existing scheduler).

    >>> button_disabled(running=False, busy=False, can_scale=False)
    {'start': False, 'stop': True, 'restart': True, 'scale': True}
    """
    if busy:
        return dict.fromkeys(("start", "stop", "restart", "scale"), True)
    return {"start": False, "stop": not running, "restart": not running, "scale": not (running and can_scale)}
