"""Run dask-cuda's two worker paths up to the functions both end in, and record what they would set up.

``LocalCUDACluster(**kwargs)`` and ``dask cuda worker ARGS`` (parsed by dask-cuda's own click CLI) both
build each worker from ``dask_cuda.worker_common.worker_plugins(...)`` (the ``RMMSetup`` / ``CUDFSetup``
plugins) and ``worker_data_function(...)`` (the ``DeviceHostFile`` spill store and its device limit)
(dask-cuda 26.10: ``local_cuda_cluster.py`` ``new_worker_spec``, ``cuda_worker.py`` ``CUDAWorker.__init__``).
Both are replaced here by recorders that build dask-cuda's own ``RMMSetup`` (so its own refusals, such
as "rmm_managed_memory is incompatible with the rmm_async", are raised) and resolve every size the way
``RMMSetup.setup`` and the data function do, on the GPUs NVML reports (the simulated ones). Nothing
starts: no scheduler, nanny or worker, no CUDA context.
"""

from __future__ import annotations

import importlib.machinery
import runpy
import shlex
import sys
import types
import warnings
from typing import Any

import pytest


class Reached(Exception):
    """The CLI path got to ``worker_plugins``: stop before any Nanny is made."""


def _resolve(kw: dict[str, Any], data_function: Any) -> dict[str, Any]:
    from dask_cuda.plugins import CUDFSetup, RMMSetup
    from dask_cuda.utils import parse_device_bytes

    rmm = RMMSetup(  # dask-cuda's own checks of the combination
        initial_pool_size=kw["rmm_initial_pool_size"],
        maximum_pool_size=kw["rmm_maximum_pool_size"],
        managed_memory=kw["rmm_managed_memory"],
        async_alloc=kw["rmm_async_alloc"],
        release_threshold=kw["rmm_release_threshold"],
        log_directory=kw["rmm_log_directory"],
        track_allocations=kw["rmm_track_allocations"],
        external_lib_list=kw["rmm_allocator_external_lib_list"],
    )
    cudf = CUDFSetup(spill=kw["enable_cudf_spill"], spill_stats=kw["cudf_spill_stats"])
    data = data_function(kw["device_index"])
    store = None if not data else (data[0].__name__, data[1]["device_memory_limit"])
    return {
        "device_index": kw["device_index"],
        # as RMMSetup.setup resolves them in the worker (device_index left at its default, as there)
        "initial_pool_size": parse_device_bytes(rmm.initial_pool_size, alignment_size=256),
        "maximum_pool_size": parse_device_bytes(rmm.maximum_pool_size, alignment_size=256),
        "managed_memory": bool(rmm.managed_memory),
        "async_alloc": bool(rmm.async_alloc),
        "release_threshold": parse_device_bytes(rmm.release_threshold, alignment_size=256),
        "external_lib_list": list(rmm.external_lib_list or []),
        "cudf_spill": bool(cudf.spill),
        "cudf_spill_stats": int(cudf.spill_stats or 0),
        "store": store,  # (store class, device limit in bytes) or None: no device spilling
    }


def _recorders(monkeypatch: pytest.MonkeyPatch, module: Any, seen: list[dict[str, Any]], stop: bool) -> None:
    if "rmm" not in sys.modules:  # both paths only check that it imports before an RMM setting (not installed here)
        stub = types.ModuleType("rmm")
        stub.__spec__ = importlib.machinery.ModuleSpec("rmm", None)
        monkeypatch.setitem(sys.modules, "rmm", stub)
    real_data = module.worker_data_function
    made: list[Any] = []

    def data_function(**kw: Any) -> Any:
        made.append(real_data(**kw))
        return made[-1]

    def plugins(**kw: Any) -> Any:
        seen.append(_resolve(kw, made[-1]))
        if stop:
            raise Reached
        return set()

    monkeypatch.setattr(module, "worker_data_function", data_function)
    monkeypatch.setattr(module, "worker_plugins", plugins)


def local_path(monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``LocalCUDACluster(**kwargs)`` would give each worker; its scheduler is never started."""
    import dask_cuda.local_cuda_cluster as lcc
    from distributed import LocalCluster

    seen: list[dict[str, Any]] = []
    with monkeypatch.context() as m:
        _recorders(m, lcc, seen, stop=False)

        def no_scheduler(self: Any, *args: Any, **kw: Any) -> None:
            self.new_spec, self.worker_spec = {"options": {}}, {}

        def scale(self: Any, n: int) -> None:
            for _ in range(n):
                self.worker_spec.update(self.new_worker_spec())

        m.setattr(LocalCluster, "__init__", no_scheduler)
        m.setattr(lcc.LocalCUDACluster, "scale", scale)
        m.setattr(lcc.LocalCUDACluster, "sync", lambda self, *a, **k: None)
        m.setattr(lcc.LocalCUDACluster, "__del__", lambda self: None, raising=False)
        lcc.LocalCUDACluster(**kwargs)
    return seen


def job_command(script: str) -> list[str]:
    """The worker command line of a dask-jobqueue job script, split as the shell would."""
    lines = [line for line in script.splitlines() if " -m " in line]
    assert len(lines) == 1, script
    return shlex.split(lines[0])


def cli_path(monkeypatch: pytest.MonkeyPatch, argv: list[str], visible: str) -> list[dict[str, Any]]:
    """What the job's command ``argv`` (``PYTHON -m MODULE ...``) would give each worker when SLURM set
    ``CUDA_VISIBLE_DEVICES=visible``: the module runs in this process until dask-cuda's ``CUDAWorker``
    reaches ``worker_plugins`` for each of its GPUs."""
    import dask_cuda.cuda_worker as cw

    assert argv[1] == "-m", argv
    seen: list[dict[str, Any]] = []
    with monkeypatch.context() as m:
        m.setenv("CUDA_VISIBLE_DEVICES", visible)
        m.setattr(sys, "argv", [argv[2], *argv[3:]])
        for index in range(len(visible.split(","))):
            _recorders(m, cw, seen, stop=True)
            m.setattr(cw, "cuda_visible_devices", _rotated(visible, index))
            try:
                with warnings.catch_warnings():  # dask's CLI re-registers its entry points on each run
                    warnings.filterwarnings("ignore", "While registering the command", UserWarning)
                    runpy.run_module(argv[2], run_name="__main__", alter_sys=False)
            except Reached:
                continue
            raise AssertionError(f"{argv} never reached dask-cuda's worker_plugins")
    return seen


def _rotated(visible: str, index: int) -> Any:
    """dask-cuda's ``cuda_visible_devices`` seen from the ``index``-th worker (its loop makes one per GPU;
    the recorder stops at the first, so each worker is reached in a run of its own)."""
    from dask_cuda.utils import cuda_visible_devices

    return lambda i, devices=None: cuda_visible_devices(i + index, devices if devices is not None else visible.split(","))
