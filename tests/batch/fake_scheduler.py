"""A stand-in for PBS's, SGE's and LSF's commands, installed by tests/batch/conftest.py under their names
(qsub, qdel, qstat, qconf, bsub, bkill, bjobs, bqueues) in a folder put first on PATH.

It records every script submitted and every id cancelled in $FAKE_BATCH_STATE, answers in each scheduler's
own words (PBS ``12.server``, SGE ``Your job 12 ("name") has been submitted``, LSF ``Job <12> is submitted
to queue <normal>.``) so that dask-jobqueue parses the real output format, and, with FAKE_BATCH_RUN=1, runs
the job script as a local process in its own session (so that real workers join the scheduler); a cancel
ends that process group. Queues known: $FAKE_BATCH_QUEUES (comma-separated). No scheduler involved.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(os.environ["FAKE_BATCH_STATE"])
FLAVOUR = os.environ["FAKE_BATCH_FLAVOUR"]  # pbs | sge | lsf
JOBS = STATE / "jobs"


def _log(name: str, entry: dict) -> None:
    with open(STATE / name, "a") as f:
        f.write(json.dumps(entry) + "\n")


def _next_id() -> str:
    with open(STATE / "lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = STATE / "next_id"
        n = int(counter.read_text()) if counter.exists() else 100
        counter.write_text(str(n + 1))
    return str(n)


def _alive(job_id: str) -> bool:
    if (JOBS / f"{job_id}.gone").exists() or not (JOBS / f"{job_id}.sh").exists():
        return False
    pid_file = JOBS / f"{job_id}.pid"
    if not pid_file.exists():
        return True  # queued, never run (FAKE_BATCH_RUN unset)
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, ValueError):
        return False


def submit(args: list[str]) -> int:
    if FLAVOUR == "sge" and args[:2] == ["-w", "v"]:  # SGE's verify-only submit: the script on stdin
        script = sys.stdin.read()
        _log("verified.log", {"script": script})
        refuse = os.environ.get("FAKE_BATCH_REFUSE")
        if refuse:
            print(f"Unable to run job: {refuse}\nverification: no suitable queues", file=sys.stderr)
            return 1
        print("verification: found suitable queue(s)")
        return 0
    script = Path(args[-1]).read_text() if args and FLAVOUR != "lsf" else sys.stdin.read()  # dask-jobqueue: `bsub < file`
    job_id = _next_id()
    JOBS.mkdir(exist_ok=True)
    path = JOBS / f"{job_id}.sh"
    path.write_text(script)
    _log("submitted.log", {"id": job_id, "argv": args, "script": script})
    if os.environ.get("FAKE_BATCH_RUN") == "1":
        with open(JOBS / f"{job_id}.log", "w") as out:
            proc = subprocess.Popen(["bash", str(path)], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        (JOBS / f"{job_id}.pid").write_text(str(proc.pid))
    name = next((line.split()[-1] for line in script.splitlines() if line.startswith(("#PBS -N", "#$ -N", "#BSUB -J"))), "job")
    print(
        {"pbs": f"{job_id}.fakeserver", "sge": f'Your job {job_id} ("{name}") has been submitted', "lsf": f"Job <{job_id}> is submitted to queue <normal>."}[
            FLAVOUR
        ]
    )
    return 0


def cancel(args: list[str]) -> int:
    for job_id in args:
        _log("cancelled.log", {"id": job_id})
        pid_file = JOBS / f"{job_id}.pid"
        if pid_file.exists() and _alive(job_id):
            pid = int(pid_file.read_text())
            try:
                os.killpg(pid, signal.SIGTERM)
                for _ in range(100):
                    if not _alive(job_id):
                        break
                    time.sleep(0.05)
                else:
                    os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        (JOBS / f"{job_id}.gone").touch()
    return 0


def queue_known(queue: str) -> int:
    if queue in os.environ.get("FAKE_BATCH_QUEUES", "").split(","):
        print(f"Queue: {queue}")
        return 0
    print(f"Unknown queue {queue}", file=sys.stderr)
    return 1


def status(args: list[str]) -> int:
    if FLAVOUR == "pbs" and args[:1] == ["-Q"]:
        return queue_known(args[1])
    job_id = args[-1]
    if FLAVOUR == "lsf":
        print("RUN" if _alive(job_id) else f"Job <{job_id}> is not found")
        return 0 if _alive(job_id) else 255
    if _alive(job_id):
        print(f"job_number: {job_id}")
        return 0
    print("Following jobs do not exist:" if FLAVOUR == "sge" else f"qstat: Unknown Job Id {job_id}.fakeserver", file=sys.stderr)
    return 1 if FLAVOUR == "sge" else 153


def main() -> int:
    command, args = os.environ.pop("FAKE_BATCH_COMMAND", os.path.basename(sys.argv[0])), sys.argv[1:]
    _log("calls.log", {"argv": [command, *args]})
    if command in ("qsub", "bsub"):
        return submit(args)
    if command in ("qdel", "bkill"):
        return cancel(args)
    if command in ("qstat", "bjobs"):
        return status(args)
    if command == "qconf" and args[:1] == ["-sq"]:
        return queue_known(args[1])
    if command == "bqueues":
        return queue_known(args[0])
    print(f"fake_scheduler: {command} {args} not understood", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
