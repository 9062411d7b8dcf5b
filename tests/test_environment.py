import json
import subprocess
import sys

import pytest

from gpu_dask_kit import environment
from gpu_dask_kit.environment import LibraryInfo, Reason, choose_mode, detect, sample_gpus

from .fake_nvml import FakeNVML, NVMLError_LibraryNotFound, install


@pytest.fixture(autouse=True)
def forget_nvml():
    environment._reset_nvml_for_tests()
    yield
    environment._reset_nvml_for_tests()


def test_real_machine_report_never_raises_and_explains():
    report = detect()
    data = report.to_dict()
    json.dumps(data)  # JSON-able
    assert data["mode"] in ("gpu", "cpu")
    assert data["reason_text"].endswith(".")
    assert set(data["libraries"]) >= {"dask_cuda", "rmm", "cupy", "cudf", "cuml", "dask", "distributed"}
    if not report.gpus:  # this CI machine: no driver
        assert report.mode == "cpu"
        assert report.reason in (Reason.NO_DRIVER, Reason.NO_DEVICES, Reason.NO_NVML)
        assert sample_gpus().to_dict()["gpus"] == []
        assert sample_gpus().reason


def test_detect_creates_no_cuda_context_and_imports_no_gpu_library():
    code = "import sys, gpu_dask_kit; gpu_dask_kit.detect(); print([m for m in ('cupy', 'cudf', 'rmm', 'cuml', 'numba.cuda', 'torch') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_fake_two_gpus_report(monkeypatch):
    install(monkeypatch, FakeNVML(gpus=2))
    monkeypatch.setattr(environment, "_library", lambda m: LibraryInfo(True, "1.0"))
    report = detect("auto")
    assert report.mode == "gpu" and report.reason == Reason.OK
    assert [g.index for g in report.gpus] == [0, 1]
    assert report.gpus[1].uuid == "GPU-00000001-fake"
    assert report.gpus[0].name == "Fake H100 80GB HBM3"
    assert report.driver_version == "580.65.06" and report.cuda_version == "13.0"
    assert "2 GPU(s)" in report.reason_text


def test_fake_gpus_but_cpu_requested(monkeypatch):
    install(monkeypatch, FakeNVML(gpus=1))
    report = detect("cpu")
    assert report.mode == "cpu" and report.reason == Reason.DISABLED


def test_driver_missing_is_a_reason_not_an_error(monkeypatch):
    install(monkeypatch, FakeNVML(fail_init=NVMLError_LibraryNotFound("libnvidia-ml.so.1 not found")))
    report = detect()
    assert report.mode == "cpu" and report.reason == Reason.NO_DRIVER
    assert "no NVIDIA driver" in report.reason_text
    sample = sample_gpus()
    assert sample.gpus == () and "no NVIDIA driver" in sample.reason


def test_zero_devices(monkeypatch):
    install(monkeypatch, FakeNVML(gpus=0))
    assert detect().reason == Reason.NO_DEVICES
    assert sample_gpus().reason == "the NVIDIA driver is loaded but reports no GPU."


def test_sample_gpus_with_fake_nvml(monkeypatch):
    install(monkeypatch, FakeNVML(gpus=2, total=80 * 2**30, used=3 * 2**30))
    sample = sample_gpus().to_dict()
    assert sample["reason"] is None
    assert [(g["index"], g["memory_used"], g["utilization"]) for g in sample["gpus"]] == [(0, 3 * 2**30, 10), (1, 3 * 2**30, 20)]


def test_nvml_initialised_once(monkeypatch):
    fake = install(monkeypatch, FakeNVML(gpus=1))
    for _ in range(5):
        sample_gpus()
    assert fake.init_calls == 1


@pytest.mark.parametrize(
    "libs, reason",
    [
        ({"dask_cuda": LibraryInfo(False, None), "cupy": LibraryInfo(True, "13")}, Reason.NO_DASK_CUDA),
        ({"dask_cuda": LibraryInfo(True, "26.10", False, "ImportError: cuda.core"), "cupy": LibraryInfo(True, "13")}, Reason.NO_DASK_CUDA),
        ({"dask_cuda": LibraryInfo(True, "26.10", True), "cupy": LibraryInfo(False, None)}, Reason.NO_CUPY),
    ],
)
def test_gpu_without_libraries_falls_back_with_instruction(libs, reason):
    mode, got, text = choose_mode("auto", ["gpu0"], libs, None)
    assert (mode, got) == ("cpu", reason)
    assert "gpu-dask-kit[gpu-cu12]" in text


@pytest.mark.parametrize(
    "visible, expected, mode",
    [("1", [1], "gpu"), ("GPU-00000001-fake", [1], "gpu"), ("1,0", [1, 0], "gpu"), ("0,7,1", [0], "gpu"), ("", [], "cpu"), ("7", [], "cpu")],
)
def test_process_cuda_visible_devices_limits_the_gpus(monkeypatch, visible, expected, mode):
    """The process's CUDA_VISIBLE_DEVICES (index or UUID; CUDA stops at the first unknown entry)."""
    install(monkeypatch, FakeNVML(gpus=2))
    monkeypatch.setattr(environment, "_library", lambda m: LibraryInfo(True, "1.0"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    report = detect("auto")
    assert [g.index for _, g in report.visible_gpus] == expected
    assert report.mode == mode and len(report.gpus) == 2
    assert f"CUDA_VISIBLE_DEVICES={visible!r}" in report.reason_text if not expected else f"{len(expected)} of 2 GPUs" in report.reason_text
