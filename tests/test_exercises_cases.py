# ruff: noqa: E501  (answer cells are data: each is one learner cell, kept on one line)
"""The answers of the wrong-answer corpus (used by tests/test_exercises_corpus.py; no tests here).

RIGHT[key]: answer cells in at least two different correct styles. WRONG[key]: (what the learner did, answer cell),
at least six per exercise. REVEALS[key](namespace): strings a hint must never contain (the answer, its digits and
size strings, the solution's code).
"""

from __future__ import annotations

from dask.utils import format_bytes

APPROX = "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\n"
ERROR = "(da.linalg.norm(x - approx) / da.linalg.norm(x))"
LIMITS = "session.client.scheduler_info(n_workers=-1)['workers'].values()"
FITS1 = "single_fits = [fit_ols(data_future, (f,)) for f in features]\n"
FITS = "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\n"
DEMEAN = "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\n"
INPLACE = "def demean(df):\n    df['x_demeaned'] = df['x'] - df['x'].mean()\n    return df\n\n"
SLOT = "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False)\n"
FLAGS = "'--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json'"


def _sizes(n: int) -> list[str]:
    """The ways a size shows up: bytes, with commas, format_bytes, and the short unit string."""
    short = f"{n / 2**30:g}GiB" if n >= 2**30 else f"{n / 2**20:g}MiB"
    return [str(n), f"{n:,}", format_bytes(n), short, short.replace("GiB", " GiB").replace("MiB", " MiB")]


def _memory_total(ns):
    return sum(int(w["memory_limit"]) for w in ns["session"].client.scheduler_info(n_workers=-1)["workers"].values())


def _rank10(ns):
    s = ns["s_host"].astype(float)
    e = float(((s[10:] ** 2).sum() / (s**2).sum()) ** 0.5)
    return [f"{e:.3f}", f"{e:.4f}"]


def _fraction(ns):
    e = ns["x"].nbytes / _memory_total(ns)
    return [f"{e:.2%}", f"{e:.3g}"]


def _speed_up(ns):
    m = ns["medians"]
    e = m[min(m)] / m[max(m)]
    return [f"{e:.2f}", f"{e:.3f}"]


RIGHT = {
    "00-1": ["a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum()", "a = da.arange(N, chunks=100_000)\ntotal = da.sum(a * a)"],
    "00-2": [
        f"cluster_memory = sum(w['memory_limit'] for w in {LIMITS})",
        f"cluster_memory = f\"{{sum(w['memory_limit'] for w in {LIMITS}) / 2**30}}GiB\"",
    ],
    "01-1": [
        "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':0')",
        "workshop_options = kit.ClusterOptions(device_memory_limit=0.6, rmm_async=True, dashboard_address='127.0.0.1:0')",
    ],
    "01-2": ["spill_at = '9.6GiB'", "spill_at = int(0.6 * 16 * 2**30)", "spill_at = '9830.4 MiB'"],
    "02-1": [
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nnum, den = dask.compute(da.linalg.norm(x - approx), da.linalg.norm(x))\nrank10_error = float(num / den)",
        APPROX + f"rank10_error = float({ERROR}.compute())",
        "approx = u[:, :10] @ da.diag(s[:10]) @ v[:10]\nrank10_error = (da.linalg.norm(x - approx) / da.linalg.norm(x)).compute().item()",
        # two computes, one per norm: passes with a note (learner review 24: the prompt does not ask for one)
        "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nnum = da.linalg.norm(x - approx).compute()\nrank10_error = float(num / da.linalg.norm(x).compute())",
    ],
    "02-2": ["spill_threshold = dask.config.get('distributed.worker.memory.target') * 600 * 2**20", "spill_threshold = '360MiB'"],
    "03-1": [
        "max_y_by_name = ddf.groupby('name')['y'].max().compute().sort_values()",
        "max_y_by_name = ddf.groupby('name').y.max().compute()",
        "max_y_by_name = ddf.groupby('name').agg({'y': 'max'}).compute()['y']",
    ],
    "03-2": [
        "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "from distributed import wait\nddf_fast = session.client.persist(ddf)\nwait(ddf_fast)\nmean_x_by_name = ddf_fast.groupby('name')['x'].mean().compute()",
        "ddf_fast = dask.persist(ddf)[0]\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        "(ddf_fast,) = dask.persist(ddf)\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
    ],
    "04-1": [
        "import dask.dataframe as dd\ndef demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = dd.from_delayed([dask.delayed(demean)(p) for p in ddf.to_delayed()])",
        DEMEAN + "demeaned = ddf.map_partitions(demean)",
        "def demean(df):\n    df = df.copy()\n    df['x_demeaned'] = df['x'] - df['x'].mean()\n    return df\n\n"
        "demeaned = ddf.map_partitions(demean)\n_ = demeaned.x_demeaned.mean().compute()",
    ],
    "04-2": [
        "rows_in_partition_2 = len(ddf.partitions[2].compute())",
        "rows_in_partition_2 = len(ddf.get_partition(2))",
        "rows_in_partition_2 = ddf.partitions[2].shape[0].compute()",
    ],
    "05-1": [
        FITS1 + "single = dask.compute(*single_fits)\nbest_single_feature = max(single, key=lambda r: r[3])[0][0]",
        FITS1 + "res = session.client.gather(session.client.compute(single_fits))\nbest_single_feature = sorted(res, key=lambda r: r[3])[-1][0][0]",
    ],
    "05-2": [
        FITS + "x0_results = dask.compute(*lazy_fits)",
        FITS + "x0_results = session.client.gather(session.client.compute(lazy_fits))",
        FITS + "x0_results = dask.compute(lazy_fits)[0]",
    ],
    "06-1": [
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums_persisted.compute())",
        "col_sums = x.sum(axis=0)\ncol_sums_persisted = session.client.persist(col_sums)\ncol_sums_local = np.asarray(col_sums_persisted.compute())",
        "(col_sums_persisted,) = dask.persist(da.sum(x, axis=0))\ncol_sums_local = to_host(dask.compute(col_sums_persisted)[0])",
    ],
    "06-2": [
        f"fraction = round(x.nbytes / sum(w['memory_limit'] for w in {LIMITS}), 4)",
        "pct = 100 * x.nbytes / sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())\nfraction = f\"{pct:.2f}%\"",
        f"fraction = x.nbytes / sum(w['memory_limit'] for w in {LIMITS})",
        f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / sum(limits)",
        # session.memory()'s managed bytes while 06-1's 400-byte sums are still held (review 4: rejected at rel 1e-6)
        f"fraction = (x.nbytes + 400) / sum(w['memory_limit'] for w in {LIMITS})",
        f"fraction = f\"{{100 * x.nbytes / sum(w['memory_limit'] for w in {LIMITS})}}%\"",
        f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / sum(limits) * 100 / 100",  # review 8b: a factor that changes nothing
    ],
    "07-1": ["rows_per_name = processed.groupby('name').size().compute()", "rows_per_name = processed['name'].value_counts().compute()"],
    "07-2": [
        "speed_up = medians[1] / medians[max(medians)]",
        "speed_up = float(medians[min(medians)]) / medians[max(medians)]",
        "speed_up = round(medians[1] / medians[max(medians)], 2)",  # review 5: computed, rounded to the digits shown (as 06-2)
        "speed_up = medians[1] / medians[sorted(medians)[-1]]",  # review 8b: the largest size from medians' own keys
    ],
    "08-1": [
        f"args = parser.parse_args([{FLAGS}])\nscript_options = options_from_args(args)",
        "args = parser.parse_args('--n-workers 4 --memory-limit 8GiB --rmm-pool-size 50% --scheduler-file /shared/scheduler.json'.split())\n"
        "script_options = options_from_args(args)",
        f"args = parser.parse_known_args([{FLAGS}])\nscript_options = options_from_args(args[0])",  # review 8b
    ],
    "08-2": [
        SLOT + "slot_workers = session.client.gather(slot_futures)",
        "slot_futures = [session.client.submit(where_am_i, i, resources={'GPU_SLOT': 1}, pure=False) for i in range(4)]\n"
        "slot_workers = [f.result() for f in slot_futures]",
        "with dask.annotate(resources={'GPU_SLOT': 1}):\n    slot_futures = session.client.map(where_am_i, range(4), pure=False)\nslot_workers = session.client.gather(slot_futures)",
    ],
    "09-1": [
        "square_futures = [session.client.submit(square, i) for i in range(10)]\ntotal_future = session.client.submit(sum, square_futures)",
        "square_futures = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, square_futures)",
        "total_future = session.client.submit(sum, session.client.map(square, range(10)))",
    ],
    "09-2": ["partition_bytes = '4GiB'", "partition_bytes = 32 * 2**30 // 8"],
}

