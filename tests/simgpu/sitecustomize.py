"""Loaded by every Python process started with tests/simgpu on PYTHONPATH (the simulated-GPU tier's
fixture puts it there): the test process's children, the scheduler, nannies and workers of
LocalCUDACluster, and `dask scheduler` / `dask cuda worker` started from the command line.

It installs the NVML stand-in when GPU_DASK_KIT_SIM_GPUS is set, and does nothing otherwise.
"""

import os
import sys

if os.environ.get("GPU_DASK_KIT_SIM_GPUS"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import simnvml

        simnvml.install_from_env()
    finally:
        sys.path.pop(0)
