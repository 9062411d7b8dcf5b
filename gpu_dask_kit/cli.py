"""``gpu-dask-kit`` command line: doctor, sessions, lab (and check, from the notebooks kit)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ._version import __version__
from .memory import format_bytes

__all__ = ["main", "build_parser"]


def _cmd_doctor(args: argparse.Namespace) -> int:
    from . import detect
    from .options import OPTION_SPECS, configured

    report = detect()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(f"Mode for device='auto': {report.mode.upper()}")
        print(f"Why: {report.reason_text}")
        print(f"Python {report.python} on {report.platform}, {report.cpu_count} CPU core(s)")
        print(f"NVIDIA driver: {report.driver_version or '-'}   CUDA (driver): {report.cuda_version or '-'}")
        if report.gpus:
            print("GPUs:")
            for g in report.gpus:
                memory = "unified memory" if g.unified_memory else f"{format_bytes(g.memory_free or 0)} free of {format_bytes(g.memory_total or 0)}"
                print(f"  [{g.index}] {g.name}  {memory}  {g.uuid}")
                for part in g.mig:  # MIG slices: name one by its MIG-... UUID in CUDA_VISIBLE_DEVICES
                    print(f"      MIG slice {part.uuid}  {format_bytes(part.memory_total or 0)}  {part.name}")
                for pid, user, used in g.holders():  # a shared machine: who else holds memory on this GPU
                    print(f"      in use by PID {pid} ({user}): {format_bytes(used)}")
        else:
            print("GPUs: none")
        if report.visible_devices is not None:
            print(f"CUDA_VISIBLE_DEVICES: {','.join(report.visible_devices)} ({len(report.visible_gpus)} of {len(report.gpus)} GPUs visible)")
        print("Libraries:")
        for name, lib in report.libraries.items():
            state = lib.version or "installed" if lib.installed else "not installed"
            if lib.cuda_major is not None:
                state += f" ({lib.distribution}: built for CUDA {lib.cuda_major})"
            if lib.importable is False:
                state += f" (does not import: {lib.error})"
            print(f"  {name:<17}{state}")
        if args.options:
            print("Options: keyword (--flag of `add_cluster_args`, gpu-dask-kit.<flag> in dask config) = current default")
            current = configured()
            for name, spec in OPTION_SPECS.items():
                print(f"  {name} ({spec.flags[0]}) = {current[name]!r}" + (f" [{spec.unit}]" if spec.unit else "") + f"\n      {spec.help()}")
    if args.require_gpu and report.mode != "gpu":
        print(f"error: --require-gpu: no usable GPU here. {report.reason_text}", file=sys.stderr)
        return 1
    return 0


def _jobs(record: Any) -> str:
    """The jobs' name for people ("SLURM jobs", "PBS jobs", ...), from the record's deploy option."""
    from .deploy.batch import SCHEDULERS

    row = SCHEDULERS.get(str((record.options or {}).get("deploy")))
    return f"{row.title} jobs" if row is not None else "batch jobs"


def _cmd_sessions(args: argparse.Namespace) -> int:
    from . import cleanup, registry

    if args.cleanup:
        removed = cleanup.cleanup_stale()
        for record in removed:
            jobs = f"; {_jobs(record)} of {record.slurm_job_name} cancelled" if record.slurm_job_name else ""
            print(f"removed stale session {record.id} (owner pid {record.owner_pid} is gone; {record.mode}, {record.scheduler_address}{jobs})")
        print(f"{len(removed)} stale session(s) cleaned up.")
        return 0
    records = registry.list_sessions()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2, default=str))
        return 0
    if not records:
        print(f"No gpu-dask-kit sessions (registry: {registry.runtime_dir()}).")
        return 0
    print(f"{'id':<34}{'state':<7}{'mode':<8}{'workers':<8}{'owner':<8}{'started':<27}dashboard")
    for r in records:
        state = "live" if r.alive else "STALE"
        print(f"{r.id:<34}{state:<7}{r.mode:<8}{r.n_workers:<8}{r.owner_pid:<8}{r.started:<27}{r.dashboard_link or '-'}")
        if r.slurm_job_name:
            print(f"{'':<34}{_jobs(r)} ({r.slurm_job_name}): {', '.join(r.slurm_job_ids) or 'none'}")
    if any(not r.alive for r in records):
        print("Stale sessions belong to processes that are gone: `gpu-dask-kit sessions --cleanup` stops and removes them.")
    return 0


def _cmd_lab(args: argparse.Namespace) -> int:
    from .workshop import run_lab

    return run_lab(args.notebook_dir, args.port, open_browser=not args.no_browser)


def _cmd_check(args: argparse.Namespace) -> int:
    from .venue import run_check

    return run_check(scale=args.scale, notebook_dir=args.notebook_dir, output_dir=args.output_dir, timeout=args.timeout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-dask-kit", description="GPU (and CPU) Dask clusters for teaching.")
    parser.add_argument("--version", action="version", version=f"gpu-dask-kit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    doctor = sub.add_parser("doctor", help="Explain this machine: GPUs, driver, libraries, and what device='auto' picks.")
    doctor.add_argument("--json", action="store_true", help="Print the report as JSON.")
    doctor.add_argument("--require-gpu", action="store_true", help="Exit 1 when no GPU is usable.")
    doctor.add_argument("--options", action="store_true", help="Also list every cluster option with its current default.")
    doctor.set_defaults(func=_cmd_doctor)

    sessions = sub.add_parser("sessions", help="List this user's kit sessions on this machine.")
    sessions.add_argument("--cleanup", action="store_true", help="Stop and remove sessions whose owner process is gone.")
    sessions.add_argument("--json", action="store_true", help="Print the sessions as JSON.")
    sessions.set_defaults(func=_cmd_sessions)

    lab = sub.add_parser(
        "lab", help="Open the workshop (00_start_here) in JupyterLab, bound to 127.0.0.1; outside a checkout, first copy it to ~/gpu-dask-kit-workshop."
    )
    lab.add_argument("--notebook-dir", default=None, help="Serve this folder instead of the workshop.")
    lab.add_argument("--port", type=int, default=None, help="Port (default: Jupyter's, 8888 or the next free one).")
    lab.add_argument("--no-browser", action="store_true", help="Do not open a browser.")
    lab.set_defaults(func=_cmd_lab)

    check = sub.add_parser("check", help="Venue check: run every notebook here and report pass/fail and time.")
    check.add_argument("--scale", choices=("small", "full"), default="small", help="Workload size (default: small).")
    check.add_argument("--notebook-dir", default=None, help="Folder with the NN_*.ipynb notebooks (default: ./notebooks).")
    check.add_argument("--output-dir", default="venue-check", help="Where executed copies and report.json go.")
    check.add_argument("--timeout", type=int, default=1800, help="Seconds allowed per notebook.")
    check.set_defaults(func=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)