WRONG = {
    "00-1": [
        ("review: int32 overflows", "a = da.arange(N, chunks=N // 10, dtype='int32')\ntotal = (a ** 2).sum()"),
        ("NumPy total beside a Dask a", "a = da.arange(N, chunks=N // 10)\ntotal = np.sum(np.arange(N) ** 2)"),
        ("mean, not sum", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).mean()"),
        ("sum, then squared", "a = da.arange(N, chunks=N // 10)\ntotal = a.sum() ** 2"),
        ("100 chunks", "a = da.arange(N, chunks=N // 100)\ntotal = (a ** 2).sum()"),
        ("persisted, not lazy", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum().persist()"),
        ("chunks= read as the number of chunks", "a = da.arange(N, chunks=10)\ntotal = (a ** 2).sum()"),
        ("no Dask: NumPy", "a = np.arange(N)\ntotal = (a ** 2).sum()"),
        ("computed, not lazy", "a = da.arange(N, chunks=N // 10)\ntotal = (a ** 2).sum().compute()"),
        ("typed in by hand", "a = da.arange(N, chunks=N // 10)\ntotal = 333332833333500000"),
        ("a formula, not from a", "a = da.arange(N, chunks=N // 10)\ntotal = (N - 1) * N * (2 * N - 1) // 6"),
        ("sum without squaring", "a = da.arange(N, chunks=N // 10)\ntotal = a.sum()"),
        ("squares, not summed", "a = da.arange(N, chunks=N // 10)\ntotal = a ** 2"),
        ("floats", "a = da.arange(N, chunks=N // 10, dtype=float)\ntotal = (a ** 2).sum()"),
        ("5 chunks", "a = da.arange(N, chunks=N // 5)\ntotal = (a ** 2).sum()"),
    ],
    "00-2": [
        (
            "GiB converted with 10**9",
            "cluster_memory = sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()) / 2**30 * 10**9",
        ),
        (
            "GiB digits without a unit",
            "cluster_memory = str(sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values()) / 2**30)",
        ),
        ("threads, not memory", "cluster_memory = sum(w['nthreads'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())"),
        ("one worker's limit", f"cluster_memory = next(iter({LIMITS}))['memory_limit']"),
        ("GB for GiB, typed", "cluster_memory = '2GB'"),
        ("this machine's memory", "import psutil\ncluster_memory = psutil.virtual_memory().total"),
        ("a list of limits", f"cluster_memory = [w['memory_limit'] for w in {LIMITS}]"),
        ("the number of workers", f"cluster_memory = len(list({LIMITS}))"),
        ("a word", "cluster_memory = 'lots'"),
        ("a fraction", "cluster_memory = 0.6"),
        ("twice as much", f"cluster_memory = 2 * sum(w['memory_limit'] for w in {LIMITS})"),
    ],
    "01-1": [
        ("the share as a whole percent number", "workshop_options = kit.ClusterOptions(device_memory_limit=60, rmm_async=True, dashboard_address=':0')"),
        ("an amount in GiB", "workshop_options = kit.ClusterOptions(device_memory_limit='9GiB', rmm_async=True, dashboard_address=':0')"),
        ("the default dashboard port", "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':8788')"),
        ("the share as the pool", "workshop_options = kit.ClusterOptions(rmm_pool_size=0.6, rmm_async=False, dashboard_address=':0')"),
        ("a dict", "workshop_options = {'device_memory_limit': '60%', 'rmm_async': True, 'dashboard_address': ':0'}"),
        ("a pool, not async", "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_pool_size=0.6, dashboard_address=':0')"),
        ("a fixed port", "workshop_options = kit.ClusterOptions(device_memory_limit='60%', rmm_async=True, dashboard_address=':8787')"),
        ("50%", "workshop_options = kit.ClusterOptions(device_memory_limit='50%', rmm_async=True, dashboard_address=':0')"),
        ("the complement", "workshop_options = kit.ClusterOptions(device_memory_limit=0.4, rmm_async=True, dashboard_address=':0')"),
        ("default allocator", "workshop_options = kit.ClusterOptions(device_memory_limit='60%', dashboard_address=':0')"),
        ("an amount", "workshop_options = kit.ClusterOptions(device_memory_limit='10GiB', rmm_async=True, dashboard_address=':0')"),
    ],
    "01-2": [
        ("review: wrong digits, GB", "spill_at = '10GB'"),
        ("MiB digits off", "spill_at = '9600MiB'"),
        ("the host limit", "spill_at = '8GiB'"),
        ("GB for GiB", "spill_at = '9.6GB'"),
        ("the whole GPU", "spill_at = '16GiB'"),
        ("the fraction", "spill_at = 0.6"),
        ("a percent", "spill_at = '60%'"),
        ("no unit", "spill_at = 9.6"),
        ("the complement", "spill_at = '6.4GiB'"),
        ("decimal bytes", "spill_at = 9.6e9"),
        ("a list", "spill_at = ['9.6GiB']"),
    ],
    "02-1": [
        (
            "the difference computed, NumPy norms",
            "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nd = (x - approx).compute()\nrank10_error = float(np.linalg.norm(d) / np.linalg.norm(x.compute()))",
        ),
        ("theory from the singular values on the host", "rank10_error = float(np.sqrt((s_host[10:] ** 2).sum() / (s_host ** 2).sum()))"),
        (
            "relative to the approximation",
            "k = 10\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\nrank10_error = float((da.linalg.norm(x - approx) / da.linalg.norm(approx)).compute())",
        ),
        (
            "everything gathered, NumPy",
            "xs, us, ss, vs = dask.compute(x, u, s, v)\n"
            "ap = (us[:, :10] * ss[:10]) @ vs[:10]\n"
            "rank10_error = float(np.linalg.norm(xs - ap) / np.linalg.norm(xs))",
        ),
        (
            "NumPy svd of x",
            "xs = x.compute()\n"
            "U, S, V = np.linalg.svd(xs, full_matrices=False)\n"
            "ap = (U[:, :10] * S[:10]) @ V[:10]\n"
            "rank10_error = float(np.linalg.norm(xs - ap) / np.linalg.norm(xs))",
        ),
        (
            "a loop over the blocks",
            APPROX + "sq = sum(float((da.linalg.norm((x - approx).blocks[i]) ** 2).compute()) for i in range(x.numblocks[0]))\n"
            "rank10_error = sq ** 0.5 / float(da.linalg.norm(x).compute())",
        ),
        ("lazy", APPROX + f"rank10_error = {ERROR}"),
        ("rank 9", "k = 9\napprox = (u[:, :k] * s[:k]) @ v[:k, :]\n" + f"rank10_error = float({ERROR}.compute())"),
        ("squared", APPROX + f"rank10_error = float(({ERROR} ** 2).compute())"),
        ("absolute", APPROX + "rank10_error = float(da.linalg.norm(x - approx).compute())"),
        ("one minus", APPROX + f"rank10_error = 1 - float({ERROR}.compute())"),
        ("rounded by hand", APPROX + f"rank10_error = round(float({ERROR}.compute()), 2)"),
        ("a word", "rank10_error = 'small'"),
        ("per column", APPROX + "rank10_error = (da.linalg.norm(x - approx, axis=0) / da.linalg.norm(x, axis=0)).compute()"),
    ],
    "02-2": [
        ("the target of 600 MB", "spill_threshold = 0.6 * 600e6"),
        ("GiB for MiB", "spill_threshold = '360GiB'"),
        ("the terminate fraction", "spill_threshold = dask.config.get('distributed.worker.memory.terminate') * 600 * 2**20"),
        ("the whole limit", "spill_threshold = '600MiB'"),
        ("MB for MiB", "spill_threshold = '360MB'"),
        ("the spill fraction", "spill_threshold = dask.config.get('distributed.worker.memory.spill') * 600 * 2**20"),
        ("the pause fraction", "spill_threshold = 0.8 * 600 * 2**20"),
        ("the fraction itself", "spill_threshold = 0.6"),
        ("a percent", "spill_threshold = '60%'"),
        ("no unit", "spill_threshold = 360"),
        ("a dict", "spill_threshold = {'MiB': 360}"),
    ],
    "03-1": [
        ("review 4: a full sort to read the maxima off the order", 'max_y_by_name = ddf.sort_values("y").groupby("name").y.last().compute()'),
        ("review: set_index, computed, grouped in pandas", "max_y_by_name = ddf.set_index('id').compute().groupby('name').y.max()"),
        ("partitions one by one, pandas", "parts = [p.compute() for p in ddf.to_delayed()]\nmax_y_by_name = pd.concat(parts).groupby('name').y.max()"),
        ("the first rows only", "max_y_by_name = ddf.head(50).groupby('name').y.max()"),
        ("min", "max_y_by_name = ddf.groupby('name').y.min().compute()"),
        ("gathered, pandas", "max_y_by_name = ddf.compute().groupby('name').y.max()"),
        ("one compute per name", "names = ddf.name.unique().compute()\nmax_y_by_name = pd.Series({n: ddf[ddf.name == n].y.max().compute() for n in names})"),
        ("per partition, never combined", "max_y_by_name = ddf.map_partitions(lambda d: d.groupby('name').y.max()).compute()"),
        ("lazy", "max_y_by_name = ddf.groupby('name').y.max()"),
        ("every column", "max_y_by_name = ddf.groupby('name').max().compute()"),
        ("mean", "max_y_by_name = ddf.groupby('name').y.mean().compute()"),
        ("x", "max_y_by_name = ddf.groupby('name').x.max().compute()"),
        ("by id", "max_y_by_name = ddf.groupby('id').y.max().compute()"),
        ("one number", "max_y_by_name = ddf.y.max().compute()"),
        ("a dict", "max_y_by_name = ddf.groupby('name').y.max().compute().to_dict()"),
    ],
    "03-2": [
        (
            "review 4: gathered, sent back as a new frame",
            "import dask.dataframe as dd\nddf_fast = dd.from_pandas(ddf.compute(), npartitions=ddf.npartitions).persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        ),
        ("review: the raw frame persisted", "ddf_fast = raw.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"),
        (
            "review: mean from two computes",
            "ddf_fast = ddf.persist()\nsums = ddf_fast.groupby('name').x.sum().compute()\ncounts = ddf_fast.groupby('name').x.count().compute()\nmean_x_by_name = sums / counts",
        ),
        ("persisted, means from the recipe", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf.groupby('name').x.mean().compute()"),
        (
            "a lazy step on a persisted copy",
            "ddf_fast = ddf.persist().map_partitions(lambda d: d)\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()",
        ),
        ("means per id", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('id').x.mean().compute()"),
        ("means from a gathered copy", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.compute().groupby('name').x.mean()"),
        ("a lazy filter", "ddf_fast = ddf[ddf.x > 0]\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"),
        ("a lazy map", "ddf_fast = ddf.map_partitions(lambda df: df)\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"),
        ("brought to the notebook", "ddf_fast = ddf.compute()\nmean_x_by_name = ddf_fast.groupby('name').x.mean()"),
        ("persisted, fewer rows", "ddf_fast = ddf[ddf.x > 0].persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean().compute()"),
        ("means lazy", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').x.mean()"),
        ("means of y", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.groupby('name').y.mean().compute()"),
        ("a new lazy frame", "ddf_fast = dask.datasets.timeseries(end='2000-01-02')\nmean_x_by_name = ddf.groupby('name').x.mean().compute()"),
        ("one mean", "ddf_fast = ddf.persist()\nmean_x_by_name = ddf_fast.x.mean().compute()"),
    ],
    "04-1": [
        ("review: persisted", "def demean(df):\n    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean).persist()"),
        ("review: columns lost", "def demean(df):\n    return df[['x']].assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean)"),
        (
            "review: the whole frame's mean",
            "m = ddf.x.mean().compute()\ndef demean(df):\n    return df.assign(x_demeaned=df['x'] - m)\n\ndemeaned = ddf.map_partitions(demean)",
        ),
        ("divided by the mean", "def demean(df):\n    return df.assign(x_demeaned=df['x'] / df['x'].mean())\n\ndemeaned = ddf.map_partitions(demean)"),
        ("the median", "demean = lambda df: df.assign(x_demeaned=df['x'] - df['x'].median())\ndemeaned = ddf.map_partitions(demean)"),
        (
            "gathered, pandas, re-uploaded",
            "import dask.dataframe as dd\n"
            "parts = [p.assign(x_demeaned=p.x - p.x.mean()) for p in (ddf.partitions[i].compute() for i in range(ddf.npartitions))]\n"
            "def demean(df):\n"
            "    return df.assign(x_demeaned=df['x'] - df['x'].mean())\n\n"
            "demeaned = dd.from_pandas(pd.concat(parts), npartitions=ddf.npartitions)",
        ),
        ("in place, mapped and computed", INPLACE + "demeaned = ddf.map_partitions(demean)\n_ = demeaned.compute()"),
        (
            "in place on x, computed",
            "def demean(df):\n    df['x'] = df['x'] - df['x'].mean()\n    df['x_demeaned'] = df['x']\n    return df\n\n"
            "demeaned = ddf.map_partitions(demean)\n_ = demeaned.partitions[0].compute()",
        ),
        ("in place, not run yet", INPLACE + "demeaned = ddf.map_partitions(demean)"),
        ("global mean", DEMEAN + "demeaned = ddf.assign(x_demeaned=ddf.x - ddf.x.mean())"),
        ("computed", DEMEAN + "demeaned = ddf.map_partitions(demean).compute()"),
        ("returns nothing", "def demean(df):\n    df.assign(x_demeaned=df['x'] - df['x'].mean())\n\ndemeaned = ddf.map_partitions(lambda df: df)"),
        ("the wrong column", "demean = lambda df: df.assign(x_demeaned=df['y'] - df['y'].mean())\ndemeaned = ddf.map_partitions(demean)"),
        ("a string", "demean = \"df['x'] - df['x'].mean()\"\ndemeaned = ddf"),
    ],
    "04-2": [
        ("every partition's length computed, one picked", "rows_in_partition_2 = list(ddf.map_partitions(len).compute())[2]"),
        ("partitions 0 to 2", "rows_in_partition_2 = len(ddf.partitions[:3])"),
        ("the divisions", "rows_in_partition_2 = len(ddf.divisions)"),
        ("typed in", "rows_in_partition_2 = 144"),
        ("whole frame divided", "rows_in_partition_2 = len(ddf) // ddf.npartitions"),
        ("another partition", "rows_in_partition_2 = len(ddf.partitions[1])"),
        ("gathered", "rows_in_partition_2 = int((ddf.compute().index.date == pd.Timestamp('2000-01-03').date()).sum())"),
        ("the whole frame", "rows_in_partition_2 = len(ddf)"),
        ("partitions", "rows_in_partition_2 = ddf.npartitions"),
        ("lazy", "rows_in_partition_2 = ddf.partitions[2].shape[0]"),
        ("a word", "rows_in_partition_2 = 'many'"),
        ("the index", "rows_in_partition_2 = 2"),
        ("a frame", "rows_in_partition_2 = ddf.partitions[2].compute()"),
        ("half a row", "rows_in_partition_2 = 1.5"),
    ],
    "05-1": [
        (
            "first by name",
            "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = sorted(res, key=lambda r: r[0])[0][0][0]",
        ),
        (
            "the largest intercept",
            "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[2])[0][0]",
        ),
        (
            "dask.compute per fit",
            "single_fits = [fit_ols(data_future, (f,)) for f in features]\nres = [dask.compute(f)[0] for f in single_fits]\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]",
        ),
        (
            "the frame, not data_future",
            "single_fits = [fit_ols(df, (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]",
        ),
        ("a tuple", FITS1 + "res = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0]"),
        ("typed from the formula", FITS1 + "best_single_feature = 'x1'"),
        ("one compute per fit", FITS1 + "res = [f.compute() for f in single_fits]\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"),
        ("no Dask", FITS1 + "res = [fit_one(df, (f,)) for f in features]\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]"),
        ("lowest R²", FITS1 + "res = dask.compute(*single_fits)\nbest_single_feature = min(res, key=lambda r: r[3])[0][0]"),
        (
            "pairs",
            "single_fits = [fit_ols(data_future, ('x0', f)) for f in features[1:]]\nres = dask.compute(*single_fits)\n"
            "best_single_feature = max(res, key=lambda r: r[3])[0][0]",
        ),
        ("the results", FITS1 + "best_single_feature = dask.compute(*single_fits)"),
        ("largest coefficient", FITS1 + "res = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[1][0])[0][0]"),
        (
            "one future per fit",
            FITS1 + "res = [session.client.compute(f).result() for f in single_fits]\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]",
        ),
        (
            "review 8b: a scatter per call",
            "single_fits = [fit_ols(session.client.scatter(df), (f,)) for f in features]\nres = dask.compute(*single_fits)\nbest_single_feature = max(res, key=lambda r: r[3])[0][0]",
        ),
    ],
    "05-2": [
        (
            "review 8b: a scatter per call",
            "lazy_fits = [fit_ols(session.client.scatter(df), ('x0', f)) for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)",
        ),
        ("review 5: the list as ONE argument (a 1-tuple holding the list)", FITS + "x0_results = dask.compute(lazy_fits)"),
        ("review: x0 second", "lazy_fits = [fit_ols(data_future, (f, 'x0')) for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"),
        ("two features only", "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features[1:3]]\nx0_results = dask.compute(*lazy_fits)"),
        (
            "dask.compute per fit",
            "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\nx0_results = [dask.compute(l)[0] for l in lazy_fits]",
        ),
        (
            "one delayed list, never computed",
            "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features if f != 'x0']\nx0_results = dask.delayed(list)(lazy_fits)",
        ),
        ("the frame, not data_future", "lazy_fits = [fit_ols(df, ('x0', f)) for f in features if f != 'x0']\nx0_results = dask.compute(*lazy_fits)"),
        ("one compute per fit", FITS + "x0_results = [l.compute() for l in lazy_fits]"),
        ("no Dask", FITS + "x0_results = [fit_one(df, ('x0', f)) for f in features if f != 'x0']"),
        ("two calls", FITS + "x0_results = dask.compute(*lazy_fits[:2]) + dask.compute(*lazy_fits[2:])"),
        ("one future per fit", FITS + "x0_results = [session.client.compute(l).result() for l in lazy_fits]"),
        ("still lazy", FITS + "x0_results = lazy_fits"),
        (
            "every pair",
            "import itertools\nlazy_fits = [fit_ols(data_future, p) for p in itertools.combinations(features, 2)]\nx0_results = dask.compute(*lazy_fits)",
        ),
        (
            "futures, not delayed",
            "lazy_fits = session.client.compute([fit_ols(data_future, ('x0', f)) for f in features[1:]])\nx0_results = session.client.gather(lazy_fits)",
        ),
        ("x0 with itself", "lazy_fits = [fit_ols(data_future, ('x0', f)) for f in features]\nx0_results = dask.compute(*lazy_fits)"),
    ],
    "06-1": [
        (
            "review 4: x through the notebook and back",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = da.from_array(to_host(x.compute()), chunks=x.chunks).sum(axis=0).persist()\ncol_sums_local = to_host(col_sums_persisted.compute())",
        ),
        (
            "review 4: the sums through the notebook and back",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = da.from_array(to_host(col_sums.compute())).persist()\ncol_sums_local = to_host(col_sums_persisted.compute())",
        ),
        (
            "review 3: the sums computed again, not read from col_sums_persisted",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(col_sums.compute())",
        ),
        (
            "review: x computed, NumPy sum",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.compute()).sum(axis=0)",
        ),
        (
            "review: one compute per column",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = np.array([x[:, i].sum().compute() for i in range(N_COLS)])",
        ),
        (
            "review: blocks one by one",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = sum(to_host(x.blocks[i].compute()).sum(axis=0) for i in range(x.numblocks[0]))",
        ),
        (
            "review: x persisted, computed, NumPy sum",
            "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.persist().compute()).sum(axis=0)",
        ),
        ("means", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.mean(axis=0).compute())"),
        ("the persisted means", "col_sums = x.sum(axis=0)\ncol_sums_persisted = x.mean(axis=0).persist()\ncol_sums_local = to_host(col_sums.compute())"),
        ("lazy, not persisted", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums\ncol_sums_local = to_host(col_sums.compute())"),
        ("computed, not persisted", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.compute()\ncol_sums_local = to_host(col_sums.compute())"),
        ("local still lazy", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = col_sums"),
        ("local persisted", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = col_sums.persist()"),
        ("a list", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = col_sums.compute().tolist()"),
        ("lazy sum of persisted x", "col_sums = x.sum(axis=0)\ncol_sums_persisted = x.persist().sum(axis=0)\ncol_sums_local = to_host(col_sums.compute())"),
        ("row sums", "col_sums = x.sum(axis=0)\ncol_sums_persisted = col_sums.persist()\ncol_sums_local = to_host(x.sum(axis=1).compute())"),
    ],
    "06-2": [
        ("review 4: x computed to read its size", f"fraction = x.compute().nbytes / sum(w['memory_limit'] for w in {LIMITS})"),
        ("review 4: the limits typed in", "fraction = x.nbytes / (2*2*2**30)"),
        ("review 4's typed limits, as this corpus' cluster has them (accepted before)", "fraction = x.nbytes / (2*2**30)"),
        ("the limits typed in GB", "fraction = x.nbytes / (2 * 1e9)"),
        (
            "the limits times the target",
            f"fraction = x.nbytes / (dask.config.get('distributed.worker.memory.target') * sum(w['memory_limit'] for w in {LIMITS}))",
        ),
        ("x in GiB", "fraction = x.nbytes / 2**30"),
        ("one chunk", "fraction = x.blocks[0].nbytes / sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())"),
        ("bits", "fraction = 8 * x.nbytes / sum(w['memory_limit'] for w in session.client.scheduler_info(n_workers=-1)['workers'].values())"),
        ("typed, rounded", "fraction = 0.0093"),
        ("typed percent", "fraction = '0.93%'"),
        ("a percent without %", f"fraction = 100 * x.nbytes / sum(w['memory_limit'] for w in {LIMITS})"),
        ("upside down", f"fraction = sum(w['memory_limit'] for w in {LIMITS}) / x.nbytes"),
        ("one worker", f"fraction = x.nbytes / next(iter({LIMITS}))['memory_limit']"),
        ("elements, not bytes", f"fraction = x.size / sum(w['memory_limit'] for w in {LIMITS})"),
        ("machine memory", "import psutil\nfraction = x.nbytes / psutil.virtual_memory().total"),
        ("a word", "fraction = 'some'"),
        ("a list", f"fraction = [x.nbytes / sum(w['memory_limit'] for w in {LIMITS})]"),
        ("rounded by hand", "fraction = '0.01%'"),
        ("computed, rounded to one digit", f"fraction = round(x.nbytes / sum(w['memory_limit'] for w in {LIMITS}), 3)"),
        ("review 8b: the worker count in a slice", f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / sum(limits[:2])"),
        ("review 8b: one limit times the workers", f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / (len(limits) * min(limits))"),
        ("review 8b: MiB over GiB", f"limits = [w['memory_limit'] for w in {LIMITS}]\nfraction = x.nbytes / 2**20 / (sum(limits) / 2**30)"),
    ],
    "07-1": [
        ("review: value_counts per partition, never combined", "rows_per_name = processed.map_partitions(lambda d: d['name'].value_counts()).compute()"),
        ("half the counts", "rows_per_name = processed.groupby('name').size().compute() // 2"),
        ("persisted, brought back, pandas", "rows_per_name = processed.persist().compute().groupby('name').size()"),
        ("the first rows", "rows_per_name = processed.head(500).groupby('name').size()"),
        ("no Dask: pandas", "rows_per_name = pd.read_parquet(PROCESSED).groupby('name').size()"),
        ("gathered, then counted", "rows_per_name = dd.read_parquet(PROCESSED).compute()['name'].value_counts()"),
        (
            "one compute per code",
            "rows_per_name = pd.Series({c: int((processed['name'] == c).sum().compute()) for c in lookups['name'].values()})",
        ),
        ("grouped by another column", "rows_per_name = processed.groupby('x').size().compute()"),
        ("lazy", "rows_per_name = processed.groupby('name').size()"),
        ("a DataFrame", "rows_per_name = processed.groupby('name').count().compute()"),
        ("the raw input", "rows_per_name = raw.groupby('name').size().compute()"),
        ("distinct values", "rows_per_name = processed['name'].drop_duplicates().compute()"),
        ("one number", "rows_per_name = len(processed)"),
        ("a sum of a column", "rows_per_name = processed.groupby('name').x.sum().compute()"),
        ("a word", "rows_per_name = 'name'"),
    ],
    "07-2": [
        ("typed in full", "speed_up = 1.621761658031088"),
        ("rounded to a whole number", "speed_up = round(medians[1] / medians[max(medians)])"),
        ("the median of the cluster sizes", "import statistics\nspeed_up = statistics.median(medians) / medians[max(medians)]"),
        ("time saved as a share", "speed_up = (medians[1] - medians[max(medians)]) / medians[1]"),
        ("sum of all times", "speed_up = sum(medians.values()) / medians[1]"),
        ("typed", "speed_up = 1.62"),
        ("a string", "speed_up = '1.62x'"),
        ("inverse", "speed_up = medians[max(medians)] / medians[1]"),
        ("efficiency", "speed_up = medians[1] / medians[max(medians)] / max(medians)"),
        ("a difference", "speed_up = medians[1] - medians[max(medians)]"),
        ("typed, rounded", "speed_up = 1.6"),
        ("the ideal", "speed_up = '2x'"),
        ("a percent", "speed_up = '62%'"),
        ("a word", "speed_up = 'fast'"),
        ("review 8b: the largest size as a count of entries", "speed_up = medians[1] / medians[len(medians)]"),
        ("review 8b: the largest size written out", "speed_up = medians[1] / medians[2]"),
    ],
    "08-1": [
        (
            "review: a Namespace written by hand",
            "import argparse\nargs = argparse.Namespace(n_workers=4, memory_limit='8GiB', rmm_pool_size=0.5, scheduler_file='/shared/scheduler.json')\nscript_options = options_from_args(args)",
        ),
        (
            "review 8b: the device limit instead of the host limit",
            "args = parser.parse_args(['--n-workers', '4', '--device-memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json'])\nscript_options = options_from_args(args)",
        ),
        (
            "MiB that is not 8 GiB",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8000MiB', '--rmm-pool-size', '0.5', '--scheduler-file', '/shared/scheduler.json'])\nscript_options = options_from_args(args)",
        ),
        (
            "a pool of 50",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '50', '--scheduler-file', '/shared/scheduler.json'])\nscript_options = options_from_args(args)",
        ),
        (
            "a relative scheduler file",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5', '--scheduler-file', 'scheduler.json'])\nscript_options = options_from_args(args)",
        ),
        ("a typed dict", "script_options = {'n_workers': 4, 'memory_limit': '8GiB', 'rmm_pool_size': 0.5, 'scheduler_file': '/shared/scheduler.json'}"),
        ("the Namespace", f"args = parser.parse_args([{FLAGS}])\nscript_options = args"),
        ("GB for GiB", f"args = parser.parse_args([{FLAGS.replace('8GiB', '8GB')}])\nscript_options = options_from_args(args)"),
        (
            "2 workers",
            f"args = parser.parse_args([{FLAGS.replace(chr(39) + '4' + chr(39), chr(39) + '2' + chr(39))}])\nscript_options = options_from_args(args)",
        ),
        ("a pool amount", f"args = parser.parse_args([{FLAGS.replace('0.5', '8GiB')}])\nscript_options = options_from_args(args)"),
        (
            "no scheduler file",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5'])\nscript_options = options_from_args(args)",
        ),
        ("an extra flag", f"args = parser.parse_args([{FLAGS}, '--threads-per-worker', '2'])\nscript_options = options_from_args(args)"),
        ("the flags as text", "script_options = '--n-workers 4 --memory-limit 8GiB'"),
        (
            "review 3: a flag set by hand on the parsed Namespace",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5'])\nargs.scheduler_file = '/shared/scheduler.json'\nscript_options = options_from_args(args)",
        ),
        (
            "review 3: setattr on the parsed Namespace",
            "args = parser.parse_args(['--n-workers', '4', '--memory-limit', '8GiB', '--rmm-pool-size', '0.5'])\nsetattr(args, 'scheduler_file', '/shared/scheduler.json')\nscript_options = options_from_args(args)",
        ),
    ],
    "08-2": [
        (
            "half a slot",
            "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 0.5}, pure=False)\nslot_workers = session.client.gather(slot_futures)",
        ),
        ("client.run, no tasks", "slot_futures = []\nslot_workers = list(session.client.run(lambda: 1))"),
        (
            "the resource misspelled",
            "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU-SLOT': 1}, pure=False)\nslot_workers = ['with-slot'] * 4",
        ),
        ("typed names", SLOT + "slot_workers = ['with-slot'] * 4"),
        (
            "pinned to a worker",
            "slot_futures = session.client.map(where_am_i, range(4), workers=['with-slot'], pure=False)\nslot_workers = session.client.gather(slot_futures)",
        ),
        ("no resource", "slot_futures = session.client.map(where_am_i, range(4), pure=False)\nslot_workers = session.client.gather(slot_futures)"),
        (
            "a resource no worker has",
            "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU': 1}, pure=False)\nslot_workers = ['with-slot'] * 4",
        ),
        (
            "two slots per task",
            "slot_futures = session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 2}, pure=False)\nslot_workers = ['with-slot'] * 4",
        ),
        ("not gathered", SLOT + "slot_workers = slot_futures"),
        (
            "8 tasks",
            "slot_futures = session.client.map(where_am_i, range(8), resources={'GPU_SLOT': 1}, pure=False)\n"
            "slot_workers = session.client.gather(slot_futures)",
        ),
        (
            "names, not futures",
            "slot_futures = session.client.gather(session.client.map(where_am_i, range(4), resources={'GPU_SLOT': 1}, pure=False))\n"
            "slot_workers = slot_futures",
        ),
        ("a set", SLOT + "slot_workers = set(session.client.gather(slot_futures))"),
    ],
    "09-1": [
        ("review: off by one", "total_future = session.client.submit(sum, session.client.map(square, range(1, 11)))"),
        ("max, not sum", "total_future = session.client.submit(max, session.client.map(square, range(10)))"),
        ("len, not sum", "total_future = session.client.submit(len, session.client.map(square, range(10)))"),
        ("one graph of delayed calls", "total_future = session.client.compute(dask.delayed(sum)([dask.delayed(square)(i) for i in range(10)]))"),
        ("a list of futures", "total_future = session.client.map(square, range(10))"),
        ("one task does it all", "total_future = session.client.submit(lambda n: sum(square(i) for i in range(n)), 10)"),
        ("gathered first", "squares = session.client.gather(session.client.map(square, range(10)))\ntotal_future = session.client.submit(sum, squares)"),
        ("result() of each", "futs = session.client.map(square, range(10))\ntotal_future = session.client.submit(sum, [f.result() for f in futs])"),
        ("typed in", "total_future = 285"),
        ("scattered", "total_future = session.client.submit(sum, session.client.scatter([i * i for i in range(10)]))"),
        ("brought back", "total_future = session.client.submit(sum, session.client.map(square, range(10))).result()"),
        ("range(8)", "total_future = session.client.submit(sum, session.client.map(square, range(8)))"),
        ("a dask array", "total_future = session.client.compute((da.arange(10) ** 2).sum())"),
        ("delayed", "total_future = dask.delayed(sum)([dask.delayed(square)(i) for i in range(10)])"),
    ],
    "09-2": [
        ("MB for MiB", "partition_bytes = '4000MB'"),
        ("an eighth of a GiB", "partition_bytes = '0.125GiB'"),
        ("bits", "partition_bytes = 4 * 2**30 * 8"),
        ("GB for GiB", "partition_bytes = '4GB'"),
        ("the whole GPU", "partition_bytes = '32GiB'"),
        ("the fraction", "partition_bytes = 0.125"),
        ("a percent", "partition_bytes = '12.5%'"),
        ("a quarter", "partition_bytes = '8GiB'"),
        ("no unit", "partition_bytes = 4"),
        ("a sixteenth", "partition_bytes = '2GiB'"),
        ("a list", "partition_bytes = ['4GiB']"),
    ],
}

REVEALS = {
    "00-1": lambda ns: ["N // 10", "chunks=100000", "chunks=100_000", "(a ** 2).sum()", "333332833333500000"],
    "00-2": lambda ns: _sizes(_memory_total(ns)),
    "01-1": lambda ns: [
        "device_memory_limit='60%'",
        'device_memory_limit="60%"',
        "device_memory_limit=0.6",
        "0.6,",
        "rmm_async=True",
        "dashboard_address=':0'",
    ],
    "01-2": lambda ns: [*_sizes(int(0.6 * 16 * 2**30)), "9.6"],
    "02-1": _rank10,
    "02-2": lambda ns: _sizes(int(0.6 * 600 * 2**20)),
    "03-1": lambda ns: ["groupby('name').y.max()", 'groupby("name").y.max()'],
    "03-2": lambda ns: ["ddf.persist()", ".persist()"],
    "04-1": lambda ns: ["df.assign(x_demeaned=", "df.copy()"],
    "04-2": lambda ns: [str(len(ns["ddf"].partitions[2]))],
    "05-1": lambda ns: ["'x1'", '"x1"'],
    "05-2": lambda ns: ["dask.compute(*lazy_fits)", "compute(*"],
    "06-1": lambda ns: ["col_sums.persist()", "to_host(col_sums.compute())", "to_host(col_sums_persisted.compute())"],
    "06-2": _fraction,
    "07-1": lambda ns: ["groupby('name').size()", 'groupby("name").size()', "['name'].value_counts()", '["name"].value_counts()'],
    "07-2": _speed_up,
    "08-1": lambda ns: [FLAGS, '"--n-workers", "4"'],
    "08-2": lambda ns: ["resources={'GPU_SLOT': 1}", 'resources={"GPU_SLOT": 1}'],
    "09-1": lambda ns: ["285", "client.submit(sum, "],
    "09-2": lambda ns: _sizes(4 * 2**30),
}
