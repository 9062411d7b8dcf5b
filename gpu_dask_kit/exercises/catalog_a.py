"""Exercises of notebooks 00-04: reference solutions and judges (see ``gpu_dask_kit.exercises``)."""

from __future__ import annotations

from typing import Any

from .model import Exercise, Hint
from .values import as_bytes, as_fraction, as_number, close, unit_mixup

MAX_TASKS = 2_000  # a graph bigger than this is not computed by a check: it is the mistake to explain


def is_lazy(value: Any) -> bool:
    """True for a Dask collection (something with a task graph)."""
    return hasattr(value, "__dask_graph__") and callable(value.__dask_graph__)


def in_memory(collection: Any) -> bool:
    """True when every partition/chunk of a Dask collection is a future in worker memory (persisted)."""
    from distributed import futures_of

    return len(futures_of(collection)) == collection.npartitions


def host(value: Any) -> Any:
    from ..compute import to_host

    return to_host(value)


def size_answer(value: Any, expected: int, name: str, rel: float = 0.01) -> int:
    """The answer in bytes when it means ``expected``; a :class:`Hint` otherwise."""
    given = as_bytes(value)
    if given is None:
        raise Hint(f"{name} should be a size: a number of bytes or a string such as '360MiB', not {value!r}.")
    if close(given, expected, rel=rel):
        return given
    mixup = unit_mixup(given, expected)
    raise Hint(
        f"{name} is {given:,} bytes, which is not it: {mixup}" if mixup else f"{name} is {given:,} bytes ({_fmt(given)}), expected about {_fmt(expected)}."
    )


def _fmt(n: float) -> str:
    from dask.utils import format_bytes

    return format_bytes(int(n))


# --- 00 · start here ---------------------------------------------------------------------------------


def _judge_00_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    n = int(ns["N"])
    a, total = ans["a"], ans["total"]
    if not (is_lazy(a) and hasattr(a, "numblocks")):
        raise Hint(f"a should be a Dask array (da.arange(N, chunks=...)), not {type(a).__name__}.")
    if tuple(a.shape) != (n,):
        raise Hint(f"a has shape {a.shape}; da.arange(N, ...) has shape ({n},).")
    chunks = a.numblocks[0]
    if chunks > 100:
        raise Hint(
            f"a has {chunks:,} chunks of {a.chunks[0][0]:,} numbers. `chunks=` is the SIZE of a chunk, not "
            f"how many: chunks=10 makes {chunks:,} chunks, hence over {chunks:,} tasks at roughly a "
            f"millisecond of scheduling each, minutes for a sum that takes milliseconds. Use chunks=N // 10. "
            f"Rule of thumb: chunks of 10-100 MB (100 MB-1 GB on a GPU), and far fewer tasks than 100,000."
        )
    if chunks != 10:
        raise Hint(f"a has {chunks} chunks; the exercise asks for 10: chunks=N // 10 (the size of one chunk).")
    expected = (n - 1) * n * (2 * n - 1) // 6
    if is_lazy(total):
        tasks = len(total.__dask_graph__())
        if tasks > MAX_TASKS:
            raise Hint(f"total has {tasks:,} tasks: build it from a, with 10 chunks ((a ** 2).sum()).")
        total = total.compute()
    if isinstance(total, int) or (type(total).__module__ == "numpy" and "int" in type(total).__name__):
        value_ok = int(total) == expected  # exact: a float cannot hold this sum exactly
    else:
        value_ok = close(as_number(total), expected, rel=1e-12)
    if not value_ok:
        raise Hint(f"total is {total!r}, expected {expected}: square, then sum ((a ** 2).sum()).")
    return f"a has 10 chunks and the sum of squares is {expected}."


def _judge_00_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    info = ns["session"].client.scheduler_info(n_workers=-1)["workers"].values()
    expected = sum(int(w["memory_limit"]) for w in info)
    size_answer(ans["cluster_memory"], expected, "cluster_memory")
    return f"the workers may use {_fmt(expected)} of host memory together."


# --- 01 · GPU cluster set-up -------------------------------------------------------------------------


def _judge_01_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    from .. import ClusterOptions

    opts = ans["workshop_options"]
    if not isinstance(opts, ClusterOptions):
        raise Hint(f"workshop_options should be kit.ClusterOptions(...), not {type(opts).__name__}.")
    if not close(as_fraction(opts.device_memory_limit), 0.6, abs_=1e-9):
        raise Hint(f"device_memory_limit is {opts.device_memory_limit!r}: 60% of each GPU is 0.6 or '60%'.")
    if opts.rmm_async is not True:
        raise Hint("use RMM's async allocator: rmm_async=True.")
    if opts.rmm_pool_size is not None:
        raise Hint("no pool together with rmm_async: leave rmm_pool_size out (dask-cuda warns about the pair).")
    if not str(opts.dashboard_address or "").endswith(":0"):
        raise Hint(f"dashboard_address is {opts.dashboard_address!r}: a free port is port 0, ':0'.")
    return "spill above 60% of each GPU, async allocator, dashboard on a free port."


