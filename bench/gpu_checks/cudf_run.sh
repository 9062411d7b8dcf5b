set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
bash .chunks/gpu-chunks.sh install 2>&1 | tail -3 || exit 1
export PYTHONPATH=/var/tmp/gdk/site:/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c "import cudf, dask_cudf, pandas; print('cudf', cudf.__version__, 'pandas', pandas.__version__)" 2>&1 | tail -2 | tee $OUT/cudf_versions.txt
timeout 200 python3 -m pytest tests/test_gpu.py tests/test_gpu_spec.py -v -p no:cacheprovider --timeout 120 -o addopts="-ra" 2>&1 | tail -60 | tee $OUT/pytest_cudf.txt
timeout 260 python3 bench/gpu_checks/run_nbs.py 03_dataframes_groupby 04_map_partitions 05_delayed_regressions 07_multi_gpu_etl 09_gpu_first 2>&1 | tee $OUT/nb_cudf.txt
timeout 100 python3 -m bench --quick --only workloads --out $OUT/bench 2>&1 | grep -i "dataframe\|speed-up" | tee $OUT/bench_cudf.txt
