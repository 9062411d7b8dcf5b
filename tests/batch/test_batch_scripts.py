"""PBS, SGE and LSF job scripts, written by the REAL dask-jobqueue classes from the kit's plan, checked against
each scheduler's documented directives and against SLURM's worker command for the same options (one worker
spec for every target). Pure: no scheduler and no process."""

from __future__ import annotations

import shlex

import dask.config
import pytest

from gpu_dask_kit.deploy.batch import BATCH_DEPLOYS, SCHEDULERS
from gpu_dask_kit.deploy.slurm import job_script, make_batch_plan
from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.options import OPTION_SPECS, ClusterOptions

#: Documented directives (PBS Pro qsub -l select chunks; SGE qsub -l/-q/-P, h_rt; LSF bsub -gpu "num=", -W [HH:]MM).
GPU_OPTIONS = dict(
    device="gpu",
    partition="gpuq",
    account="proj1",
    walltime="02:00:00",
    gpus_per_job=2,
    rmm_pool_size="2GiB",
    device_memory_limit=0.7,
    enable_cudf_spill=True,
)
EXPECTED_GPU = {
    "pbs": ["#PBS -N gdk-test", "#PBS -q gpuq", "#PBS -A proj1", "#PBS -l select=1:ncpus=2:ngpus=2:mem=40960mb", "#PBS -l walltime=02:00:00"],
    "sge": ["#$ -N gdk-test", "#$ -q gpuq", "#$ -P proj1", "#$ -l gpu=2", "#$ -l h_rt=02:00:00"],
    "lsf": ["#BSUB -J gdk-test", "#BSUB -q gpuq", '#BSUB -P "proj1"', "#BSUB -n 2", '#BSUB -R "span[hosts=1]"', '#BSUB -gpu "num=2"', "#BSUB -W 02:00"],
}
EXPECTED_CPU = {
    "pbs": ["#PBS -q cpuq", "#PBS -l select=1:ncpus=4:mem=6144mb", "#PBS -l walltime=00:30:00"],
    "sge": ["#$ -q cpuq", "#$ -l h_rt=00:30:00"],
    "lsf": ["#BSUB -q cpuq", "#BSUB -n 4", "#BSUB -W 00:30"],
}


def options(deploy: str, **changes) -> ClusterOptions:
    return ClusterOptions(deploy=deploy, **changes)  # the dataclass checks every value, as from_config does


def worker_line(script: str) -> list[str]:
    line = [x for x in script.splitlines() if " -m " in x]
    assert len(line) == 1, script
    return shlex.split(line[0])


def directives(script: str, prefix: str) -> list[str]:
    return [line for line in script.splitlines() if line.startswith(prefix + " ")]


@pytest.fixture(autouse=True)
def lsf_units_in_megabytes(tmp_path, monkeypatch):
    """LSFJob reads LSF_UNIT_FOR_LIMITS from $LSF_ENVDIR/lsf.conf (as on a real LSF): a site in MB."""
    (tmp_path / "lsf.conf").write_text("LSF_UNIT_FOR_LIMITS=MB\n")
    monkeypatch.setenv("LSF_ENVDIR", str(tmp_path))


@pytest.mark.parametrize("deploy", ["pbs", "sge", "lsf"])
def test_gpu_job_script_asks_for_gpus_in_the_schedulers_syntax_and_runs_the_same_worker_as_slurm(deploy):
    memory = {} if deploy == "sge" else {"job_memory": "40GiB"}  # SGE takes no job_memory (site complexes)
    plan = make_batch_plan(options(deploy, **GPU_OPTIONS, **memory), "gpu", job_name="gdk-test", cupy_through_rmm=True)
    script = job_script(plan)
    row = SCHEDULERS[deploy]
    lines = directives(script, row.prefix)
    for line in EXPECTED_GPU[deploy]:
        assert line in lines, (line, script)
    if deploy == "lsf":
        assert "#BSUB -M 42950" in lines  # 40 GiB in LSF's MB (dask-jobqueue's lsf_format_bytes_ceil)
    assert not [x for x in lines if "--gres" in x], script  # no SLURM syntax leaks in
    argv = worker_line(script)
    assert argv[1:3] == ["-m", "gpu_dask_kit.deploy.cuda_worker"]
    slurm = make_batch_plan(options("slurm", **GPU_OPTIONS, **memory), "gpu", job_name="gdk-test", cupy_through_rmm=True)
    slurm_argv = worker_line(job_script(slurm))
    assert argv[3:] == slurm_argv[3:]  # the scheduler address and every dask-cuda flag: one worker spec for every target
    for flag in ("--device-memory-limit", "--rmm-pool-size", "--enable-cudf-spill", "--set-rmm-allocator-for-libs"):
        assert flag in argv
    assert plan.workers_per_job == 2 and plan.kwargs["processes"] == 2  # one dask-cuda worker per GPU of the job


