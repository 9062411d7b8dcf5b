"""The kit's GPU memory figures next to nvidia-smi, with an RMM pool, RMM's async allocator and the default."""

import json
import subprocess
import time

import dask.array as da
from distributed import wait

import gpu_dask_kit as kit
from gpu_dask_kit.compute import random_array
from gpu_dask_kit.environment import sample_gpus

FIELDS = ("device_data", "device_memory_limit", "rmm_used", "rmm_pool_size", "gpu_total_in_use", "device_memory_total", "spilled_to_host", "host_memory_used")
MiB = 2**20


def smi():
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,memory.used,memory.total", "--format=csv,noheader,nounits"], capture_output=True, text=True
    ).stdout.strip()
    return out


def show(tag, session):
    t = time.monotonic()
    m = session.memory()
    for w in m.workers:
        d = {k: (None if getattr(w, k) is None else round(getattr(w, k) / MiB, 1)) for k in FIELDS}
        print(f"{tag:28s} kit MiB {json.dumps(d)} | nvidia-smi (idx, used MiB, total MiB): {smi()} | read {time.monotonic() - t:.2f}s", flush=True)


if __name__ == "__main__":
    print("sample_gpus():", sample_gpus(), "| nvidia-smi:", smi(), flush=True)
    for alloc in (dict(rmm_pool_size="8GiB"), dict(rmm_async=True), dict()):
        print("\n==", alloc or "default options", flush=True)
        t0 = time.monotonic()
        with kit.start_cluster(device="gpu", **alloc) as s:
            print(f"started in {time.monotonic() - t0:.1f}s; scheduler {s.client.scheduler.address}", flush=True)
            print(repr(s), flush=True)
            show("idle", s)
            x = random_array((40_000, 10_000), chunks=(5_000, 10_000), seed=1).persist()  # 3.2 GB float64
            wait(x)
            show("3.2 GB persisted", s)
            y = x[:, :2000].persist()
            wait(y)
            u, sv, v = da.linalg.svd(y)
            print("top singular values", sv[:3].compute(), flush=True)
            show("after SVD", s)
            del x, y, u, sv, v
            time.sleep(3)
            show("data released", s)
        print("after close nvidia-smi:", smi(), flush=True)
