"""Scripts never hang silently: real `python` processes, their whole process tree watched.

A script without `if __name__ == "__main__":` must end within seconds with the kit's one message and start
nothing; a script fed on stdin or with `-c` (whose main module cannot be imported again) must work; the
same for `start_cluster_from_args` and `examples/train_script.py`. Every process a script started must be
gone when it ends (the test scans the script's descendants while it runs and kills them on failure).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
MESSAGE_LIMIT_S = 10.0  # the no-guard script ends within 10 s with the kit's message
HANG_GUARD_S = 180.0  # scripts that start a real cluster: only catches a hang (speed is not asserted)
GUARD_MESSAGE = 'Nothing was started: this script starts a cluster outside an `if __name__ == "__main__":` block'

NO_GUARD = textwrap.dedent("""\
    import gpu_dask_kit as kit
    print("first line", flush=True)
    session = kit.start_cluster(n_workers=1, memory_limit="1GiB")
    print("sum", session.client.submit(sum, [1, 2, 3]).result(), flush=True)
    session.close()
""")

FROM_ARGS_NO_GUARD = textwrap.dedent("""\
    import argparse
    import gpu_dask_kit as kit

    def main():
        parser = kit.add_cluster_args(argparse.ArgumentParser())
        print("first line", flush=True)
        with kit.start_cluster_from_args(parser.parse_args()) as session:
            print("sum", session.client.submit(sum, [1, 2, 3]).result(), flush=True)

    main()
