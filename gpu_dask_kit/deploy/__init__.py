"""How a cluster comes to exist: :mod:`.local` (LocalCluster / LocalCUDACluster from a plan) and
:mod:`.connect` (an existing scheduler). Each returns stock distributed / dask-cuda objects; the
session (:mod:`gpu_dask_kit.session`) owns them afterwards."""
