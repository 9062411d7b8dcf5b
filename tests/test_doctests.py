"""The doctest examples of the pure policy modules run as tests."""

import doctest
import importlib

import pytest

MODULES = [
    "gpu_dask_kit.memory",
    "gpu_dask_kit.options",
    "gpu_dask_kit.errors",
    "gpu_dask_kit.links",
    "gpu_dask_kit.environment",
    "gpu_dask_kit.processes",
    "gpu_dask_kit.monitor",
    "gpu_dask_kit.registry",
    "gpu_dask_kit.scripts",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no doctest examples"
    assert result.failed == 0
