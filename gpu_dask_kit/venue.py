"""Venue check and output refresh for the workshop notebooks.

``run_check()`` (``gpu-dask-kit check``) executes every ``NN_*.ipynb`` on this machine, each in a fresh
kernel, with ``GPU_DASK_KIT_SCALE`` set, and reports pass/fail and seconds per notebook, the mode (GPU or
CPU) and why. Instructors run it on the workshop machines the day before.

``refresh_outputs()`` (``python -m gpu_dask_kit.venue --refresh notebooks``) re-executes the notebooks in
place so that their stored outputs, which nbval compares in CI, come from a CPU small-scale run.

nbclient, nbformat and ipykernel are imported inside the functions (they are test/teaching extras).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["NotebookResult", "find_notebooks", "default_notebook_dir", "execute_notebook", "run_check", "refresh_outputs", "format_table", "main"]

#: Workshop notebooks are ``NN_topic.ipynb``.
NOTEBOOK_PATTERN = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")
SCALES = ("small", "full")


@dataclass
class NotebookResult:
    """The outcome of executing one notebook."""

    notebook: str
    passed: bool
    seconds: float
    error: str | None = None  # "ExceptionName: message" of the failing cell
    cell: int | None = None  # index of the failing cell in the notebook


def default_notebook_dir() -> Path:
    """``./notebooks`` when it exists, else the notebooks next to the installed package
    (a source checkout or editable install), else ``<prefix>/share/gpu-dask-kit/notebooks``."""
    candidates = [Path.cwd() / "notebooks", Path(__file__).resolve().parent.parent / "notebooks", Path(sys.prefix) / "share" / "gpu-dask-kit" / "notebooks"]
    for candidate in candidates:
        if candidate.is_dir() and find_notebooks(candidate):
            return candidate
    return candidates[0]


def find_notebooks(notebook_dir: str | os.PathLike) -> list[Path]:
    """The ``NN_*.ipynb`` files of a folder, in order."""
    folder = Path(notebook_dir)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and NOTEBOOK_PATTERN.match(p.name))


@contextlib.contextmanager
def _environ(**values: str | None) -> Iterator[None]:
    """Set (or, with None, remove) environment variables for the kernels started inside the block."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _kernel_manager_class():
    """A kernel manager class whose ``python3`` kernel is this interpreter (like nbval's --nbval-current-env),
    so the check tests the environment it is run from, whatever kernelspecs are installed. nbclient creates
    (and therefore shuts down) one kernel per notebook with it."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class CurrentEnvSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python 3 (ipykernel)",
                language="python",
                resource_dir=os.path.dirname(__file__),
            )

    class CurrentEnvKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _current_env_specs(self) -> KernelSpecManager:
            return CurrentEnvSpecs(data_dir="")

    return CurrentEnvKernelManager


def _cell_error(nb: Any) -> tuple[str | None, int | None]:
    """The first error output of an executed notebook: ("Name: value", cell index)."""
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                value = str(output.get("evalue", "")).strip().splitlines()
                return f"{output.get('ename', 'Error')}: {value[0] if value else ''}".strip(), index
    return None, None


def execute_notebook(path: str | os.PathLike, *, scale: str = "small", timeout: int = 1800, output_path: str | os.PathLike | None = None) -> NotebookResult:
    """Execute one notebook in a fresh kernel (working directory: the notebook's folder) with
    ``GPU_DASK_KIT_SCALE=scale``; write the executed copy to ``output_path`` when given.

    ``timeout`` is for the whole notebook, in seconds (each cell gets what is left of it). Never raises for
    a failing notebook: the error is in the result.
    """
    import nbformat

    path = Path(path)
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    for attempt in (1, 2):
        nb = nbformat.read(path, as_version=4)
        error, cell = _run(nb, path, scale, timeout, deadline)
        # A kernel that dies before it replies ran nothing: most often a TCP port it was given was taken by another
        # process in between (ZMQError "Address already in use", seen in make test). A second kernel gets new ports.
        if not (error and "Kernel died before replying to kernel_info" in error and attempt == 1):
            break
    seconds = time.perf_counter() - start
    if error and cell is None:
        cell = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count") is None and c.source.strip()), None)
    if output_path is not None:
        nbformat.write(nb, output_path)
    return NotebookResult(path.name, error is None, round(seconds, 1), error, cell)


def _run(nb: Any, path: Path, scale: str, timeout: float, deadline: float) -> tuple[str | None, int | None]:
    """(error, failing cell) of one execution of ``nb`` in a fresh kernel; (None, None) when every cell ran."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    client = NotebookClient(
        nb,
        kernel_manager_class=_kernel_manager_class(),
        kernel_name="python3",
        timeout=timeout,
        record_timing=False,
        allow_errors=False,
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    error = cell = None
    with _environ(GPU_DASK_KIT_SCALE=scale):
        try:
            client.execute()
        except CellExecutionError:
            error, cell = _cell_error(nb)
        except CellTimeoutError:
            error = f"CellTimeoutError: the notebook ran longer than {timeout} s"
        except DeadKernelError as exc:
            error = f"DeadKernelError: the kernel died ({exc})"
        except Exception as exc:  # kernel start failures and the like: report, do not crash the check
            error = f"{type(exc).__name__}: {exc}"
    return error, cell


def format_table(results: Sequence[NotebookResult], header: str = "") -> str:
    """A plain-text table: notebook, result, seconds, error (the failing cell's, shortened)."""
    width = max([len("notebook")] + [len(r.notebook) for r in results])
    lines = [header] if header else []
    lines.append(f"{'notebook':<{width}}  {'result':<6}  {'seconds':>8}  error")
    lines.append("-" * (width + 30))
    for r in results:
        error = "" if r.passed else f"cell {r.cell}: {r.error}" if r.cell is not None else str(r.error)
        if len(error) > 120:
            error = error[:117] + "..."
        lines.append(f"{r.notebook:<{width}}  {'pass' if r.passed else 'FAIL':<6}  {r.seconds:>8.1f}  {error}")
    lines.append("-" * (width + 30))
    passed = sum(r.passed for r in results)
    lines.append(
        f"{'total':<{width}}  {passed}/{len(results):<4}  {sum(r.seconds for r in results):>8.1f}  "
        + ("all passed" if passed == len(results) else f"{len(results) - passed} failed")
    )
    return "\n".join(lines)


def run_check(scale: str = "small", notebook_dir: str | os.PathLike | None = None, output_dir: str | os.PathLike = "venue-check", timeout: int = 1800) -> int:
    """Execute every ``NN_*.ipynb`` here, print a pass/fail table with seconds per notebook, and write the
    executed copies and ``report.json`` into ``output_dir``. Returns 0 when all pass, 1 when any fails,
    2 when there is nothing to run."""
    from .environment import detect

    if scale not in SCALES:
        print(f"error: scale={scale!r} is not accepted: use 'small' or 'full'.", file=sys.stderr)
        return 2
    folder = Path(notebook_dir) if notebook_dir else default_notebook_dir()
    notebooks = find_notebooks(folder)
    if not notebooks:
        print(f"error: no NN_*.ipynb notebooks in {folder}. Pass --notebook-dir with the workshop notebooks.", file=sys.stderr)
        return 2
    report = detect()
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    header = f"gpu-dask-kit venue check: {len(notebooks)} notebook(s) in {folder}, scale={scale}\nmode: {report.mode.upper()} ({report.reason_text})"
    print(header, flush=True)
    results = []
    for path in notebooks:
        print(f"  running {path.name} ...", flush=True)
        results.append(execute_notebook(path, scale=scale, timeout=timeout, output_path=out / path.name))
    table = format_table(results)
    print(table)
    data = {
        "scale": scale,
        "mode": report.mode,
        "reason": report.reason_text,
        "notebook_dir": str(folder.resolve()),
        "passed": all(r.passed for r in results),
        "total_seconds": round(sum(r.seconds for r in results), 1),
        "python": report.python,
        "gpus": [g.name for g in report.gpus],
        "notebooks": [asdict(r) for r in results],
    }
    (out / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    print(f"Executed copies and report.json in {out.resolve()}")
    return 0 if data["passed"] else 1


def refresh_outputs(notebook_dir: str | os.PathLike = "notebooks", *, timeout: int = 600, allow_gpu: bool = False, names: Sequence[str] | None = None) -> int:
    """Re-execute the notebooks in place at small scale so their stored outputs are current.

    nbval compares those outputs in CI, which runs in CPU mode, so the run is refused on a machine in GPU
    mode unless ``allow_gpu``. A notebook that fails is left unchanged. Returns 0 when all succeeded.
    """
    from .environment import detect

    report = detect()
    if report.mode == "gpu" and not allow_gpu:
        print(
            "error: this machine is in GPU mode; the stored outputs must come from a CPU run (CI compares them on CPU). "
            "Run on a machine without a GPU, or set DASK_GPU_DASK_KIT__DEVICE=cpu and pass --allow-gpu.",
            file=sys.stderr,
        )
        return 2
    notebooks = [p for p in find_notebooks(notebook_dir) if not names or p.stem in names or p.name in names]
    if not notebooks:
        print(f"error: no NN_*.ipynb notebooks in {notebook_dir}.", file=sys.stderr)
        return 2
    results = []
    for path in notebooks:
        tmp = path.with_suffix(".ipynb.tmp")
        result = execute_notebook(path, scale="small", timeout=timeout, output_path=tmp)
        if result.passed:
            os.replace(tmp, path)
        else:
            tmp.unlink(missing_ok=True)
        print(
            f"{'refreshed' if result.passed else 'FAILED (left unchanged)'}  {path.name}  {result.seconds:.1f} s"
            + ("" if result.passed else f"  cell {result.cell}: {result.error}"),
            flush=True,
        )
        results.append(result)
    print(format_table(results, header=f"mode: {report.mode.upper()} ({report.reason_text})"))
    return 0 if all(r.passed for r in results) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpu_dask_kit.venue --refresh [DIR]`` or ``--check [DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m gpu_dask_kit.venue", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--refresh", metavar="DIR", nargs="?", const="notebooks", help="re-execute the notebooks in DIR in place (CPU, small scale) to refresh stored outputs"
    )
    action.add_argument("--check", metavar="DIR", nargs="?", const="", help="run the venue check on DIR (default: ./notebooks), like `gpu-dask-kit check`")
    parser.add_argument("--scale", choices=SCALES, default="small", help="for --check: workload size")
    parser.add_argument("--output-dir", default="venue-check", help="for --check: where executed copies and report.json go")
    parser.add_argument("--timeout", type=int, default=None, help="seconds allowed per notebook")
    parser.add_argument("--allow-gpu", action="store_true", help="for --refresh: run even in GPU mode")
    parser.add_argument("--only", nargs="*", default=None, help="for --refresh: only these notebooks (names or stems)")
    args = parser.parse_args(argv)
    if args.refresh is not None:
        return refresh_outputs(args.refresh, timeout=args.timeout or 600, allow_gpu=args.allow_gpu, names=args.only)
    return run_check(scale=args.scale, notebook_dir=args.check or None, output_dir=args.output_dir, timeout=args.timeout or 1800)


if __name__ == "__main__":
    sys.exit(main())
