"""Cluster options: every knob declared once (:mod:`.spec`), checked (:mod:`.checks`, :mod:`.slurm_checks`)
into a frozen :class:`ClusterOptions` (:mod:`.model`), and documented from the same specs (:mod:`.docs`).

One name per knob everywhere: the keyword argument, the dataclass field and the JSON key (``n_workers``),
the CLI flag (``--n-workers``) and the dask-config key (``gpu-dask-kit.n-workers``). Dashed and underscored
spellings both work as keyword, JSON and config keys. Defaults come from ``dask.config`` (the packaged
``gpu-dask-kit.yaml``, overridable by YAML files and ``DASK_GPU_DASK_KIT__...`` environment variables);
explicit arguments win.

>>> ClusterOptions.from_config(**{"n-workers": "2", "walltime": "30", "deploy": "slurm"}).n_workers
2
>>> OPTION_SPECS["rmm_pool_size"].flags, OPTION_SPECS["rmm_pool_size"].config_key
(('--rmm-pool-size',), 'gpu-dask-kit.rmm-pool-size')
"""

from __future__ import annotations

from .docs import options_doc_section, options_markdown_table, with_option_signature, yaml_text
from .model import ClusterOptions, configured, options_from_mapping
from .spec import OPTION_DOCS, OPTION_SPECS, OptionSpec, config_key, option_name, option_names

__all__ = [
    "ClusterOptions",
    "OptionSpec",
    "OPTION_SPECS",
    "OPTION_DOCS",
    "option_names",
    "option_name",
    "config_key",
    "configured",
    "options_from_mapping",
    "with_option_signature",
    "options_doc_section",
    "options_markdown_table",
    "yaml_text",
]
