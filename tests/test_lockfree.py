"""gpu_dask_kit.lockfree: on Python 3.11 a cached property that waits for another instance's cached property of the
same class deadlocks (one lock per property for every instance); after ``install()`` it does not, as on 3.12. The
real case (a sort_values whose divisions compute on a LocalCluster whose in-process scheduler needs the same lock)
is tests/exercises/test_judges_hidden_shortcuts.py::test_03_1_*: it hung for ever before."""

from __future__ import annotations

import functools
import sys
import threading

import pytest

from gpu_dask_kit import lockfree


class _Frame:
    def __init__(self, other: _Frame | None = None, ready: threading.Event | None = None):
        self.other, self.ready = other, ready

    @functools.cached_property
    def divisions(self):
        if self.other is not None:  # computing this one needs the other instance's, from another thread
            result = {}
            t = threading.Thread(target=lambda: result.setdefault("v", self.other.divisions))
            t.start()
            t.join(timeout=5)
            return result.get("v", "waited for the lock")
        return (0, 10)


def _other_instance_in_another_thread() -> object:
    return _Frame(other=_Frame()).divisions


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12+ has no lock in cached_property (nothing to show)")
def test_python_311s_cached_property_waits_across_instances_and_the_kits_does_not(monkeypatch):
    # Python's own, with its lock, for the "before" (another test's cluster start may have installed the kit's here);
    # monkeypatch puts back whatever was there after the test
    monkeypatch.setattr(functools.cached_property, "__get__", lockfree.ORIGINAL)
    assert _other_instance_in_another_thread() == "waited for the lock"  # 3.11: the other thread blocked (5 s)
    assert lockfree.install() is True
    assert _other_instance_in_another_thread() == (0, 10)
    assert lockfree.install() is False  # once


def test_starting_a_cluster_installs_it(no_leaks):
    import gpu_dask_kit as kit

    with kit.start_cluster(device="cpu", n_workers=1, verbose=False):
        assert lockfree.installed()
