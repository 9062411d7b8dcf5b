"""Cluster flags for any script: ``add_cluster_args(parser)`` and ``start_cluster_from_args(args)``.

The flags are the option names with dashes (``--n-workers``, ``--rmm-pool-size``, ``--scheduler-file``),
their help comes from ``OPTION_DOCS``, and an unset flag falls back to the dask config, like a keyword
left out of ``start_cluster``::

    parser = argparse.ArgumentParser()
    add_cluster_args(parser)
    args = parser.parse_args()
    session = start_cluster_from_args(args)
"""

from __future__ import annotations

import argparse
from typing import Any

from .options import OPTION_DOCS, option_names

__all__ = ["add_cluster_args", "start_cluster_from_args", "options_from_args", "flag_name"]

_BOOLEAN = {"rmm_async", "rmm_managed_memory", "enable_cudf_spill"}


def flag_name(option: str) -> str:
    """The CLI flag of an option.

    >>> flag_name("rmm_pool_size"), flag_name("CUDA_VISIBLE_DEVICES")
    ('--rmm-pool-size', '--CUDA-VISIBLE-DEVICES')
    """
    return "--" + option.replace("_", "-")


def add_cluster_args(parser: argparse.ArgumentParser, *, title: str = "cluster (gpu-dask-kit)") -> argparse.ArgumentParser:
    """Add one flag per cluster option to ``parser`` (in an argument group) and return the parser."""
    group = parser.add_argument_group(title, "Unset flags use the gpu-dask-kit dask-config defaults.")
    for name in option_names():
        doc = OPTION_DOCS[name]
        help_text = f"{doc['help']} Accepted: {doc['accepted']}." + (" Per worker." if doc["per_worker"] else "")
        flags = [flag_name(name)] + ([flag_name(name.lower())] if name != name.lower() else [])
        if name in _BOOLEAN:
            group.add_argument(*flags, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            group.add_argument(*flags, dest=name, default=None, metavar=name.upper().replace("_", "-") if name.islower() else "LIST",
                               help=help_text.replace("%", "%%"))
    return parser


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options the user actually gave on the command line (unset flags are left out)."""
    values = {name: getattr(args, name) for name in option_names() if getattr(args, name, None) is not None}
    for count in ("n_workers", "threads_per_worker"):
        text = values.get(count)
        if isinstance(text, str) and text.strip().lstrip("-").isascii() and text.strip().lstrip("-").isdigit() and len(text) < 19:
            values[count] = int(values[count])
    return values


def start_cluster_from_args(args: argparse.Namespace, **overrides: Any):
    """Start (or connect) the session the flags describe; ``overrides`` win over flags."""
    from .session import start_cluster

    return start_cluster(**{**options_from_args(args), **overrides})