""")


class Run:
    """A finished script: returncode, output, seconds, and every descendant PID seen while it ran."""

    def __init__(self, returncode: int, stdout: str, stderr: str, elapsed: float, seen: set[int]) -> None:
        self.returncode, self.stdout, self.stderr, self.elapsed, self.seen = returncode, stdout, stderr, elapsed, seen


def _alive(pids: set[int]) -> set[int]:
    left = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.add(pid)
        except psutil.Error:
            pass
    return left


def run_script(argv: list[str], runtime_dir: Path, cwd: Path, stdin_file: Path | None = None, limit: float = HANG_GUARD_S) -> Run:
    """Run ``python argv`` to its end (killed at ``limit``), watching its process tree; fail if any of it is left."""
    env = dict(os.environ, GPU_DASK_KIT_RUNTIME_DIR=str(runtime_dir), PYTHONUNBUFFERED="1")
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "w") as fo, open(err, "w") as fe, open(stdin_file or os.devnull) as fi:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, *argv], stdin=fi, stdout=fo, stderr=fe, cwd=cwd, env=env)
        seen: set[int] = set()
        try:
            while proc.poll() is None and time.monotonic() - started < limit:
                try:
                    seen |= {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
                except psutil.Error:
                    pass
                time.sleep(0.05)
            elapsed = time.monotonic() - started
            timed_out = proc.poll() is None
            if timed_out:
                seen |= {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    deadline = time.monotonic() + 15
    while _alive(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(seen)
    for pid in left:  # what this test started, by PID
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass
    run = Run(proc.returncode, out.read_text(), err.read_text(), elapsed, seen)
    assert not timed_out, f"the script hung for {limit:g} s:\n{run.stdout}\n{run.stderr[-3000:]}"
    assert not left, f"processes left running after the script ended: {sorted(left)}\n{run.stderr[-3000:]}"
    return run


def _one_guard_message(run: Run, script: str, line: int) -> None:
    assert run.returncode != 0
    assert run.stderr.count(GUARD_MESSAGE) == 1, run.stderr[-3000:]
    assert f"({script}, line {line})" in run.stderr
    assert 'if __name__ == "__main__":\n        session = gpu_dask_kit.start_cluster(...)' in run.stderr  # the two-line fix
    assert "doctor" not in run.stderr and "Nanny failed" not in run.stderr
    assert run.stdout.count("first line") == 1 and "sum" not in run.stdout
    assert run.seen == set() or not _alive(run.seen)


def test_script_without_guard_fails_at_once_with_the_fix(tmp_path, runtime_dir):
    (tmp_path / "noguard.py").write_text(NO_GUARD)
    run = run_script(["noguard.py"], runtime_dir, tmp_path, limit=60)
    _one_guard_message(run, "noguard.py", 3)
    assert run.elapsed < MESSAGE_LIMIT_S, run.elapsed
    assert run.seen == set(), "nothing may start before the message"
    assert list(runtime_dir.glob("session-*.json")) == []
    print(f"no-guard script: message after {run.elapsed:.2f} s")


def test_start_cluster_from_args_without_guard_fails_at_once(tmp_path, runtime_dir):
    (tmp_path / "cli_noguard.py").write_text(FROM_ARGS_NO_GUARD)
    run = run_script(["cli_noguard.py", "--n-workers", "1", "--memory-limit", "1GiB"], runtime_dir, tmp_path, limit=60)
    _one_guard_message(run, "cli_noguard.py", 10)  # the line that calls main()
    assert run.elapsed < MESSAGE_LIMIT_S and run.seen == set()
    print(f"start_cluster_from_args no-guard script: message after {run.elapsed:.2f} s")


def test_example_script_without_its_guard_fails_at_once(tmp_path, runtime_dir):
    source = (ROOT / "examples" / "train_script.py").read_text()
    unguarded, n = re.subn(r'\nif __name__ == "__main__":[^\n]*\n    main\(parser\(\)\.parse_args\(\)\)\n', "\nmain(parser().parse_args())\n", source)
    assert n == 1, "the example's guard moved: update this test"
    (tmp_path / "train_noguard.py").write_text(unguarded)
    line = unguarded.splitlines().index("main(parser().parse_args())") + 1
    run = run_script(["train_noguard.py", "--device", "cpu", "--n-workers", "1", "--rows", "2000"], runtime_dir, tmp_path, limit=60)
    assert run.returncode != 0 and run.stderr.count(GUARD_MESSAGE) == 1, run.stderr[-3000:]
    assert f"(train_noguard.py, line {line})" in run.stderr
    assert run.elapsed < MESSAGE_LIMIT_S and run.seen == set()


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_script_that_cannot_be_imported_again_works(how, tmp_path, runtime_dir):
    """`python - < script.py` (main module "<stdin>") and `python -c`: workers start without importing it."""
    script = tmp_path / "noguard.py"
    script.write_text(NO_GUARD)
    argv, stdin = (["-"], script) if how == "stdin" else (["-c", NO_GUARD], None)
    run = run_script(argv, runtime_dir, tmp_path, stdin_file=stdin)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("first line") == 1 and "sum 6" in run.stdout
    assert "Nanny failed" not in run.stderr and GUARD_MESSAGE not in run.stderr
    assert run.seen, "the cluster's worker processes were seen while it ran"
    assert list(runtime_dir.glob("session-*.json")) == []
    print(f"{how} script: worked, {run.elapsed:.1f} s")


def test_example_script_works_from_stdin(tmp_path, runtime_dir):
    run = run_script(
        ["-", "--device", "cpu", "--n-workers", "1", "--memory-limit", "1GiB", "--rows", "2000"],
        runtime_dir,
        tmp_path,
        stdin_file=ROOT / "examples" / "train_script.py",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "mode=cpu workers=1 largest singular value=" in run.stdout


def test_a_worker_importing_the_script_never_starts_a_cluster(tmp_path, runtime_dir):
    """A guard the check cannot see through (`if __name__ or True:`): each worker re-running the script
    refuses to start (one line, then exits), and the user's process fails within seconds, naming the guard."""
    (tmp_path / "fooled.py").write_text(
        textwrap.dedent("""\
        import gpu_dask_kit as kit
        print("first line", flush=True)
        if __name__ or True:
            session = kit.start_cluster(n_workers=1, memory_limit="1GiB")
            print("sum", session.client.submit(sum, [1, 2, 3]).result(), flush=True)
    """)
    )
    run = run_script(["fooled.py"], runtime_dir, tmp_path, limit=120)
    assert run.returncode != 0 and "sum" not in run.stdout
    assert "a worker process importing fooled.py reached start_cluster(); it starts no cluster and exits" in run.stderr
    assert 'fooled.py needs its `if __name__ == "__main__":` guard' in run.stderr
    assert list(runtime_dir.glob("session-*.json")) == []
    print(f"fooled guard: failed after {run.elapsed:.1f} s")


def test_guard_check_reads_the_guard():
    from gpu_dask_kit.guard import _guarded

    source = 'import x\nif __name__ == "__main__":\n    a = 1\n    b = 2\nc = 3\nif "__main__" != __name__:\n    pass\nelse:\n    d = 4\n'
    assert [_guarded(source, n) for n in (1, 3, 4, 5, 9)] == [False, True, True, False, True]
    assert _guarded("def (:\n", 1) is None