@pytest.mark.parametrize("deploy", ["pbs", "sge", "lsf"])
def test_cpu_job_script_runs_dask_worker_without_a_gpu_request(deploy):
    memory = {} if deploy == "sge" else {"job_memory": "6GiB"}
    cores = {} if deploy == "sge" else {"job_cores": 4}
    opts = options(deploy, device="cpu", partition="cpuq", walltime="30", threads_per_worker=2, memory_limit="3GiB", n_workers=3, **cores, **memory)
    plan = make_batch_plan(opts, "cpu", job_name="gdk-cpu")
    script = job_script(plan)
    lines = directives(script, SCHEDULERS[deploy].prefix)
    for line in EXPECTED_CPU[deploy]:
        assert line in lines, (line, script)
    assert not [x for x in lines if "gpu" in x.lower()], script
    argv = worker_line(script)
    assert argv[1:3] == ["-m", "distributed.cli.dask_worker"]
    assert argv[argv.index("--nthreads") + 1] == "2" and argv[argv.index("--memory-limit") + 1] == "3.00GiB"
    assert argv[argv.index("--host") + 1] == "127.0.0.1"  # scheduler on loopback: workers too
    assert plan.n_workers == 3 and plan.workers_per_job == 1


def test_sge_gpu_complex_is_the_sites_name_from_the_dask_config():
    with dask.config.set({"gpu-dask-kit.sge-gpu-complex": "ngpus"}):
        script = job_script(make_batch_plan(options("sge", device="gpu", gpus_per_job=1), "gpu", job_name="gdk-x"))
    assert "#$ -l ngpus=1" in script.splitlines() and "#$ -l gpu=1" not in script.splitlines()
    with dask.config.set({"gpu-dask-kit.sge-gpu-complex": "gpu; rm -rf"}), pytest.raises(OptionError) as info:
        make_batch_plan(options("sge", device="gpu"), "gpu")
    assert info.value.parameter == "gpu-dask-kit.sge-gpu-complex" and "qconf -sc" in str(info.value)


@pytest.mark.parametrize("name, value", [("job_cores", 4), ("job_memory", "8GiB")])
def test_an_option_sge_cannot_take_is_refused_with_what_to_do(name, value):
    with pytest.raises(OptionError) as info:
        make_batch_plan(options("sge", device="cpu", **{name: value}), "cpu")
    message = str(info.value)
    assert info.value.parameter == name and message.startswith(f"{name}=")
    assert 'None with deploy="sge"' in message and "SGECluster" in message and "job_extra_directives" in message


def test_extra_directives_pass_through_with_each_prefix_and_the_prefix_is_refused():
    for deploy, extra in (("pbs", "-l place=scatter"), ("sge", "-pe smp 4"), ("lsf", "-R select[mem>4000]")):
        script = job_script(make_batch_plan(options(deploy, device="cpu", job_extra_directives=[extra]), "cpu"))
        assert f"{SCHEDULERS[deploy].prefix} {extra}" in script.splitlines()
    for prefixed in ("#PBS -l place=scatter", "#$ -pe smp 4", "#BSUB -x"):
        with pytest.raises(OptionError, match=r"Leave out .#"):
            options("pbs", job_extra_directives=[prefixed])


def test_walltime_is_written_in_each_schedulers_form():
    got = {d: make_batch_plan(options(d, device="cpu", walltime="1-00:30"), "cpu").kwargs["walltime"] for d in BATCH_DEPLOYS}
    assert got == {"slurm": "1-00:30", "pbs": "24:30:00", "sge": "24:30:00", "lsf": "24:30"}


def test_the_deploy_choices_and_the_scheduler_table_agree():
    assert set(BATCH_DEPLOYS) <= set(OPTION_SPECS["deploy"].choices)
    assert tuple(SCHEDULERS) == BATCH_DEPLOYS
    for row in SCHEDULERS.values():
        assert row.submit in row.commands and row.cancel in row.commands and row.status in row.commands


@pytest.mark.parametrize("deploy", ["pbs", "sge", "lsf"])
def test_batch_options_as_keywords_with_every_batch_deploy(deploy):
    opts = ClusterOptions.from_config(deploy=deploy, partition="q1", account="proj1", walltime="00:30:00", gpus_per_job=1)
    assert (opts.deploy, opts.partition, opts.account, opts.gpus_per_job) == (deploy, "q1", "proj1", 1)
