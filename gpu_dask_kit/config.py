"""Load the kit's defaults (``gpu-dask-kit.yaml``, generated from the option specs) into ``dask.config`` once.

``update_defaults`` keeps anything a user or instructor already set (YAML files, ``DASK_GPU_DASK_KIT__*``
environment variables) on top of the packaged defaults. Nothing is written to the user's home.
"""

from __future__ import annotations

import os

import dask.config
import yaml

__all__ = ["ensure_defaults", "DEFAULTS_FILE", "NON_OPTION_KEYS"]

DEFAULTS_FILE = os.path.join(os.path.dirname(__file__), "gpu-dask-kit.yaml")
#: Keys of the ``gpu-dask-kit`` config that are not cluster options: key -> (default, what it is).
NON_OPTION_KEYS: dict[str, tuple[object, str]] = {
    "runtime-dir": (None, "Folder of the per-user session registry; null: $GPU_DASK_KIT_RUNTIME_DIR or the user's runtime dir."),
    "sge-gpu-complex": ("gpu", "SGE: the consumable complex GPU jobs ask for (-l <complex>=N); see qconf -sc."),
}
_loaded = False


def ensure_defaults() -> None:
    """Merge the packaged defaults into dask.config (idempotent)."""
    global _loaded
    if _loaded and "gpu-dask-kit" in dask.config.config:
        return
    with open(DEFAULTS_FILE) as f:
        defaults = yaml.safe_load(f)
    dask.config.update_defaults(defaults)
    _loaded = True
