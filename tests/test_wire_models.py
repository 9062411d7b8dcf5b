"""Each JSON wire model of the server extension and the TypeScript interface that mirrors it agree.

``labextension/src/models.ts`` declares one interface per model, named after the Python function that
produces it; this test reads the interfaces' field names and compares them with what the functions
return (required TS fields must be sent, every sent key must be declared). GPU items come from the
fake NVML of the unit tests.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import os
import re
import types
from pathlib import Path

import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.server import models

from .fake_nvml import FakeNVML, install

MODELS_TS = Path(__file__).resolve().parents[1] / "labextension" / "src" / "models.ts"


def interfaces() -> dict[str, tuple[set[str], set[str]]]:
    """``{name: (required fields, optional fields)}`` of the exported interfaces in models.ts."""
    found = {}
    for name, body in re.findall(r"export interface (\w+) \{\n(.*?)\n\}", MODELS_TS.read_text(), re.S):
        fields = re.findall(r"^  (\w+)(\??):", body, re.M)
        found[name] = ({f for f, q in fields if not q}, {f for f, q in fields if q})
    return found


def detection_module():
    """Where detection and EnvironmentReport's parts are exported."""
    return importlib.import_module("gpu_dask_kit.environment")


def record() -> dict:
    owner = {"pid": os.getpid(), "create_time": 0.0}
    return registry.SessionRecord(id="0" * 32, owner=owner, scheduler_address=None, dashboard_link=None, mode="cpu", n_workers=1, options={}).to_dict()


def gateway_report():
    """The public fields of dask-gateway's ClusterReport that the model reads."""
    status = types.SimpleNamespace(name="RUNNING")
    return types.SimpleNamespace(name="abc", status=status, dashboard_link=None, start_time=datetime.datetime(2026, 1, 1))


def produced() -> dict[str, set[str]]:
    det = detection_module()
    return {
        "IEnvironmentModel": set(models.environment_model(kit.detect().to_dict())),
        "IGPUInfo": {f.name for f in dataclasses.fields(det.GPUInfo)},
        "ILibraryInfo": {f.name for f in dataclasses.fields(det.LibraryInfo)},
        "IGPUSample": set(det.sample_gpus().to_dict()),
        "IMemoryTotals": set(models.memory_totals({"workers": []})),
        "ISessionModel": set(models.session_model(record(), None, in_server=False, proxy=False)),
        "ISessionsReply": set(models.sessions_reply([], {}, set(), proxy=False)),
        "IGatewayClusterModel": set(models.gateway_cluster_model(gateway_report(), 1)),
        "IGatewayClustersReply": set(models.gateway_clusters_reply(None, [], None)),
    }


@pytest.mark.parametrize("name", sorted(produced()))
def test_interface_mirrors_its_python_model(name):
    declared = interfaces()
    assert name in declared, f"labextension/src/models.ts has no interface {name}"
    required, optional = declared[name]
    sent = produced()[name]
    assert not required - sent, f"{name}: declared but not sent: {sorted(required - sent)}"
    assert not sent - required - optional, f"{name}: sent but not declared: {sorted(sent - required - optional)}"


def test_gpu_use_mirrors_an_item_of_a_gpu_sample(monkeypatch):
    det = detection_module()
    install(monkeypatch, FakeNVML(gpus=1))  # hardware this machine lacks
    try:
        (item,) = det.sample_gpus().to_dict()["gpus"]
    finally:
        det._reset_nvml_for_tests()  # later tests see the real NVML (or its absence) again
    required, optional = interfaces()["IGPUUse"]
    assert required <= set(item) <= required | optional


def test_every_interface_is_checked():
    assert set(interfaces()) == set(produced()) | {"IGPUUse"}
