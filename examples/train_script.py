"""A script with the kit's cluster flags: runs on a laptop, a GPU box, or an existing SLURM/K8s cluster.

python examples/train_script.py --device cpu --n-workers 2
python examples/train_script.py --rmm-pool-size 0.5 --device-memory-limit 0.8        # local GPUs
python examples/train_script.py --scheduler-file /shared/scheduler.json              # SLURM
python examples/train_script.py --scheduler-address tcp://dask-scheduler:8786        # Kubernetes
"""

import argparse

import dask.array as da

import gpu_dask_kit as kit
from gpu_dask_kit.compute import random_array


def main(args: argparse.Namespace) -> float:
    with kit.start_cluster_from_args(args) as session:
        x = random_array((args.rows, 100), chunks=(max(1, args.rows // 4), 100), seed=0)
        _u, s, _v = da.linalg.svd(x)
        top = float(s[0].compute())
        print(f"mode={session.mode} workers={session.n_workers} largest singular value={top:.4f}")
        return top


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=20_000, help="rows of the random matrix")
    return kit.add_cluster_args(p)


if __name__ == "__main__":  # distributed starts workers with spawn: the guard is required
    main(parser().parse_args())
