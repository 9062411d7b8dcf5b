"""What the kit reports as RMM's allocator, on stand-in RMM objects (the real ones need a GPU:
tests/test_gpu.py and tests/test_gpu_spec.py check them on one)."""

from __future__ import annotations

import sys
import types

from gpu_dask_kit.allocator import rmm_resource_name


def _resource(name: str, upstream=None):
    cls = type(name, (), {})
    obj = cls()
    if upstream is not None:
        obj.upstream_mr = upstream
    return obj


def _rmm_with(resource, monkeypatch):
    rmm = types.ModuleType("rmm")
    rmm.mr = types.SimpleNamespace(get_current_device_resource=lambda: resource)
    monkeypatch.setitem(sys.modules, "rmm", rmm)


def test_the_allocator_under_dask_cudas_tracking_adaptor_is_named(monkeypatch):
    """Found on the H100 (2026-11-24): the kit's workers run under TrackingResourceAdaptor
    (rmm_track_allocations), and the report named the adaptor instead of the pool."""
    pool = _resource("PoolMemoryResource", upstream=_resource("CudaMemoryResource"))
    _rmm_with(_resource("TrackingResourceAdaptor", upstream=_resource("StatisticsResourceAdaptor", upstream=pool)), monkeypatch)
    assert rmm_resource_name() == "PoolMemoryResource"


def test_a_resource_that_is_not_a_watching_adaptor_is_named_as_it_is(monkeypatch):
    _rmm_with(_resource("CudaAsyncMemoryResource"), monkeypatch)
    assert rmm_resource_name() == "CudaAsyncMemoryResource"
    _rmm_with(_resource("LimitingResourceAdaptor", upstream=_resource("CudaMemoryResource")), monkeypatch)
    assert rmm_resource_name() == "LimitingResourceAdaptor"  # it changes what can be allocated: named


def test_without_rmm_it_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "rmm", None)
    assert rmm_resource_name() == "rmm not installed"
