"""The kit in ``async`` code: ``await`` the start, the futures and the close.

python examples/async_script.py --device cpu --n-workers 2
"""

import argparse
import asyncio

import dask.array as da

import gpu_dask_kit as kit


async def main(args: argparse.Namespace) -> int:
    async with kit.start_cluster_from_args(args, asynchronous=True) as session:  # session.client is asynchronous
        squares = session.client.map(lambda i: i * i, range(10))
        total = await session.client.submit(sum, squares)
        array_sum = await session.client.compute(da.arange(1_000, chunks=100).sum())
        print(f"mode={session.mode} workers={session.n_workers} sum of squares={total} array sum={int(array_sum)}")
        return int(total)


if __name__ == "__main__":  # distributed starts workers with spawn: the guard is required
    asyncio.run(main(kit.add_cluster_args(argparse.ArgumentParser(description=__doc__)).parse_args()))
