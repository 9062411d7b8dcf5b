set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
bash .chunks/gpu-chunks.sh install 2>&1 | tail -1 | cut -c1-200 || exit 1
export PYTHONPATH=/var/tmp/gdk/site:/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c "import numpy, cudf, dask_cudf, pandas, cupy; print('numpy', numpy.__version__, 'cudf', cudf.__version__, 'pandas', pandas.__version__, cudf.DataFrame({'a':[1,2]}).a.sum())" 2>&1 | tail -3 | tee $OUT/cudf_versions.txt
timeout 200 python3 -m pytest tests/test_gpu.py tests/test_gpu_spec.py -v -p no:cacheprovider --timeout 90 -o addopts="-ra" 2>&1 | tail -40 > $OUT/pytest_cudf.txt
grep -E "PASSED|FAILED|SKIPPED|passed|failed|^E " $OUT/pytest_cudf.txt | head -40
timeout 170 python3 bench/gpu_checks/run_nbs.py 03_dataframes_groupby 07_multi_gpu_etl 04_map_partitions 2>&1 | tee $OUT/nb_cudf.txt
