"""The public API, import hygiene, and the conda environment kept in step with pyproject."""

import os
import re
import subprocess
import sys
import tomllib

import yaml

import gpu_dask_kit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_public_api_is_pinned():
    assert gpu_dask_kit.__all__ == [
        "__version__",
        "ClusterOptions",
        "ClusterSession",
        "EnvironmentReport",
        "KitError",
        "OptionError",
        "ClusterStartError",
        "ConnectError",
        "KitWarning",
        "detect",
        "start_cluster",
        "current_session",
        "add_cluster_args",
        "start_cluster_from_args",
        "show",
    ]
    for name in gpu_dask_kit.__all__:
        assert hasattr(gpu_dask_kit, name), name
    assert os.path.exists(os.path.join(os.path.dirname(gpu_dask_kit.__file__), "py.typed"))


def test_import_is_light_and_side_effect_free(tmp_path):
    code = (
        "import sys, os; import gpu_dask_kit; "
        "heavy = [m for m in ('cupy', 'cudf', 'rmm', 'cuml', 'dask_cuda', 'ipywidgets', 'jupyter_server', 'distributed') if m in sys.modules]; "
        "print(heavy)"
    )
    env = dict(os.environ, HOME=str(tmp_path), XDG_RUNTIME_DIR="", GPU_DASK_KIT_RUNTIME_DIR="")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=tmp_path)
    assert out.stdout.strip() == "[]"
    assert list(tmp_path.iterdir()) == []  # nothing written to the (fake) home or cwd


def _names(requirements):
    return {re.split(r"[<>=!\[ ;]", r.strip(), maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_environment_yml_names_the_same_packages_as_pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    with open(os.path.join(ROOT, "environment.yml")) as f:
        env = yaml.safe_load(f)
    conda = _names(d for d in env["dependencies"] if isinstance(d, str)) - {"python", "cuda-version", "pip"}
    core = _names(project["dependencies"])
    gpu = {re.sub(r"-cu1[23]$", "", n) for n in _names(project["optional-dependencies"]["gpu-cu12"])}
    gpu = {"cupy" if n.startswith("cupy") else n for n in gpu}
    assert conda == core | gpu, f"only in environment.yml: {conda - core - gpu}; only in pyproject: {(core | gpu) - conda}"
    assert "rapidsai" in env["channels"] and "conda-forge" in env["channels"]


def test_gpu_extras_match_each_other():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]

    def strip(reqs):
        return {re.sub(r"-cu1[23]$|-cuda1[23]x$", "", n) for n in _names(reqs)}

    assert strip(extras["gpu-cu12"]) == strip(extras["gpu-cu13"]) == {"dask-cuda", "cudf", "dask-cudf", "cuml", "rmm", "cupy"}
    assert "dask-cuda[cu12]" in " ".join(extras["gpu-cu12"]) and "dask-cuda[cu13]" in " ".join(extras["gpu-cu13"])


def test_cpu_install_does_not_pull_cuda_wheels():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        core = _names(tomllib.load(f)["project"]["dependencies"])
    assert not core & {"dask-cuda", "cupy", "rmm", "cudf", "cuml"}, core
