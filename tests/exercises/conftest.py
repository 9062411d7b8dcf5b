"""Fixtures of the exercise-judge tests: the corpus' in-process cluster (``client``, one per test module) and a real
IPython shell (``shell``) that keeps the kit's record of which cells raised."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from gpu_dask_kit.notebook import outcomes

from ..test_exercises_corpus import client_kept_its_connection, corpus_client  # noqa: F401  (the `client` fixture and its check, for every module here)


@pytest.fixture(name="shell")
def ipython_shell():
    shell = InteractiveShell.instance()
    outcomes.track(shell)  # what start_cluster's extension and the first `from gpu_dask_kit import exercises` do
    yield shell
    InteractiveShell.clear_instance()
