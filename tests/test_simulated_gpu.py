"""The simulated-GPU tier: the REAL dask-cuda LocalCUDACluster, its worker plugins,
DeviceHostFile, `dask cuda worker` and distributed's GPU diagnostics, on NVML stand-in GPUs that every
process of the cluster loads (tests/simgpu/README.md). One test per GPU defect found on it: test_simulated_gpu_defects.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time

import psutil
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit.errors import OptionError

from .conftest import kit_children
from .helpers import wait_for_scheduler_file
from .reliability.kernels import end, tree
from .simgpu import simnvml
from .simgpu.fixtures import child_env

pytestmark = pytest.mark.simgpu

GiB = 2**30
BIN = os.path.dirname(sys.executable)


def _on_worker_env(dask_worker):
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def _device_buffer_limit(dask_worker):
    """The device limit of the worker's data store, read on the worker (dask-cuda's DeviceHostFile)."""
    data = dask_worker.data
    return type(data).__name__, getattr(getattr(data, "device_buffer", None), "n", None)


def test_the_stand_in_answers_like_nvml_in_this_process_and_in_children(sim_gpus):
    import pynvml

    config = sim_gpus(3, total=16 * GiB, used=2 * GiB, affinity=[0])
    pynvml.nvmlInit()
    assert pynvml.nvmlDeviceGetCount() == 3
    handle = pynvml.nvmlDeviceGetHandleByIndex(2)
    assert pynvml.nvmlDeviceGetMemoryInfo(handle).free == 14 * GiB
    assert pynvml.nvmlDeviceGetHandleByUUID(pynvml.nvmlDeviceGetUUID(handle).encode()).gpu["index"] == 2
    with pytest.raises(pynvml.NVMLError_InvalidArgument):
        pynvml.nvmlDeviceGetHandleByIndex(3)
    with pytest.raises(pynvml.NVMLError_NotSupported):  # anything not simulated answers as NVML does
        pynvml.nvmlDeviceGetPowerUsage(handle)
    from dask_cuda.utils import get_cpu_affinity, get_device_total_memory, get_gpu_count

    assert (get_gpu_count(), get_device_total_memory(1), get_cpu_affinity(0)) == (3, 16 * GiB, [0])
    code = "import pynvml; pynvml.nvmlInit(); print(pynvml.nvmlDeviceGetCount(), pynvml.nvmlSystemGetDriverVersion())"
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["3", config.get("driver", simnvml.DEFAULTS["driver"])], out.stderr


def test_start_cluster_on_two_simulated_gpus_is_a_gpu_session_with_one_worker_per_gpu(sim_gpus, no_leaks):
    config = sim_gpus(2, total=16 * GiB, used=GiB)
    with kit.start_cluster(device_memory_limit="4GiB", memory_limit="1GiB", verbose=False) as session:
        assert session.mode == "gpu"
        assert type(session.cluster).__name__ == "LocalCUDACluster"
        assert session.n_workers == 2
        assert sorted(session.client.run(_on_worker_env).values()) == ["0,1", "1,0"]
        # device_memory_limit reached every worker's device buffer (dask-cuda's DeviceHostFile), read on the worker
        assert set(session.client.run(_device_buffer_limit).values()) == {("DeviceHostFile", 4 * GiB)}
        memory = session.memory()
        assert memory.mode == "gpu" and len(memory.workers) == 2
        for worker in memory.workers:
            assert worker.device_memory_limit == 4 * GiB, worker
            assert worker.device_memory_total == 16 * GiB and worker.gpu_total_in_use == GiB, worker
        assert sorted(w.device_index for w in memory.workers) == [0, 1]
        # dask-cuda's "create a CUDA context" step ran on each worker, on that worker's own GPU
        pids = {w.device_index: w.pid for w in memory.workers}
        for gpu in simnvml._gpus(config):
            assert simnvml.contexts(gpu["uuid"]) == [pids[gpu["index"]]]
        assert os.getpid() not in simnvml.contexts()  # the notebook process has none
        worker_pids = [w.pid for w in memory.workers]
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in worker_pids)


def test_doctor_describes_the_simulated_gpus(sim_gpus):
    sim_gpus(2, name="Simulated A100-SXM4-40GB", total=40 * GiB, used=GiB, driver="570.86.15", cuda=12080)
    out = subprocess.run([os.path.join(BIN, "gpu-dask-kit"), "doctor"], env=child_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Mode for device='auto': GPU" in text
    assert "2 GPU(s) found" in text
    assert "570.86.15" in text and "CUDA (driver): 12.8" in text
    assert text.count("Simulated A100-SXM4-40GB") == 2 and "39.00 GiB free of 40.00 GiB" in text
    assert "GPU-51000000-0000-4000-8000-000000000000" in text and "GPU-51000001-0000-4000-8000-000000000001" in text
    data = json.loads(
        subprocess.run([os.path.join(BIN, "gpu-dask-kit"), "doctor", "--json"], env=child_env(), capture_output=True, text=True, timeout=120, check=True).stdout
    )
    assert data["mode"] == "gpu" and [g["memory_total"] for g in data["gpus"]] == [40 * GiB, 40 * GiB]


def test_impossible_sizes_for_a_16_gib_gpu_are_refused_before_anything_starts(sim_gpus, no_leaks):
    sim_gpus(2, total=16 * GiB)
    cases = [
        (dict(device_memory_limit="32GiB"), "device_memory_limit"),
        (dict(n_workers=3), "n_workers"),
        (dict(CUDA_VISIBLE_DEVICES="5"), "CUDA_VISIBLE_DEVICES"),
        (dict(CUDA_VISIBLE_DEVICES="GPU-00000000-not-here"), "CUDA_VISIBLE_DEVICES"),
    ]
    for options, parameter in cases:
        before = kit_children()
        with pytest.raises(OptionError) as info:
            kit.start_cluster(verbose=False, **options)
        assert info.value.parameter == parameter
        assert kit_children() == before, options  # nothing was started, not even for a moment's cleanup
        assert kit.current_session() is None


@pytest.mark.parametrize("option", [dict(rmm_pool_size="1GiB"), dict(rmm_async=True), dict(rmm_managed_memory=True)])
def test_rmm_options_without_rmm_installed_name_the_gpu_extra(sim_gpus, no_leaks, option):
    pytest.importorskip("cupy")  # the tier reaches GPU mode only with CuPy installed (detection needs it)
    if importlib.util.find_spec("rmm") is not None:
        pytest.skip("rmm is installed here; this checks the message a machine without it gets")
    sim_gpus(2)
    before = kit_children()
    with pytest.raises(OptionError) as info:
        kit.start_cluster(verbose=False, **option)
    assert info.value.parameter == next(iter(option))
    assert "gpu-dask-kit[gpu-cu12]" in str(info.value) and "[gpu-cu13]" in str(info.value)
    assert kit_children() == before


def _start(cmd, log):
    return subprocess.Popen(cmd, env=child_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(procs):
    """Each process with its children (the nannies' workers), found before any is signalled, terminated, then
    killed after 10 s (a `dask cuda worker` once took the whole 30 s of a plain wait to go on SIGTERM)."""
    members = [member for proc in procs for member in tree(proc.pid)]
    for member in members:
        try:
            member.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(members, timeout=10)
    end(alive)
    for proc in procs:
        proc.wait()


@pytest.fixture
def cli_cluster(sim_gpus, tmp_path):
    """`dask scheduler` + `dask cuda worker` (or `dask worker` with kind="plain") started from the command
    line under the stand-in, as on a SLURM or Kubernetes node. Yields a starter; stops both by PID."""
    procs = []

    def start(kind="cuda", gpus=2):
        sim_gpus(gpus)
        scheduler_file = tmp_path / "scheduler.json"
        log = open(tmp_path / "cluster.log", "w")
        procs.append(
            _start(
                [
                    os.path.join(BIN, "dask"),
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--dashboard-address",
                    "127.0.0.1:0",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                log,
            )
        )
        worker = ["cuda", "worker"] if kind == "cuda" else ["worker", "--nworkers", str(gpus)]
        procs.append(
            _start(
                [
                    os.path.join(BIN, "dask"),
                    *worker,
                    "--scheduler-file",
                    str(scheduler_file),
                    "--host",
                    "127.0.0.1",
                    "--memory-limit",
                    "1GiB",
                    "--nthreads",
                    "1",
                    "--death-timeout",
                    "60",
                ],
                log,
            )
        )
        wait_for_scheduler_file(scheduler_file, procs[-2])
        return str(scheduler_file)

    yield start
    _stop(procs[::-1])


def test_connect_mode_against_dask_cuda_worker_started_from_the_command_line(no_leaks, cli_cluster):
    scheduler_file = cli_cluster("cuda")
    with kit.start_cluster(scheduler_file=scheduler_file, connect_timeout=90, verbose=False) as session:
        deadline = time.monotonic() + 60
        while session.n_workers < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert session.n_workers == 2  # `dask cuda worker` starts one worker per (simulated) GPU
        assert sorted(session.client.run(_on_worker_env).values()) == ["0,1", "1,0"]
        assert {kind for kind, _ in session.client.run(_device_buffer_limit).values()} == {"DeviceHostFile"}
        workers = session.memory().workers
        assert sorted(w.device_index for w in workers) == [0, 1]
        assert all(w.device_memory_total == 16 * GiB for w in workers)
        # found on the H100 (2026-11-24): the note was printed twice, in the reason and as a note
        assert session.start_message().count("dask-cudf is not installed") == 1, session.start_message()


def test_gpu_session_scales_one_worker_per_gpu_and_its_views_show_gpu_mode(sim_gpus, no_leaks):
    """GPU-only paths around a running session: scale (at most one worker per GPU), the HTML repr, the
    memory monitor widget's model and the out-of-memory hint read the simulated GPUs."""
    sim_gpus(2, total=16 * GiB, used=GiB)
    from gpu_dask_kit.notebook import hints
    from gpu_dask_kit.notebook.widgets import MemoryMonitor

    with kit.start_cluster(n_workers=1, device_memory_limit="4GiB", memory_limit="1GiB", verbose=False) as session:
        assert session.client.run(_on_worker_env).popitem()[1] == "0,1"
        assert "LocalCUDACluster" in session.summary()
        session.scale(2)
        assert sorted(session.client.run(_on_worker_env).values()) == ["0,1", "1,0"]
        with pytest.raises(OptionError) as info:
            session.scale(3)
        assert info.value.parameter == "n_workers" and session.n_workers == 2
        assert "Spill GPU&rarr;host above" in session._repr_html_()
        monitor = MemoryMonitor(session, interval=60)
        try:
            model = monitor.model
            assert model is not None and model.gpu and model.mode_line is None and model.n_workers == 2
            assert all(row.device is not None for row in model.rows)  # a GPU bar per worker
            assert model.totals["device_memory_limit"] == 8 * GiB
        finally:
            monitor.close()
        hint = hints.explain(MemoryError("Out of memory allocating 40 GiB"), session)
        assert hint and "one GPU of 16.00 GiB" in hint and "4.00 GiB" in hint