def _judge_01_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    expected = int(0.6 * 16 * 2**30)
    size_answer(ans["spill_at"], expected, "spill_at")
    return f"the worker moves data from GPU to host above {_fmt(expected)}."


# --- 02 · arrays and SVD -----------------------------------------------------------------------------


def _judge_02_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import numpy as np

    value = ans["rank10_error"]
    if is_lazy(value):
        raise Hint("rank10_error is still lazy: float(( ... ).compute()).")
    number = as_number(value)
    if number is None:
        raise Hint(f"rank10_error should be a number (a float), not {type(value).__name__}.")
    s = np.asarray(ns["s_host"], dtype=float)
    expected = float(np.sqrt((s[10:] ** 2).sum() / (s**2).sum()))  # what theory says (Eckart-Young)
    if not close(number, expected, abs_=1e-6):
        raise Hint(
            f"rank10_error is {number:.6f}, expected {expected:.6f}: keep the first 10 columns of u, "
            "values of s and rows of v, and divide norm(x - approx) by norm(x)."
        )
    return f"the rank-10 approximation is off by {expected:.4f} of the norm of x."


def _judge_02_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    import dask

    target = float(dask.config.get("distributed.worker.memory.target"))
    expected = int(target * 600 * 2**20)
    given = as_bytes(ans["spill_threshold"])
    if given is not None and close(given, 600 * 2**20, rel=0.001):
        raise Hint(f"that is the whole limit; a CPU worker starts spilling earlier, at the 'target' fraction (distributed.worker.memory.target = {target}).")
    size_answer(ans["spill_threshold"], expected, "spill_threshold")
    return f"{target:.0%} of 600 MiB is {_fmt(expected)}."


# --- 03 · dataframes and groupby ---------------------------------------------------------------------


def _judge_03_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    got, ddf = ans["max_y_by_name"], ns["ddf"]
    if is_lazy(got):
        raise Hint("max_y_by_name is still lazy: call .compute().")
    if not hasattr(got, "index") or not hasattr(got, "max"):
        raise Hint(f"max_y_by_name should be a Series indexed by name, not {type(got).__name__}.")
    expected = host(ddf.groupby("name").y.max().compute()).sort_index()
    got = host(got)
    if hasattr(got, "columns"):
        raise Hint("that is a DataFrame: select the column y before .max() (ddf.groupby('name').y.max()).")
    if len(got) != len(expected):
        raise Hint(f"expected one value per name ({len(expected)}), got {len(got)} rows: group by 'name'.")
    if not close(float(got.sort_index().sum()), float(expected.sum()), rel=1e-9):
        raise Hint("the values should be the largest y of each name: .y.max(), not mean or x.")
    return f"{len(expected)} names."


def _judge_03_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    fast, means = ans["ddf_fast"], ans["mean_x_by_name"]
    if not (is_lazy(fast) and hasattr(fast, "npartitions")):
        raise Hint(f"ddf_fast should be a Dask DataFrame (ddf.persist()), not {type(fast).__name__}.")
    if not in_memory(fast):
        raise Hint("ddf_fast still has work in its graph: its partitions should be in worker memory (.persist()).")
    if is_lazy(means):
        raise Hint("mean_x_by_name is still lazy: call .compute().")
    expected = host(ns["ddf"].groupby("name").x.mean().compute())
    got = host(means)
    if not hasattr(got, "index") or len(got) != len(expected):
        raise Hint(f"mean_x_by_name should be a Series with one mean per name ({len(expected)}).")
    if not close(float(got.sum()), float(expected.sum()), rel=1e-6, abs_=1e-9):
        raise Hint("those are not the means of x per name: ddf_fast.groupby('name').x.mean().compute().")
    return "the frame is persisted and the means come from it."


# --- 04 · map_partitions -----------------------------------------------------------------------------


