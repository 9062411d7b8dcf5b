"""Cluster flags for any script: ``add_cluster_args(parser)`` and ``start_cluster_from_args(args)``.

The flags come from the option specs: the option names with dashes (``--n-workers``, ``--rmm-pool-size``,
``--scheduler-file``), switches for flags (``--rmm-async`` / ``--no-rmm-async``), a repeatable flag for
lists (``--job-extra-directives=--qos=debug``), help from each spec. An unset flag falls back to the dask
config, like a keyword left out of ``start_cluster``::

    parser = argparse.ArgumentParser()
    add_cluster_args(parser)
    args = parser.parse_args()
    session = start_cluster_from_args(args)
"""

from __future__ import annotations

import argparse
from typing import Any

from .options import OPTION_SPECS, option_names
from .session import start_cluster

__all__ = ["add_cluster_args", "start_cluster_from_args", "options_from_args", "flag_name"]


def flag_name(option: str) -> str:
    """The CLI flag of an option.

    >>> flag_name("rmm_pool_size"), flag_name("CUDA_VISIBLE_DEVICES")
    ('--rmm-pool-size', '--CUDA-VISIBLE-DEVICES')
    """
    return OPTION_SPECS[option].flags[0]


def add_cluster_args(parser: argparse.ArgumentParser, *, title: str = "cluster (gpu-dask-kit)") -> argparse.ArgumentParser:
    """Add one flag per cluster option to ``parser`` (in an argument group) and return the parser."""
    group = parser.add_argument_group(title, "Unset flags use the gpu-dask-kit dask-config defaults.")
    for spec in OPTION_SPECS.values():
        help_text = spec.help().replace("%", "%%")
        if spec.form == "flag":
            group.add_argument(*spec.flags, dest=spec.name, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif spec.form == "list":
            group.add_argument(
                *spec.flags,
                dest=spec.name,
                action="append",
                default=None,
                metavar="VALUE",
                help=help_text + f" Repeat the flag for more; write {spec.flags[0]}=--x=y for a value starting with '-'.",
            )
        else:
            metavar = "|".join(spec.choices) if spec.form == "choice" else spec.name.upper().replace("_", "-") if spec.name.islower() else "LIST"
            group.add_argument(*spec.flags, dest=spec.name, default=None, metavar=metavar, help=help_text)
    return parser


def _number(text: Any) -> Any:
    """ "3" -> 3 and "-2" -> -2, so an error shows the number (n_workers=-2); anything else as typed."""
    stripped = text.strip() if isinstance(text, str) else ""
    digits = stripped.removeprefix("-")
    return int(stripped) if digits.isascii() and digits.isdigit() and len(digits) < 19 else text


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options the user actually gave on the command line (unset flags are left out)."""
    values = {name: getattr(args, name) for name in option_names() if getattr(args, name, None) is not None}
    return {name: _number(value) if OPTION_SPECS[name].form == "count" else value for name, value in values.items()}


def start_cluster_from_args(args: argparse.Namespace, **overrides: Any):
    """Start (or connect) the session the flags describe; ``overrides`` win over flags."""
    return start_cluster(**{**options_from_args(args), **overrides})
