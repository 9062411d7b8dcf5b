"""What a SLURM/PBS/SGE/LSF GPU job runs (python -m gpu_dask_kit.deploy.cuda_worker ...), on a real GPU,
against a plain `dask scheduler`; then the kit attaches to that scheduler."""

import subprocess
import sys
import time

import gpu_dask_kit as kit
from gpu_dask_kit.allocator import cupy_allocator_name, rmm_resource_name
from gpu_dask_kit.compute import random_array
from gpu_dask_kit.deploy.slurm_plan import cuda_worker_args
from gpu_dask_kit.environment import detect
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

if __name__ == "__main__":
    for i, opts in enumerate((dict(rmm_pool_size=0.25), dict(), dict(rmm_pool_size=2.0))):
        plan = make_plan(ClusterOptions(device="gpu", **opts), detect("gpu"))
        args = cuda_worker_args(plan.spec)
        port = 8790 + i
        addr = f"tcp://127.0.0.1:{port}"
        print(f"\n== {opts or 'defaults'}: worker args {args}", flush=True)
        sched = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], stderr=subprocess.DEVNULL
        )
        time.sleep(3)
        worker = subprocess.Popen([sys.executable, "-m", "gpu_dask_kit.deploy.cuda_worker", addr, *args], stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(8)
            if worker.poll() is not None:
                print("worker exited", worker.returncode, worker.stderr.read()[-1500:], flush=True)
                continue
            with kit.start_cluster(scheduler_address=addr, verbose=True) as s:
                print(repr(s), "mode", s.mode, flush=True)
                print("rmm", s.client.run(rmm_resource_name), "cupy", s.client.run(cupy_allocator_name), flush=True)
                x = random_array((20_000, 5_000), chunks=(5_000, 5_000), seed=3).persist()
                print("sum", float(x.sum().compute()), flush=True)
                for w in s.memory().workers:
                    print(
                        "memory",
                        {k: getattr(w, k) for k in ("device_data", "device_memory_limit", "rmm_pool_size", "rmm_used", "gpu_total_in_use")},
                        flush=True,
                    )
                del x
        finally:
            for p in (worker, sched):
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
