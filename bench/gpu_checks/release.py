"""RMM's async allocator with the kit's release threshold (10% of the GPU): freed memory above it goes back."""

import subprocess
import time

from distributed import wait

import gpu_dask_kit as kit
from gpu_dask_kit.compute import random_array


def smi():
    return subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    with kit.start_cluster(device="gpu", verbose=False) as s:
        print("idle:", smi())
        x = random_array((200_000, 10_000), chunks=(10_000, 10_000), seed=1).persist()
        wait(x)  # 16 GB
        print("16 GB persisted:", smi(), "| kit device_data MiB", [w.device_data >> 20 for w in s.memory().workers])
        del x
        s.client.run(lambda: __import__("cupy").cuda.runtime.deviceSynchronize())
        time.sleep(2)
        print("freed + synchronised:", smi(), "(threshold 10% of 80 GiB = 8 GiB kept at most)")
        y = random_array((20_000, 10_000), chunks=(10_000, 10_000), seed=2).sum().compute()
        time.sleep(1)
        print("after a small computation:", smi())
