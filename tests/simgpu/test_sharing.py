"""Sharing one multi-GPU machine (simulated, 4 GPUs): other users' processes as NVML lists them, the
instructor's gpus_per_user, pools sized from free memory, a warning without the setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from gpu_dask_kit.environment import detect
from gpu_dask_kit.gpu_plan import resolve_sizes
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

from .fixtures import child_env

pytestmark = pytest.mark.simgpu
GiB = 2**30
OTHER = 999_999  # a PID of "another user" (NVML lists it; nothing of ours)


def plan(**options):
    return make_plan(ClusterOptions.from_config(device="gpu", **options), detect("gpu"))


def test_detection_lists_other_processes_and_the_setting_picks_free_gpus_with_pools_from_free_memory(sim_gpus):
    busy = {"others": [{"pid": OTHER, "used": 8 * GiB}]}
    sim_gpus(4, gpus=[busy, busy, {}, {}], total=16 * GiB, used=0)
    gpus = detect("gpu").gpus
    assert [g.others for g in gpus] == [((OTHER, 8 * GiB),), ((OTHER, 8 * GiB),), (), ()]
    assert [g.memory_free for g in gpus] == [8 * GiB, 8 * GiB, 16 * GiB, 16 * GiB]
    assert gpus[0].holders() == [(OTHER, "?", 8 * GiB)]  # what `gpu-dask-kit doctor` can show (no such process here: "?")

    shared = plan(gpus_per_user=2, device_memory_limit=0.5)
    assert shared.spec.devices == ("2", "3") and shared.spec.device_memory_limit == 8 * GiB
    assert any(n.startswith("Shared machine: 2 GPU(s) per user (least-loaded): GPU 2, GPU 3") for n in shared.notes)
    assert not any(n.startswith("Warning") for n in shared.notes)

    alone = plan(device_memory_limit=0.5)  # without the setting: every GPU, sized from the free memory, and a warning
    assert alone.spec.devices == ("0", "1", "2", "3") and alone.spec.device_memory_limit == 4 * GiB
    pools = resolve_sizes(ClusterOptions.from_config(rmm_pool_size=0.5), list(gpus), [])  # a pool fraction: of the free memory too
    assert pools["rmm_pool_size"] == 4 * GiB
    warnings = [n for n in alone.notes if n.startswith("Warning: GPU 0")]
    assert warnings and f"PIDs {OTHER}" in warnings[0] and "gpus_per_user" in warnings[0]


def test_more_gpus_per_user_than_the_machine_has_is_an_option_error(sim_gpus):
    sim_gpus(2)
    with pytest.raises(Exception, match=r"gpus_per_user=3 is not accepted: expected at most the 2 GPU\(s\)"):
        plan(gpus_per_user=3)


_USER = """
import json, sys
import dask.config
from gpu_dask_kit import start_cluster
from gpu_dask_kit.environment import detect
from gpu_dask_kit.gpu_plan import resolve_sizes
from gpu_dask_kit.options import ClusterOptions
from gpu_dask_kit.plan import make_plan

if __name__ == "__main__":
    with dask.config.set({"gpu-dask-kit.gpus-per-user": 2}):  # the instructor's setting
        if sys.argv[1] == "start":
            with start_cluster(device="gpu", verbose=False) as session:
                print("DEVICES", json.dumps(list(session.plan.spec.devices)), flush=True)
                sys.stdin.readline()  # hold the GPUs until the test says so
        else:
            p = make_plan(ClusterOptions.from_config(device="gpu"), detect("gpu"))
            print("DEVICES", json.dumps(list(p.spec.devices)), "NOTES", json.dumps(p.notes), flush=True)
"""


def test_two_users_with_the_instructor_setting_get_disjoint_gpus(sim_gpus, tmp_path):
    sim_gpus(4, total=16 * GiB, used=0)
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(_USER))
    first = subprocess.Popen([sys.executable, str(script), "start"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        line = first.stdout.readline()
        assert line.startswith("DEVICES"), line
        mine = json.loads(line.split(" ", 1)[1])
        second = subprocess.run([sys.executable, str(script), "plan"], capture_output=True, text=True, env=child_env(), timeout=120)
        theirs = json.loads(second.stdout.split("DEVICES ", 1)[1].split(" NOTES")[0])
        assert len(mine) == len(theirs) == 2 and not set(mine) & set(theirs), (mine, theirs, second.stderr)
    finally:
        first.communicate("close\n", timeout=60)
    assert first.returncode == 0
    assert os.environ.get("GPU_DASK_KIT_SIM_GPUS")  # the fixture's simulation reached both users


def test_doctor_names_who_else_holds_memory_on_each_gpu(sim_gpus, capsys):
    from gpu_dask_kit import cli

    sim_gpus(2, gpus=[{"others": [{"pid": OTHER, "used": 8 * GiB}]}, {}], total=16 * GiB, used=0)
    assert cli.main(["doctor"]) in (0, None)
    out = capsys.readouterr().out
    assert f"in use by PID {OTHER} (?): 8.00 GiB" in out
    assert out.count("in use by PID") == 1  # the idle GPU lists nobody
