"""What a SLURM GPU job runs: ``python -m gpu_dask_kit.deploy.cuda_worker SCHEDULER [dask cuda worker args]``.

The plan is made on the submitting machine, which does not know the job's GPU. Here, in the job, the
sizes given as fractions (``--device-memory-limit 0.8``, ``--rmm-pool-size 0.5``) are resolved and
checked on the GPUs SLURM gave the job (its ``CUDA_VISIBLE_DEVICES``, MIG slices too) by the same rules
as a local start (:func:`gpu_dask_kit.gpu_plan.resolve_sizes`); dask-cuda itself would resolve pool
fractions against NVML's GPU 0 of the node. Then dask-cuda's own CLI runs with sizes in bytes. A size
that does not fit ends the job with the kit's error (in the job's log) instead of a failure inside RMM.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from ..environment import EnvironmentReport, detect
from ..errors import OptionError
from ..gpu_plan import resolve_sizes

__all__ = ["job_args", "main"]

_SIZES = {"--device-memory-limit": "device_memory_limit", "--rmm-pool-size": "rmm_pool_size", "--rmm-maximum-pool-size": "rmm_maximum_pool_size"}


def _size(text: str) -> Any:
    """A size flag's value as the plan wrote it: a fraction (float), bytes (int), or None for "0".

    >>> _size("0.5"), _size("1073741824"), _size("0")
    (0.5, 1073741824, None)
    """
    value = float(text) if "." in text else int(text)
    return value or None


def job_args(argv: list[str], report: EnvironmentReport) -> list[str]:
    """``argv`` with every size flag in bytes for the GPUs this job sees."""
    devices = [gpu.sized for _, gpu in report.visible_gpus]
    if not devices:
        raise OptionError(
            "gpus_per_job",
            None,
            "a job that sees at least one GPU",
            f"this job sees none ({report.reason_text}); check the job's GPU request "
            "(SLURM: the partition's GRES; PBS: ngpus; SGE: the gpu complex; LSF: -gpu)",
        )
    given = {name: _size(argv[argv.index(flag) + 1]) for flag, name in _SIZES.items() if flag in argv}
    options = SimpleNamespace(**{name: given.get(name) for name in _SIZES.values()}, explicit=frozenset())
    sizes = resolve_sizes(options, devices, [])
    out = list(argv)
    for flag, name in _SIZES.items():
        if flag in out:
            out[out.index(flag) + 1] = str(sizes[name] or 0)
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args = job_args(args, detect("auto"))
    except OptionError as exc:
        print(f"gpu-dask-kit: this job's worker cannot start: {exc}", file=sys.stderr)
        return 2
    from dask_cuda.cli import cuda  # dask-cuda's own CLI (`dask cuda worker`), imported in the job only

    cuda.main(["worker", *args], prog_name="dask cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
