import numpy as np
import pandas as pd

import gpu_dask_kit as kit
from gpu_dask_kit.compute import LinearRegression, mode, random_array, to_host, xdf, xp


def test_cpu_helpers_without_a_session():
    assert mode() == "cpu"
    assert xp.asarray([1, 2]).__class__ is np.ndarray
    assert isinstance(xdf.DataFrame({"a": [1]}), pd.DataFrame)
    from sklearn.linear_model import LinearRegression as SK

    assert isinstance(LinearRegression(), SK)
    assert to_host(np.ones(2)).tolist() == [1.0, 1.0]


def test_random_array_is_seeded_and_numpy_backed():
    a = random_array((100, 10), chunks=(50, 10), seed=3)
    b = random_array((100, 10), chunks=(50, 10), seed=3)
    assert a.shape == (100, 10) and a.chunks == ((50, 50), (10,))
    assert isinstance(a._meta, np.ndarray)
    np.testing.assert_array_equal(a.compute(scheduler="sync"), b.compute(scheduler="sync"))
    assert not np.array_equal(a.compute(scheduler="sync"), random_array((100, 10), chunks=(50, 10), seed=4).compute(scheduler="sync"))


def test_helpers_follow_the_session(no_leaks):
    with kit.start_cluster(verbose=False, n_workers=1, memory_limit="1GiB") as session:
        assert mode() == session.mode == "cpu"
        model = LinearRegression().fit(np.arange(10.0).reshape(-1, 1), 2 * np.arange(10.0) + 1)
        assert round(float(model.coef_[0]), 6) == 2.0
