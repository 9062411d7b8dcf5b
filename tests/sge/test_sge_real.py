"""Real Son of Grid Engine (one node, .ci/sge/start) through ``kit.start_cluster(deploy="sge")``: start ->
compute -> scale -> close, the GPU request checked by SGE's own ``qsub -w v`` against the host's consumable
``gpu`` complex, bad input before any submit. Every test checks qstat and the jobs' processes afterwards."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import dask.array as da
import dask.config
import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import registry
from gpu_dask_kit.deploy.slurm import session_jobs
from gpu_dask_kit.errors import ClusterStartError, OptionError

from .conftest import job_processes, my_jobs

pytestmark = pytest.mark.sge

SMALL = dict(device="cpu", memory_limit="400MiB", threads_per_worker=1, start_timeout=120)


def venue(queue: str, **more) -> dict:
    return {"gpu-dask-kit.partition": queue, "gpu-dask-kit.walltime": "00:15:00", **more}


def test_start_compute_scale_close_leaves_nothing(sge_clean, sge, capsys):
    began = time.monotonic()
    with dask.config.set(venue(sge)):
        session = kit.start_cluster(deploy="sge", n_workers=2, **SMALL)
    to_workers = time.monotonic() - began
    name = session.record.slurm_job_name
    sge_clean.append(name)
    try:
        out = capsys.readouterr().out
        assert "Its workers are SGE jobs (dask worker) on queue 'all.q'" in out
        ids = [j for j, _, _ in session_jobs(name, "sge")]
        assert len(ids) == 2 and set(ids) <= set(my_jobs())
        assert registry.get_session(session.id).slurm_job_ids == sorted(ids, key=int)
        x = da.arange(1_000_000, chunks=100_000)
        assert session.client.compute(x.sum()).result() == 999_999 * 1_000_000 // 2
        assert len(job_processes(name)) >= 2  # nanny + worker per job, really under sge_execd
        assert session.scale(3, timeout=120)
        assert session.scale(1, timeout=120)
    finally:
        began = time.monotonic()
        session.close()
        closed = time.monotonic() - began
    assert not session_jobs(name, "sge", tuple(ids))
    print(f"SGE: 2 workers in {to_workers:.1f} s, close {closed:.1f} s")


def test_gpu_request_beyond_the_hosts_gpus_is_refused_by_sge_before_any_submit(sge_clean, sge):
    before = set(my_jobs())
    with dask.config.set(venue(sge, **{"gpu-dask-kit.gpus-per-job": 3})), pytest.raises(ClusterStartError) as info:
        kit.start_cluster(deploy="sge", device="gpu")
    assert set(my_jobs()) == before and kit.current_session() is None
    message = str(info.value)
    assert "SGE refuses the worker job" in message and "gpu=2" in message and "Nothing was submitted" in message  # SGE's own words


def test_gpu_jobs_are_scheduled_on_the_gpu_complex_and_all_cancelled_when_no_worker_comes(sge_clean, sge):
    """Two one-GPU jobs fit the host's gpu=2: SGE runs them; their dask-cuda workers cannot start without a
    GPU, so the start fails, and nothing is left."""
    with dask.config.set(venue(sge)), pytest.raises(ClusterStartError) as info:
        kit.start_cluster(deploy="sge", device="gpu", n_workers=2, start_timeout=90)
    message = str(info.value)
    assert "The SGE worker jobs ended before any worker connected; see the job logs in" in message and kit.current_session() is None
    folder = Path(message.rsplit(" in ", 1)[1].rstrip("."))
    log = "".join(p.read_text() for p in folder.iterdir())  # what the job's dask-cuda launcher said, under sge_execd
    assert "this job's worker cannot start" in log and "sees none" in log
    shutil.rmtree(folder)


def test_unknown_queue_is_refused_before_any_submit(sge_clean, sge):
    before = set(my_jobs())
    with dask.config.set(venue("nosuch.q")), pytest.raises(OptionError) as info:
        kit.start_cluster(deploy="sge", **SMALL)
    assert info.value.parameter == "partition" and "nosuch.q" in str(info.value) and "qconf -sql" in str(info.value)
    assert set(my_jobs()) == before and kit.current_session() is None
