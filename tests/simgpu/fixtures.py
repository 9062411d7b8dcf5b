"""The simulated-GPU tier's fixture: ``sim_gpus(count, **settings)`` makes this test process AND every
process it starts (through PYTHONPATH + sitecustomize.py) see ``count`` simulated GPUs.

Use it with ``from .simgpu.fixtures import sim_gpus  # noqa: F401`` in a test module.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os

import pytest

from . import simnvml

SIMGPU_DIR = os.path.dirname(os.path.abspath(__file__))


def _forget_kit_detection() -> None:
    """The kit initialises NVML once per process (gpu_dask_kit.environment); forget that."""
    for name in ("gpu_dask_kit.environment",):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        reset = getattr(module, "_reset_nvml_for_tests", None)
        if reset is not None:
            reset()


@pytest.fixture
def sim_gpus(monkeypatch, tmp_path):
    """Factory: ``sim_gpus(2, total=16 * 2**30, ...)`` -> the configuration dict (see simnvml.py)."""
    installed = []

    def configure(count: int = 2, **settings):
        if importlib.util.find_spec("cupy") is None:
            pytest.fail(
                "the simulated-GPU tier needs CuPy installed (the kit picks GPU mode only with it): "
                "pip install -e '.[test]' (cupy-cuda12x imports without a GPU)"
            )
        config = dict(settings, count=count)
        config.setdefault("state_dir", str(tmp_path / "simulated-cuda-contexts"))
        monkeypatch.setenv(simnvml.ENV, json.dumps(config))
        path = os.environ.get("PYTHONPATH", "")
        if SIMGPU_DIR not in path.split(os.pathsep):
            monkeypatch.setenv("PYTHONPATH", SIMGPU_DIR + (os.pathsep + path if path else ""))
        simnvml.install(config)
        simnvml.activate_hook()
        _forget_kit_detection()
        installed.append(config)
        return config

    yield configure
    if installed:
        simnvml.uninstall()
        _forget_kit_detection()


def child_env(**extra: str) -> dict[str, str]:
    """os.environ (with the fixture's PYTHONPATH and GPU_DASK_KIT_SIM_GPUS) plus ``extra``."""
    return dict(os.environ, **extra)
