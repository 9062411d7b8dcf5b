"""Shared benchmark plumbing: interleaved repetitions, min/median/max, JSON + markdown results."""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import statistics
from typing import Any

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def stats(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def machine() -> dict[str, Any]:
    from gpu_dask_kit import detect

    report = detect()
    return {"host": socket.gethostname(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "mode": report.mode, "gpus": [g.name for g in report.gpus], "platform": platform.platform()}


def write(name: str, payload: dict[str, Any], markdown: str) -> tuple[str, str]:
    """Write bench/results/<date>-<machine>-<name>.json and .md; return the paths."""
    os.makedirs(RESULTS, exist_ok=True)
    tag = f"{datetime.date.today().isoformat()}-{'gpu' if payload['machine']['mode'] == 'gpu' else 'cpu'}{payload['machine']['cpus']}-{name}"
    json_path = os.path.join(RESULTS, tag + ".json")
    md_path = os.path.join(RESULTS, tag + ".md")
    with open(json_path, "w") as f:
        json.dump(payload, f, indent=1)
    with open(md_path, "w") as f:
        f.write(markdown)
    return json_path, md_path
