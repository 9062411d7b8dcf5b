"""What only IPython/Jupyter uses: traceback hints (an IPython extension, :mod:`.hints`), HTML reprs from
templates (:mod:`.reprs`) and the widgets (``widgets/``). Importing :mod:`gpu_dask_kit` imports none of it.

``%load_ext gpu_dask_kit.notebook.hints`` turns the hints on by hand; ``start_cluster()`` loads it in IPython.
"""
