"""How a cluster comes to exist: one interface (:class:`~.deployment.Deployment`), one module per target.

A target is a module ``gpu_dask_kit.deploy.<name>`` (``deploy=<name>`` in the options; ``connect`` when a
scheduler address or file is given) with ``start(options, *, started_by, security, report) -> Deployment``:
:mod:`.local` (``LocalCluster`` / ``LocalCUDACluster``), :mod:`.slurm_session` (dask-jobqueue
``SLURMCluster``, ``PBSCluster``, ``SGECluster``, ``LSFCluster``: one table row each in :mod:`.batch`),
:mod:`.gateway` (Dask Gateway), :mod:`.connect` (an existing scheduler). Each plans its workers with
:mod:`gpu_dask_kit.plan` (the one :class:`~gpu_dask_kit.plan.WorkerSpec`) and translates the spec;
the session (:mod:`gpu_dask_kit.session`) holds the Deployment afterwards.
"""
