"""The benchmarks' code paths (``python -m bench --quick``) and the structure of what they write.

Nothing here asserts a timing: the quick run uses tiny sizes and one repetition, and the checks are about
keys, markdown tables, min <= median <= max, positive numbers and no leftover processes. The GPU code paths
cannot run without a GPU: they are compiled, their pure parts (set-up sizes, peak table, rates) are checked
with a fake report, and the CPU run shows they are left out when detect() reports no GPU.
"""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_MODULES = sorted((ROOT / "bench").glob("*.py"))
NAMES = ["start_close", "process", "secure", "monitor", "workloads", "overheads", "scaling", "notebooks"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One ``python -m bench --quick`` into a temporary folder (every benchmark, tiny sizes): ~1 min on 2 cores."""
    out = tmp_path_factory.mktemp("bench-out")
    env = {**os.environ, "GPU_DASK_KIT_RUNTIME_DIR": str(tmp_path_factory.mktemp("runtime"))}
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    jsons = [p for p in out.glob("*.json")]
    assert len(jsons) == 1, f"expected one combined JSON, got {jsons}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc, out, json.loads(jsons[0].read_text())


def _stats_dicts(value, path="result"):
    """Every {"min", "median", "max", "n"} dict inside ``value``, with where it was found."""
    if isinstance(value, dict):
        if {"min", "median", "max", "n"} <= set(value):
            yield path, value
        for key, item in value.items():
            yield from _stats_dicts(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _stats_dicts(item, f"{path}[{i}]")


def test_every_bench_module_compiles_including_the_gpu_paths():
    for path in BENCH_MODULES:
        py_compile.compile(str(path), doraise=True)


@pytest.mark.slow
def test_quick_run_writes_one_combined_json_with_every_benchmark(quick_run):
    proc, out, data = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert data["quick"] is True and not data["failed"]
    assert set(data["benchmarks"]) == set(NAMES)
    assert data["machine"]["slug"] and data["versions"]["dask"]
    assert Path(out, f"{data['date'][:10]}-{data['machine']['slug']}.json").exists()
    for name, result in data["benchmarks"].items():
        for key in ("date", "command", "duration_s", "machine", "versions", "leftover_processes"):
            assert key in result, (name, key)
        assert result["benchmark"] == name and result["quick"] is True
        assert result["command"].startswith(f"python -m bench.bench_{name}") and "--quick" in result["command"]
        assert result["leftover_processes"] == [], f"{name} left processes that had to be ended"


@pytest.mark.slow
def test_every_statistic_is_ordered_and_positive(quick_run):
    _, _, data = quick_run
    found = list(_stats_dicts(data["benchmarks"]))
    assert len(found) > 20
    for path, s in found:
        assert s["n"] >= 1, path
        assert 0 < s["min"] <= s["median"] <= s["max"], (path, s)


@pytest.mark.slow
def test_each_benchmark_reports_its_comparisons(quick_run):
    b = quick_run[2]["benchmarks"]
    gpu = b["start_close"]["machine"]["mode"] == "gpu"

    sc = b["start_close"]
    assert {"raw_cpu", "kit_cpu"} <= set(sc["summary"]) and sc["ratio_median"]["cpu"]["start_plus_close"] > 0
    assert ("raw_gpu" in sc["summary"]) == gpu and (sc["gpu_skipped"] is None) == gpu  # GPU variant only with a GPU

    pr = b["process"]
    assert set(pr["summary"]) == {"kit", "hand"} and pr["pairs"] == 1 and pr["device"] == "auto"
    assert all(pr["ratio"][k]["of_medians"] > 0 for k in ("wall", "cpu")) and pr["summary"]["kit"]["cpu"]["min"] > 0

    assert b["monitor"]["on"]["n"] == b["monitor"]["off"]["n"] == 1

    wl = b["workloads"]
    assert wl["devices"] == (["gpu", "cpu"] if gpu else ["cpu"])
    cpu_steps = wl["steps"]["cpu"]
    for step in (
        "svd.generate",
        "svd.svd",
        "dataframe.groupby",
        "dataframe.sort_rolling",
        "regressions.fits",
        "persist_compute.from_persisted",
        "persist_compute.to_client",
    ):
        assert step in cpu_steps, step
    assert cpu_steps["svd.svd"]["gflops"] > 0 and cpu_steps["dataframe.groupby"]["gbps"] > 0
    assert cpu_steps["regressions.fits"]["check_y_on_x0_x1"] is True
    assert all(k in wl["work"] for k in cpu_steps)
    assert not any("of_fp64_peak" in s or "of_bandwidth_peak" in s for s in cpu_steps.values())  # CPU: plain rates

    ov = b["overheads"]
    assert set(ov["summary"]) == {"off", "monitor", "sampler"} and set(ov["overhead"]) == {"monitor", "sampler"}
    assert ov["defaults"] == {"monitor_interval_s": 1.0, "sampler_interval_s": 1.0}
    assert ov["counts"]["monitor_refreshes"][0] >= 1

    sc = b["scaling"]
    assert set(sc["summary"]["svd"]) == {"1", "2"} and sc["speedup"]["svd"]["1"] == 1.0
    assert sc["reference_not_measured"]["seconds"] == {"1": 50.6, "2": 26.3, "8": 15.0}

    nb = b["notebooks"]
    assert nb["notebooks"] == ["00_start_here"] and nb["scales"] == ["small"]
    assert set(nb["summary"]["small"]["00_start_here"]) == {"seconds", "passed", "errors", "not_run"}


@pytest.mark.slow
def test_markdown_tables_and_results_md(quick_run):
    _, out, data = quick_run
    slug = data["machine"]["slug"]
    for name in NAMES:
        md = Path(out, f"{data['date'][:10]}-{slug}-{name}.md").read_text()
        assert md.startswith("### ") and "--quick" in md and "|---|" in md, name
        assert "min / median / max" in md or "| min | median | max |" in md, name
    results = Path(out, "RESULTS.md").read_text()
    assert f"## Machine `{slug}`" in results and "python -m bench --quick" in results
    assert results.count("\n### ") == len(NAMES)
    assert "Reference data, not measured by us" in results


def test_results_md_takes_the_newest_file_per_machine_and_benchmark(tmp_path):
    from bench.__main__ import regenerate_results_md

    (tmp_path / "2026-01-01-cpu2-workloads.md").write_text("### old\n")
    (tmp_path / "2026-02-01-cpu2-workloads.md").write_text("### new\n")
    (tmp_path / "2026-01-15-nvidia-h100-80gb-hbm3-start_close.md").write_text("### h100\n")
    (tmp_path / "2026-01-15-cpu2-start_close.json").write_text("{}")  # an older per-benchmark file: ignored
    text = regenerate_results_md(str(tmp_path))
    assert "### new" in text and "### old" not in text and "### h100" in text
    assert "## Machine `cpu2`" in text and "## Machine `nvidia-h100-80gb-hbm3`" in text
    assert (tmp_path / "RESULTS.md").read_text() == text


def test_gpu_set_up_and_peak_fractions_with_a_fake_report():
    from types import SimpleNamespace

    from bench import bench_scaling, bench_start_close, bench_workloads, peaks
    from gpu_dask_kit import ClusterOptions
    from gpu_dask_kit.deploy.local import cluster_kwargs
    from gpu_dask_kit.environment import EnvironmentReport, GPUInfo, LibraryInfo, Reason
    from gpu_dask_kit.plan import make_plan

    h100 = GPUInfo(0, "NVIDIA H100 80GB HBM3", "GPU-0", 80 * 2**30, 79 * 2**30)
    cfg = bench_start_close.gpu_config(SimpleNamespace(gpus=(h100,)))
    assert cfg == {"n_workers": 1, "visible": "0", "pool": 16 * 2**30, "device_memory_limit": int(0.8 * 80 * 2**30)}
    assert callable(bench_start_close.raw_gpu_once) and callable(bench_start_close.kit_gpu_once)
    # The kit side of the GPU comparison asks for what the raw side builds by hand.
    libs = {"dask_cuda": LibraryInfo(True, "26.10", True), "rmm": LibraryInfo(True, "26.10"), "cupy": LibraryInfo(True, "13.6")}
    report = EnvironmentReport("gpu", Reason.OK, "GPU mode", (h100,), "580", "13.0", libs, cpu_count=16)
    options = ClusterOptions.from_config(
        device="gpu",
        n_workers=1,
        threads_per_worker=1,
        memory_limit=bench_start_close.GPU_HOST_MEMORY,
        rmm_pool_size=cfg["pool"],
        device_memory_limit=cfg["device_memory_limit"],
    )
    kit = cluster_kwargs(make_plan(options, report), options)
    assert (kit["n_workers"], kit["CUDA_VISIBLE_DEVICES"], kit["rmm_pool_size"], kit["device_memory_limit"], kit["memory_limit"]) == (
        1,
        "0",
        cfg["pool"],
        cfg["device_memory_limit"],
        4 * 2**30,
    )
    assert kit["rmm_allocator_external_lib_list"] == ["cupy"] and kit["host"] == "127.0.0.1"

    p = peaks.lookup(h100.name)
    assert p["label"] == "H100 SXM" and peaks.lookup("NVIDIA H200")["mem_gbps"] == 4800
    assert peaks.lookup("NVIDIA A100-SXM4-80GB")["label"] == "A100 SXM 80GB" and peaks.lookup("Some CPU") is None
    flops = 6 * 100_000 * 1000**2 + 20 * 1000**3
    r = bench_workloads.rates("svd.svd", 1.0, {"flops": flops}, p, 1)
    assert r["gflops"] == pytest.approx(flops / 1e9) and r["of_fp64_peak"] == pytest.approx(flops / 67e12)
    r = bench_workloads.rates("persist_compute.from_persisted", 0.5, {"bytes": 1.6e9}, p, 1)
    assert r["of_bandwidth_peak"] == pytest.approx(3.2e9 / 3350e9)
    assert "of_bandwidth_peak" not in bench_workloads.rates("persist_compute.to_client", 1.0, {"bytes": 1e9}, p, 1)
    assert bench_workloads.rates("svd.svd", 1.0, {"flops": flops}, None, 1).keys() == {"gflops"}
    assert bench_scaling.amdahl(2.0)["predicted_8"] == pytest.approx(8.0)


def test_gpu_workloads_are_refused_without_a_gpu():
    from gpu_dask_kit import detect

    if detect().mode == "gpu":
        pytest.skip("this machine has a usable GPU")
    from bench import bench_workloads, common

    args = common.parser_for(bench_workloads).parse_args(["--quick", "--devices", "gpu"])
    with pytest.raises(SystemExit, match="no usable GPU"):
        bench_workloads.run(args)


def test_a_later_run_the_same_day_adds_to_the_combined_file(tmp_path):
    from bench.__main__ import _load_combined

    path = tmp_path / "2026-01-01-cpu2.json"
    path.write_text(json.dumps({"quick": False, "benchmarks": {"monitor": {}}, "failed": {}, "runs": [{"command": "python -m bench"}]}))
    assert set(_load_combined(str(path), quick=False)["benchmarks"]) == {"monitor"}
    assert _load_combined(str(path), quick=True) == {"benchmarks": {}, "failed": {}, "runs": []}  # never mixes quick and real
    assert _load_combined(str(tmp_path / "missing.json"), quick=False)["runs"] == []


def test_results_md_includes_the_test_tiers_times(tmp_path):
    """The test tiers' times (written by hand, no module runs the suite) are shown after the benchmarks."""
    from bench.__main__ import regenerate_results_md

    (tmp_path / "2026-01-01-cpu2-tests.md").write_text("### tiers\n")
    (tmp_path / "2026-01-01-cpu2-process.md").write_text("### process\n")
    (tmp_path / "2026-01-01-cpu2-unknown.md").write_text("### not a benchmark\n")
    text = regenerate_results_md(str(tmp_path))
    assert text.index("### process") < text.index("### tiers") and "not a benchmark" not in text
