"""Scale check: N single-threaded CPU workers as N SLURM jobs on this machine; time until all are connected,
time to close, and what is left. `python -m tests.slurm.scale_check [N]` prints the figures as JSON
(docs/scaling.md holds them); test_slurm_scale.py runs it and checks the counts, never the times."""

from __future__ import annotations

import json
import sys
import tempfile
import time

from distributed import Client

from gpu_dask_kit.deploy.slurm import close_slurm, job_ids, squeue_jobs, start_slurm

from .conftest import job_processes, slurm_options, wait_until


def run_scale(n: int = 16) -> dict:
    said: list[str] = []
    t0 = time.perf_counter()
    cluster, plan = start_slurm(
        slurm_options(n_workers=n, threads_per_worker=1, job_cores=1, job_memory="300MiB", start_timeout=600),
        "cpu",
        on_wait=said.append,
        log_directory=tempfile.mkdtemp(prefix="gdk-scale-"),
    )
    connected = time.perf_counter() - t0
    try:
        jobs = len(job_ids(cluster))
        with Client(cluster) as client:
            workers = len(client.scheduler_info()["workers"])
            t1 = time.perf_counter()
            total = sum(client.gather(client.map(lambda i: i * i, range(10 * n))))
            compute = time.perf_counter() - t1
    finally:
        t2 = time.perf_counter()
        close_slurm(cluster)
        closed = time.perf_counter() - t2
    queued = len(squeue_jobs(plan.job_name))
    wait_until(lambda: not job_processes(plan.job_name), 30)
    return {
        "workers_requested": n,
        "workers_connected": workers,
        "jobs_submitted": jobs,
        "seconds_to_all_connected": round(connected, 1),
        "seconds_for_10n_tiny_tasks": round(compute, 2),
        "result_ok": total == sum(i * i for i in range(10 * n)),
        "seconds_to_close": round(closed, 1),
        "jobs_left_in_squeue": queued,
        "processes_left": len(job_processes(plan.job_name)),
        "pending_messages": said,
    }


if __name__ == "__main__":
    print(json.dumps(run_scale(int(sys.argv[1]) if len(sys.argv) > 1 else 16), indent=1))