def _judge_04_1(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    demean, demeaned, ddf = ans["demean"], ans["demeaned"], ns["ddf"]
    if not callable(demean):
        raise Hint(f"demean should be a function of one partition, not {type(demean).__name__}.")
    sample = ddf.partitions[0].compute()
    columns, x_before = list(sample.columns), host(sample["x"]).copy()
    out = demean(sample)
    if list(sample.columns) != columns or not (host(sample["x"]) == x_before).all():
        raise Hint(
            "demean changed the partition it was given (df[...] = ... on its argument). On a cluster that "
            "partition may be the persisted data itself, which would change for every later cell. Return a "
            "new frame: df.assign(x_demeaned=...), or start with df = df.copy(). (Re-run the cell that "
            "builds ddf if you mapped the mutating version.)"
        )
    if out is None or "x_demeaned" not in getattr(out, "columns", []):
        raise Hint("demean should return the partition with a new column x_demeaned (df.assign(x_demeaned=...)).")
    if not (is_lazy(demeaned) and hasattr(demeaned, "map_partitions")):
        raise Hint(f"demeaned should be the lazy result of ddf.map_partitions(demean), not {type(demeaned).__name__}.")
    for i in (0, 1):
        part = demeaned.partitions[i].compute()
        if abs(float(part["x_demeaned"].mean())) > 1e-9:
            raise Hint(
                f"partition {i}: x_demeaned averages {float(part['x_demeaned'].mean()):.2e}, not 0: subtract the mean of x in that partition, df['x'].mean()."
            )
    return "every partition's x_demeaned averages to 0, and the persisted data is untouched."


def _judge_04_2(ans: dict[str, Any], ns: dict[str, Any]) -> str:
    expected = len(ns["ddf"].partitions[2])
    number = as_number(ans["rows_in_partition_2"])
    if number is None:
        raise Hint(f"rows_in_partition_2 should be a number of rows, not {type(ans['rows_in_partition_2']).__name__}.")
    if int(number) != expected:
        raise Hint(f"{int(number)} is not it: partition 2 is ddf.partitions[2] (counting from 0); len() of it.")
    return f"partition 2 has {expected} rows."


EXERCISES = [
    Exercise(
        "00-1",
        ("a", "total"),
        "import dask.array as da\n\na = da.arange(N, chunks=N // 10)  # chunk SIZE\ntotal = (a ** 2).sum()\n",
        _judge_00_1,
        "a = da.arange(N, chunks=N // 10); total = (a ** 2).sum().",
    ),
    Exercise(
        "00-2",
        ("cluster_memory",),
        'workers = session.client.scheduler_info(n_workers=-1)["workers"].values()\ncluster_memory = sum(w["memory_limit"] for w in workers)\n',
        _judge_00_2,
        "add up the workers' memory limits (a number of bytes, or a string such as '4GiB').",
    ),
    Exercise(
        "01-1",
        ("workshop_options",),
        'workshop_options = kit.ClusterOptions(device_memory_limit="60%", rmm_async=True, dashboard_address=":0")\n',
        _judge_01_1,
        "kit.ClusterOptions(device_memory_limit=..., rmm_async=..., dashboard_address=...).",
    ),
    Exercise("01-2", ("spill_at",), 'spill_at = "9.6GiB"  # 0.6 * 16 GiB\n', _judge_01_2, "60% of 16 GiB, as bytes or a string such as '9.6GiB'."),
    Exercise(
        "02-1",
        ("rank10_error",),
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute())\n",
        _judge_02_1,
        "float((da.linalg.norm(x - approx) / da.linalg.norm(x)).compute()).",
    ),
    Exercise(
        "02-2",
        ("spill_threshold",),
        'import dask\n\nspill_threshold = dask.config.get("distributed.worker.memory.target") * 600 * 2**20\n',
        _judge_02_2,
        "the 'target' fraction (0.6) of 600 MiB, as bytes or a string such as '360MiB'.",
    ),
    Exercise("03-1", ("max_y_by_name",), 'max_y_by_name = ddf.groupby("name").y.max().compute()\n', _judge_03_1, "ddf.groupby('name').y.max().compute()."),
    Exercise(
        "03-2",
        ("ddf_fast", "mean_x_by_name"),
        'ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby("name").x.mean().compute()\n',
        _judge_03_2,
        "ddf_fast = ddf.persist(); then a groupby on ddf_fast, computed.",
    ),
    Exercise(
        "04-1",
        ("demean", "demeaned"),
        'def demean(df):\n    return df.assign(x_demeaned=df["x"] - df["x"].mean())  # a new frame\n\n\ndemeaned = ddf.map_partitions(demean)\n',
        _judge_04_1,
        "def demean(df): return df.assign(x_demeaned=...); demeaned = ddf.map_partitions(demean).",
    ),
    Exercise("04-2", ("rows_in_partition_2",), "rows_in_partition_2 = len(ddf.partitions[2].compute())\n", _judge_04_2, "len(ddf.partitions[2].compute())."),
]
