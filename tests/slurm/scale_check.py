"""Scale check: N single-threaded CPU workers as N SLURM jobs on this machine; time until all are connected,
time to close, and what is left, through `kit.start_cluster(deploy="slurm")`. `python -m tests.slurm.scale_check [N]`
prints the figures as JSON (docs/scaling.md holds them); test_slurm_scale.py runs it and checks the counts, never
the times."""

from __future__ import annotations

import json
import sys
import time

import gpu_dask_kit as kit
from gpu_dask_kit.deploy.slurm import squeue_jobs

from .conftest import job_processes, wait_until


def run_scale(n: int = 16) -> dict:
    t0 = time.perf_counter()
    session = kit.start_cluster(
        deploy="slurm", device="cpu", n_workers=n, threads_per_worker=1, job_cores=1, job_memory="300MiB", walltime="00:15:00", start_timeout=600
    )
    connected = time.perf_counter() - t0
    name = session.record.slurm_job_name
    try:
        jobs = len(squeue_jobs(name))
        recorded = len(session.record.slurm_job_ids)
        workers = session.n_workers
        t1 = time.perf_counter()
        total = sum(session.client.gather(session.client.map(lambda i: i * i, range(10 * n))))
        compute = time.perf_counter() - t1
    finally:
        t2 = time.perf_counter()
        session.close()
        closed = time.perf_counter() - t2

    queued = len(squeue_jobs(name))
    wait_until(lambda: not job_processes(name), 30)
    return {
        "workers_requested": n,
        "workers_connected": workers,
        "jobs_submitted": jobs,
        "job_ids_in_record": recorded,
        "seconds_to_all_connected": round(connected, 1),
        "seconds_for_10n_tiny_tasks": round(compute, 2),
        "result_ok": total == sum(i * i for i in range(10 * n)),
        "seconds_to_close": round(closed, 1),
        "jobs_left_in_squeue": queued,
        "processes_left": len(job_processes(name)),
    }


if __name__ == "__main__":
    print(json.dumps(run_scale(int(sys.argv[1]) if len(sys.argv) > 1 else 16), indent=1))
