"""Integrations with other Jupyter/Dask tools: :mod:`.labextension` (dask-labextension's cluster factory)."""
