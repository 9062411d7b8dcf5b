"""One whole process for bench/bench_process.py: ``python bench/process_child.py kit|hand [auto|cpu]``.

Written as a learner's script is: imports at the top (spawned workers re-import this file, so they pay them
too), the ``__main__`` guard, start 2 CPU workers x 1 thread, a small dask array sum, close. The hand side
does what the kit does by default: TLS with a temporary certificate (``Security.temporary()``).
"""

import sys

import dask.array as da

if sys.argv[1] == "kit":
    import gpu_dask_kit
else:
    from distributed import Client, LocalCluster
    from distributed.security import Security

WORKERS = dict(n_workers=2, threads_per_worker=1, memory_limit="1GiB")


def total() -> int:
    return int(da.arange(1_000_000, chunks=100_000).sum().compute())


if __name__ == "__main__":
    if sys.argv[1] == "kit":
        session = gpu_dask_kit.start_cluster(device=sys.argv[2] if len(sys.argv) > 2 else "auto", **WORKERS)
        print(f"sum={total()}")
        session.close()
    else:
        cluster = LocalCluster(**WORKERS, host="127.0.0.1", dashboard_address="127.0.0.1:0", security=Security.temporary(), protocol="tls://")
        client = Client(cluster)
        print(f"sum={total()}")
        client.close()
        cluster.close()
