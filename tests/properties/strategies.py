"""What the property tests share: example counts scaled by the hypothesis profile, the count of examples each
property ran (written to ``test-artifacts/properties.json`` by this folder's conftest), and the strategies of
bad input.

Example counts are bounded and ``deadline=None`` (this 2-core machine is shared; no timed assertions). Each
count in the test modules is the full profile's (``GPU_DASK_KIT_PROPERTIES=full``, ``make test-properties``);
``make test`` runs the quick profile, a tenth of each (see :func:`examples` and tests/conftest.py). The
``@example`` regressions run in both.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ARTIFACT = Path(__file__).resolve().parents[2] / "test-artifacts" / "properties.json"
FIXTURES_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


def examples(full: int) -> int:
    """The example count for the loaded hypothesis profile: ``full`` scaled by its max_examples / 100 (at least 2)."""
    return max(2, full * settings.default.max_examples // 100)


# --- example accounting ------------------------------------------------------------------------------

_COUNTS: dict[str, dict] = {}


def ran(test: str, max_examples: int, **extra: int) -> None:
    entry = _COUNTS.setdefault(test, {"examples_run": 0, "max_examples": max_examples})
    entry["examples_run"] += 1
    for key, value in extra.items():
        entry[key] = entry.get(key, 0) + value


def recorded_counts() -> dict[str, dict]:
    """The counts of this run, stamped with the time (merged into the artifact by the conftest)."""
    return {name: dict(entry, recorded=time.strftime("%Y-%m-%dT%H:%M:%S")) for name, entry in _COUNTS.items()}


# --- strategies --------------------------------------------------------------------------------------

NASTY = [
    "12 parsecs",
    "²",
    "٣",
    "-1",
    "0",
    "1",
    "3",
    " 2 ",
    "2.5",
    "1e400",
    "1e400 GB",
    "nan",
    "inf",
    "-inf",
    "NaN GB",
    "80%",
    "150%",
    "-5%",
    "0%",
    "4GiB",
    "1 GiB",
    "0.5",
    "1.5",
    "off",
    "auto",
    "none",
    "",
    " ",
    "\x00",
    "\n",
    "../..",
    "/etc/passwd",
    "/proc/self",
    "0.0.0.0",
    "127.0.0.1",
    "localhost",
    "::1",
    ":0",
    ":8787",
    "h:²",
    "127.0.0.1:99999",
    "tcp://",
    "tcp://127.0.0.1:8786",
    "tls://x:1",
    "ucx://h:1",
    "carrier-pigeon://h:1",
    "GPU-abc",
    "MIG-1",
    "0,0",
    "0,1",
    "0, 1",
    "true",
    "yes",
    "maybe",
    "gpu",
    "cpu",
    "tpu",
    "ucx",
    "tcp",
    " GPU ",
    "9" * 5000,
    "1" * 30 + "GB",
    "$(touch /tmp/gdk-pwned)",
    "; rm -rf /",
    "__import__('os').system('true')",
    # SLURM options: time limits, names, directives, interfaces
    "30",
    "0:30",
    "01:00:00",
    "1-12",
    "1-12:30",
    "7-23:59:59",
    "01:60:00",
    "1-24",
    "00:00:00",
    "UNLIMITED",
    "1:2:3:4",
    "slurm",
    "local",
    "debug",
    "gpu_a100",
    "ib0",
    "eth0",
    "--qos=debug",
    "#SBATCH --qos=x",
    "--a\n--b",
    "16GiB",
]

SIZE_STRINGS = st.builds(
    lambda sign, number, space, unit: f"{sign}{number}{space}{unit}",
    st.sampled_from(["", "-", "+"]),
    st.one_of(st.integers(0, 10**25).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr)),
    st.sampled_from(["", " ", "  "]),
    st.sampled_from(["", "B", "kB", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "PB", "%", "parsecs", "gib", "G"]),
)

ADDRESSES = st.builds(
    lambda scheme, host, port: f"{scheme}{host}:{port}",
    st.sampled_from(["", "tcp://", "tls://", "ucx://", "inproc://", "http://", "://"]),
    st.sampled_from(["127.0.0.1", "localhost", "", "[::1]", "h", "0.0.0.0"]),
    st.one_of(st.integers(-5, 70000).map(str), st.text(max_size=6)),
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**80), 2**80),
    st.just(10**400),
    st.floats(),
    st.floats(min_value=0, max_value=2, allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(NASTY),
    SIZE_STRINGS,
    ADDRESSES,
)

WALLTIMES = st.builds(
    lambda d, h, m, sec, form: form.format(d=d, h=h, m=m, s=sec),
    st.integers(0, 10),
    st.integers(0, 30),
    st.integers(0, 70),
    st.integers(0, 70),
    st.sampled_from(["{m}", "{m}:{s:02d}", "{h:02d}:{m:02d}:{s:02d}", "{d}-{h}", "{d}-{h:02d}:{m:02d}", "{d}-{h}:{m}:{s}", "{h}h"]),
)

VALUES = st.one_of(
    SCALARS,
    WALLTIMES,
    st.lists(st.one_of(st.integers(-2, 9), st.text(max_size=5)), max_size=3),
    st.lists(st.one_of(st.sampled_from(["--qos=debug", "--exclusive", "#SBATCH --x", "x", "--a\nb", ""]), st.text(max_size=8)), max_size=3),
    st.lists(st.integers(-2, 9), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.just(object()),
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20) | st.sampled_from(NASTY),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
