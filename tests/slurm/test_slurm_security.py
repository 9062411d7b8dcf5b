"""A default SLURM session is TLS too (issue 20): dask-jobqueue's own security support passes the session's
certificate to each job by path; the path is in the user's registry folder (0700, files 0600), so another
account can neither read it nor connect. Run under ``flock /tmp/slurm.lock`` where several checkouts share
one slurmctld."""

from __future__ import annotations

import stat

import pytest

import gpu_dask_kit as kit
from gpu_dask_kit import credentials, registry

from ..second_account import connect_code, make_stranger, refused_within, run_as
from .conftest import SMALL

pytestmark = pytest.mark.slurm


@pytest.fixture(scope="module")
def stranger():
    yield from make_stranger()


def test_a_default_slurm_session_is_tls_and_keeps_another_account_out(slurm_clean, stranger):
    session = kit.start_cluster(deploy="slurm", device="cpu", n_workers=1, verbose=False, **SMALL)
    slurm_clean.append(session.record.slurm_job_name)
    try:
        assert session.scheduler_address.startswith("tls://")
        folder = registry.credentials_dir(session.id)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
        script = session.cluster.job_script()  # dask-jobqueue's public API: what sbatch ran
        for flag, name in (("--tls-ca-file", credentials.CERT), ("--tls-cert", credentials.CERT), ("--tls-key", credentials.KEY)):
            assert f"{flag} {folder / name}" in script, script
        assert "-----BEGIN" not in script  # paths, never the key itself
        assert session.client.submit(lambda: 6 * 7).result(timeout=60) == 42  # the job's worker got in over TLS
        for address in (session.scheduler_address, "tcp://" + session.scheduler_address.removeprefix("tls://")):
            done, _ = run_as(stranger, connect_code(address))
            assert refused_within(done, 15), (address, done.stdout, done.stderr[-2000:])
        done, _ = run_as(stranger, f"open({str(folder / credentials.KEY)!r}).read()")
        assert "PermissionError" in done.stderr, done.stderr
    finally:
        session.close()
    assert not registry.credentials_dir(session.id).exists()
