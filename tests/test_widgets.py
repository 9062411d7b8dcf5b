"""Widgets: view-models from hand-made snapshots (fake GPU numbers included), then the real widgets
in-process against real CPU clusters (ipywidgets objects work without a browser)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import dask.config
import psutil
import pytest

import gpu_dask_kit
from gpu_dask_kit.errors import OptionError
from gpu_dask_kit.monitor import ClusterMemory, WorkerMemory
from gpu_dask_kit.options import OPTION_DOCS, ClusterOptions

from .conftest import kit_children

widgets_mod = pytest.importorskip("gpu_dask_kit.notebook.widgets")
from gpu_dask_kit.notebook.widgets import ClusterControls, KitPanel, MemoryMonitor, form, markup, show  # noqa: E402
from gpu_dask_kit.notebook.widgets import viewmodel as vm  # noqa: E402

GiB = 2**30


def worker(name="0", pid=100, **kw) -> WorkerMemory:
    base = dict(name=name, address=f"tcp://127.0.0.1:{4000 + int(name)}", pid=pid, host_memory_used=1 * GiB, host_memory_limit=10 * GiB, spilled_to_disk=0)
    base.update(kw)
    return WorkerMemory(**base)


def gpu_worker(name="0", used=4 * GiB, limit=int(12.8 * GiB), total=16 * GiB, **kw) -> WorkerMemory:
    return worker(
        name,
        spilled_to_host=2 * GiB,
        device_data=used,
        gpu_total_in_use=used + 9 * GiB,
        rmm_used=used + GiB,
        device_memory_limit=limit,
        device_memory_total=total,
        device_index=int(name),
        rmm_pool_size=8 * GiB,
        **kw,
    )


# -- form --------------------------------------------------------------------------------------------
def test_form_fields_come_from_option_docs_and_config():
    with dask.config.set({"gpu-dask-kit.n-workers": 3, "gpu-dask-kit.memory-limit": "2GiB"}):
        specs = {s.name: s for s in form.form_fields(ClusterOptions.from_config())}
    assert tuple(specs) == form.FORM_FIELDS
    assert specs["n_workers"].value == "3" and specs["memory_limit"].value == "2GiB"
    assert specs["device"].widget == "choice" and specs["enable_cudf_spill"].widget == "flag"
    for name, spec in specs.items():
        assert OPTION_DOCS[name]["help"] in spec.tooltip and OPTION_DOCS[name]["accepted"] in spec.tooltip
    assert "GPU only" in specs["rmm_pool_size"].tooltip and "GPU only" not in specs["device"].tooltip


@pytest.mark.parametrize("name", sorted(form.CHOICES))
def test_every_choice_is_accepted_by_cluster_options(name):
    for choice in form.CHOICES[name]:
        assert getattr(ClusterOptions.from_config(**{name: choice}), name) == choice


@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(device="cpu", n_workers=2, threads_per_worker=1, memory_limit="1536MiB"),
        dict(device_memory_limit="off", rmm_pool_size="0.5", enable_cudf_spill=True, memory_limit=None),
        dict(memory_limit=123456789, rmm_pool_size="4GiB", device_memory_limit="75%"),
    ],
)
def test_form_round_trips_options(options):
    opts = ClusterOptions.from_config(**options)
    values = {s.name: s.value for s in form.form_fields(opts)}
    assert ClusterOptions.from_config(**form.parse_form(values)) == opts


def test_parse_form_passes_only_changes_and_keeps_the_sessions_other_options(tmp_path):
    values = {s.name: s.value for s in form.form_fields(ClusterOptions.from_config())}
    assert form.parse_form(values) == {}  # an untouched form: config defaults, no GPU option "ignored in CPU mode"
    base = ClusterOptions.from_config(device="cpu", local_directory=str(tmp_path), n_workers=2)
    values = {s.name: s.value for s in form.form_fields(base)}
    kwargs = form.parse_form(values, base)
    assert kwargs == {"local_directory": str(tmp_path), "device": "cpu", "n_workers": "2"}
    assert ClusterOptions.from_config(**kwargs) == base  # so Start with an unchanged form reuses the session


@pytest.mark.parametrize("field, text", [("n_workers", "0"), ("memory_limit", "12 parsecs"), ("threads_per_worker", "two")])
def test_parse_form_raises_the_kits_option_error(field, text):
    with pytest.raises(OptionError) as info:
        form.parse_form({field: text})
    assert info.value.parameter == field and str(info.value).startswith(f"{field}=")


def test_button_states():
    assert form.button_disabled(running=True, busy=False, can_scale=True) == dict(start=False, stop=False, restart=False, scale=False)
    assert form.button_disabled(running=True, busy=False, can_scale=False)["scale"] is True
    assert all(form.button_disabled(running=True, busy=True, can_scale=True).values())


# -- monitor view-model ------------------------------------------------------------------------------
@pytest.mark.parametrize("used, expected", [(5, "ok"), (7.99, "ok"), (8, "warn"), (9.49, "warn"), (9.5, "critical"), (12, "critical")])
def test_host_bar_colour_follows_the_memory_limit(used, expected):
    bar = vm.host_bar(worker(host_memory_used=int(used * GiB)))
    assert bar.level == expected and bar.colour == vm.COLOURS[expected]
    assert bar.fraction == pytest.approx(min(used / 10, 1.0), abs=1e-6)


def test_host_bar_without_limit_is_grey():
    bar = vm.host_bar(worker(host_memory_limit=None))
    assert bar.level == "none" and bar.fraction is None and "no limit" in bar.label


def test_device_bar_is_the_data_on_the_device_against_the_spill_limit():
    """The bar is dask-cuda's device data against the spill limit, not NVML's whole-GPU
    figure against the GPU total (which counts pool reservations and other processes)."""
    bar = vm.device_bar(gpu_worker(used=4 * GiB))  # NVML says 13 GiB of 16 in use: not what the bar shows
    assert bar.fraction == pytest.approx(4 / 12.8) and bar.limit_fraction is None and bar.level == "ok"
    assert bar.label == "4.00 GiB / spill at 12.80 GiB"
    assert vm.device_bar(gpu_worker(used=11 * GiB)).level == "warn"  # 86 % of the spill limit
    assert vm.device_bar(gpu_worker(used=int(12.5 * GiB))).level == "critical"  # 98 % of it
    no_spill = vm.device_bar(gpu_worker(used=14 * GiB, limit=None))  # spilling off / unified memory
    assert no_spill.level == "none" and no_spill.fraction is None and no_spill.label == "14.00 GiB (no spill limit)"
    assert vm.device_bar(worker()) is None


def test_monitor_model_cpu_has_the_cpu_mode_line_and_no_gpu_columns():
    memory = ClusterMemory("cpu", 1000.0, (worker("0", host_memory_used=9 * GiB), worker("1", pid=101)))
    model = vm.monitor_model(memory, "No NVIDIA driver was found.")
    assert model.mode_line == "CPU mode: No NVIDIA driver was found."
    assert not model.gpu and model.n_workers == 2 and model.totals["host_memory_used"] == 10 * GiB
    table = markup.monitor_table_html(model)
    assert "GPU memory" not in table and "Spilled to disk" in table
    assert "data-worker='0' data-memory='host' data-level='warn'" in table and vm.COLOURS["warn"] in table
    assert "CPU mode: No NVIDIA driver was found." in markup.monitor_header_html(model)


def test_monitor_model_gpu_shows_every_column():
    memory = ClusterMemory("gpu", 1000.0, (gpu_worker("0"), gpu_worker("1", used=int(12.5 * GiB), spilled_to_disk=GiB)))
    model = vm.monitor_model(memory, "2 GPUs found.")
    assert model.gpu and model.mode_line is None
    assert model.totals["device_data"] == int(16.5 * GiB) and model.totals["spilled_to_host"] == 4 * GiB
    table = markup.monitor_table_html(model)
    for column in ("Data on GPU", "Host memory", "Spilled to host", "Spilled to disk", "RMM in use", "RMM pool", "GPU total in use (all processes)"):
        assert column in table
    assert "data-worker='1' data-memory='device' data-level='critical'" in table
    assert "8.00 GiB" in table and "GPU 1" in table and "21.50 GiB" in table  # pool; NVML's figure of worker 1


def test_history_keeps_the_window_and_the_chart_draws_it():
    history = vm.History(window=60)
    for t in range(0, 120, 10):
        memory = ClusterMemory("gpu", 1000.0 + t, (gpu_worker("0", used=(t + 1) * 2**20),))
        history.add(vm.monitor_model(memory))
    assert len(history) == 7 and history.series("device_data")[0] == (1050.0, 51 * 2**20)
    svg = markup.chart_html(history, vm.monitor_model(memory))
    assert svg.count("<polyline") == 4 and "data-points='7'" in svg and "-1 min" in svg
    cpu = vm.monitor_model(ClusterMemory("cpu", 2000.0, (worker(),)))
    history.clear()
    history.add(cpu)
    assert markup.chart_html(history, cpu).count("<polyline") == 2  # host used and spilled to disk only


def test_status_and_error_markup_escape_text():
    html = markup.status_html(state="running", mode="gpu", n_workers=2, dashboard_link="/user/a&b/proxy/8787/status", reason="<x>")
    assert "href='/user/a&amp;b/proxy/8787/status'" in html and "&lt;x&gt;" in html and "GPU" in html
    assert markup.error_html(None) == "" and "&lt;b&gt;" in markup.error_html("<b>")


def test_importing_the_kit_does_not_import_ipywidgets():
    code = "import sys, gpu_dask_kit; print(json.dumps([m for m in ('ipywidgets', 'gpu_dask_kit.notebook.widgets') if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_show_displays_once_even_as_the_last_expression(monkeypatch):
    import IPython
    import IPython.display

    shown = []

    class Shell:
        execution_count = 7

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell)

    def display(obj, raw=False):  # like IPython's: raw bundles are sent, objects asked to display themselves
        if raw:
            shown.append("view")
        else:
            shown.append(obj)
            obj._ipython_display_()

    monkeypatch.setattr(IPython.display, "display", display)
    panel = show(interval=60)
    try:
        assert isinstance(panel, KitPanel) and shown == [panel, "view"]
        panel._ipython_display_()  # IPython echoing the return value of the same cell: skipped
        assert shown == [panel, "view"]
        Shell.execution_count = 8  # a later cell showing `panel` again does display it
        panel._ipython_display_()
        assert shown[-1] == "view" and len(shown) == 3
    finally:
        panel.close()


# -- in-process integration with real CPU clusters ----------------------------------------------------
def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def fill(controls, **values):
    for name, value in values.items():
        controls.fields[name].value = value


def test_start_and_stop_from_the_widget(no_leaks, runtime_dir):
    controls = ClusterControls()
    assert controls.session is None and controls.stop_button.disabled and not controls.start_button.disabled
    fill(controls, device="cpu", n_workers="2", threads_per_worker="1")
    controls.start_button.click()
    assert controls.busy and controls.start_button.disabled and controls.stop_button.disabled
    assert controls.wait(120) and controls.last_error is None
    session = controls.session
    assert session is gpu_dask_kit.current_session() and session.mode == "cpu"
    assert "data-state='running'" in controls.status.value and session.dashboard_link in controls.status.value
    assert not controls.stop_button.disabled and not controls.scale_button.disabled
    pids = [w.pid for w in session.memory().workers]
    assert len(pids) == 2 and len(list(runtime_dir.glob("*.json"))) == 1

    controls.stop_button.click()
    assert controls.wait(60) and controls.last_error is None
    assert session.closed and gpu_dask_kit.current_session() is None and controls.session is None
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids)
    assert "data-state='stopped'" in controls.status.value and controls.stop_button.disabled
    assert list(runtime_dir.glob("*.json")) == []


@pytest.mark.parametrize("field, text", [("n_workers", "0"), ("memory_limit", "12 parsecs")])
def test_bad_input_shows_the_option_error_and_starts_nothing(no_leaks, field, text):
    controls = ClusterControls()
    fill(controls, device="cpu", **{field: text})
    controls.start_button.click()
    assert not controls.busy and controls.session is None and gpu_dask_kit.current_session() is None
    with pytest.raises(OptionError) as info:
        ClusterOptions.from_config(device="cpu", **{field: text})
    assert controls.last_error == str(info.value)
    assert "gdkw-error" in controls.error.value and f"{field}=" in controls.error.value
    assert kit_children() == no_leaks  # nothing was started


@pytest.mark.skipif(gpu_dask_kit.detect().mode == "gpu", reason="needs a machine without a usable GPU")
def test_error_raised_while_starting_is_shown(no_leaks):
    controls = ClusterControls()
    fill(controls, device="gpu")
    controls.start_button.click()  # passes the form check; the kit refuses it against this machine
    assert controls.wait(60)
    assert controls.last_error.startswith("device='gpu' is not accepted") and controls.session is None
    assert "data-state='stopped'" in controls.status.value and kit_children() == no_leaks


def test_controls_reflect_a_session_started_from_code_and_scale_it(no_leaks):
    session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, threads_per_worker=1, verbose=False)
    controls = ClusterControls()
    assert controls.session is session and controls.values()["n_workers"] == "1" and controls.values()["device"] == "cpu"
    controls.start_button.click()  # the form is unchanged: the running session is reused
    assert controls.wait(60) and controls.session is session and session.is_alive()
    fill(controls, n_workers="2")
    controls.scale_button.click()
    assert controls.wait(120) and controls.last_error is None
    assert session.n_workers == 2 and "<span class='gdkw-workers'>2</span>" in controls.status.value
    fill(controls, n_workers="1")
    controls.restart_button.click()  # a fresh cluster with the form's options; the old one is gone
    assert controls.wait(120) and controls.last_error is None
    assert session.closed and controls.session is gpu_dask_kit.current_session() and controls.session is not session
    assert controls.session.n_workers == 1
    controls.session.close()


def test_monitor_refreshes_in_the_background_and_stops_on_close(no_leaks):
    session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, threads_per_worker=1, verbose=False)
    monitor = MemoryMonitor(session, interval=0.2)
    assert monitor.running and monitor.model is not None and monitor.model.n_workers == 1
    assert monitor.header.value.count("CPU mode") == 1 and "data-memory='host'" in monitor.table.value
    assert wait_until(lambda: monitor.ticks >= 4), monitor.last_error
    assert len(monitor.history) >= 4 and "<polyline" in monitor.chart.value
    thread = monitor._thread
    monitor.close()
    assert not thread.is_alive() and not monitor.running
    ticks = monitor.ticks
    time.sleep(0.5)
    assert monitor.ticks == ticks


def test_monitor_of_a_session_stops_when_the_session_closes(no_leaks):
    session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, threads_per_worker=1, verbose=False)
    monitor = MemoryMonitor(session, interval=0.1)
    session.close()
    assert wait_until(lambda: not monitor.running, timeout=5)
    assert "the cluster was closed" in monitor.header.value and monitor.table.value == ""
    monitor.close()


def test_show_follows_sessions_started_from_code_and_from_the_widget(no_leaks):
    panel = show(display=False, interval=0.1)
    try:
        controls, monitor = panel.controls, panel.monitor
        assert "no cluster running" in monitor.header.value
        session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, threads_per_worker=1, verbose=False)
        assert wait_until(lambda: controls.session is session and monitor.model is not None), monitor.last_error
        assert "data-state='running'" in controls.status.value
        controls.stop_button.click()
        assert controls.wait(60) and wait_until(lambda: monitor.model is None)
        assert monitor.running  # following current_session(): idle, ready for the next cluster
        fill(controls, n_workers="1", threads_per_worker="1")
        controls.start_button.click()
        assert controls.wait(120) and controls.last_error is None
        assert wait_until(lambda: monitor.model is not None and monitor.session is controls.session)
        assert gpu_dask_kit.current_session() is controls.session
    finally:
        panel.close()
    assert not panel.monitor.running


# -- the form comes from the option specs ----------------------------------------------------------------------
def test_form_fields_are_derived_from_the_specs():
    from gpu_dask_kit.options import OPTION_SPECS

    assert form.FORM_FIELDS == tuple(n for n, s in OPTION_SPECS.items() if s.in_form)
    assert form.CHOICES == {n: OPTION_SPECS[n].choices for n in form.FORM_FIELDS if OPTION_SPECS[n].form == "choice"}
    assert {"device", "deploy", "protocol"} <= set(form.CHOICES) and "partition" in form.FORM_FIELDS
    widgets = {s.name: s.widget for s in form.form_fields(ClusterOptions.from_config())}
    assert widgets["enable_cudf_spill"] == "flag" and widgets["job_extra_directives"] == "lines" and widgets["walltime"] == "text"
    specs = {s.name: s for s in form.form_fields(ClusterOptions.from_config())}
    assert specs["partition"].slurm_only and specs["rmm_pool_size"].gpu_only and not specs["n_workers"].gpu_only
    assert specs["partition"].placeholder == "the default partition" and specs["walltime"].value == "01:00:00"


@pytest.mark.parametrize(
    "device, deploy, gpu_available, gpu_shown, slurm_shown",
    [
        ("auto", "local", False, False, False),
        ("auto", "local", True, True, False),
        ("gpu", "local", False, True, False),
        ("cpu", "local", True, False, False),
        ("cpu", "slurm", False, False, True),
        ("gpu", "slurm", False, True, True),
    ],
)
def test_gpu_fields_in_gpu_mode_and_slurm_fields_for_deploy_slurm(device, deploy, gpu_available, gpu_shown, slurm_shown):
    from gpu_dask_kit.options import OPTION_SPECS

    shown = form.visible_fields(device, deploy, gpu_available)
    for name in form.FORM_FIELDS:
        spec = OPTION_SPECS[name]
        expected = (gpu_shown or not spec.gpu_only) and (slurm_shown or not spec.slurm_only)
        assert (name in shown) == expected, name
    assert {"device", "deploy", "n_workers"} <= set(shown)


def test_hidden_fields_are_not_passed_and_lines_round_trip():
    values = {s.name: s.value for s in form.form_fields(ClusterOptions.from_config())}
    values.update(device="cpu", rmm_pool_size="0.5", partition="gpu")  # typed, then hidden by device/deploy
    assert form.parse_form(values, visible=form.visible_fields("cpu", "local", False)) == {"device": "cpu"}
    values.update(deploy="slurm", job_extra_directives="--qos=debug\n\n  --exclusive \n", walltime="30")
    kwargs = form.parse_form(values, visible=form.visible_fields("cpu", "slurm", False))
    assert kwargs == {"device": "cpu", "deploy": "slurm", "partition": "gpu", "walltime": "30", "job_extra_directives": ["--qos=debug", "--exclusive"]}
    opts = ClusterOptions.from_config(**kwargs)
    again = {s.name: s.value for s in form.form_fields(opts)}
    assert again["job_extra_directives"] == "--qos=debug\n--exclusive"
    assert ClusterOptions.from_config(**form.parse_form(again)) == opts


def test_controls_show_and_hide_fields_as_device_and_deploy_change(monkeypatch, no_leaks):
    controls = ClusterControls()
    try:
        shown = {n for n, f in controls.fields.items() if f.layout.display != "none"}
        if not controls.gpu_available:
            assert "rmm_pool_size" not in shown and "device_memory_limit" not in shown
        assert "partition" not in shown and "walltime" not in shown and {"device", "deploy", "n_workers"} <= shown
        controls.fields["deploy"].value = "slurm"
        assert controls.fields["partition"].layout.display is None and controls.fields["walltime"].layout.display is None
        assert isinstance(controls.fields["job_extra_directives"], widgets_mod.controls.widgets.Textarea)
        controls.fields["device"].value = "gpu"
        assert controls.fields["rmm_pool_size"].layout.display is None
        assert controls.fields["gpus_per_job"].layout.display is None
        controls.fields["device"].value = "cpu"
        controls.fields["deploy"].value = "local"
        assert all(controls.fields[n].layout.display == "none" for n in ("rmm_pool_size", "gpus_per_job", "partition"))
        assert controls.visible() == form.visible_fields("cpu", "local", controls.gpu_available)
    finally:
        controls.close()


def test_auto_shows_gpu_fields_where_detect_finds_a_gpu(monkeypatch, no_leaks):
    class Report:
        mode = "gpu"

    monkeypatch.setattr(gpu_dask_kit, "detect", lambda *a, **k: Report())
    controls = ClusterControls()
    try:
        assert controls.gpu_available and controls.fields["device"].value == "auto"
        assert controls.fields["rmm_pool_size"].layout.display is None
    finally:
        controls.close()


# -- every theme, accessible bars, each thing said once -------------------------------------------------------
def _all_markup():
    memory = ClusterMemory("gpu", 1000.0, (gpu_worker("0"), gpu_worker("1", used=int(12.5 * GiB)), worker("2", host_memory_limit=None)))
    model = vm.monitor_model(memory, "2 GPUs found.")
    history = vm.History(300)
    history.add(model)
    cpu = vm.monitor_model(ClusterMemory("cpu", 1000.0, (worker(),)), "CPU mode: no NVIDIA driver.")
    return [markup.status_html(state=s, mode="gpu", n_workers=2, dashboard_link="/x", reason="why") for s in ("running", "stopped", "busy")] + [
        markup.error_html("bad"),
        markup.monitor_header_html(model),
        markup.monitor_header_html(cpu),
        markup.monitor_header_html(None),
        markup.monitor_table_html(model),
        markup.chart_html(history, model),
        markup.STYLE,
    ]


def test_markup_colours_are_jupyterlab_theme_variables():
    import re

    series = {colour for _, _, colour in vm.SERIES}  # the lines' hues, the same in every theme
    declarations = re.findall(r"(background|color|fill|border(?:-left)?)\s*:\s*([^;'\"}]+)", "".join(_all_markup()))
    assert len(declarations) > 15
    for prop, value in declarations:
        value = value.strip()
        assert value.startswith("var(--jp-") or value in series or value.startswith(("1px solid var(--jp-", "3px solid var(--jp-")), (prop, value)
    for colour in vm.COLOURS.values():
        assert colour.startswith("var(--jp-")
    assert "#fafafa" not in "".join(re.findall(r"style='([^']*)'", "".join(_all_markup())))  # the old white chart


def test_bars_are_meters_with_values_and_labels():
    import re

    table = _all_markup()[7]
    meters = re.findall(r"role='meter' aria-label='([^']+)' aria-valuemin='0' aria-valuemax='100' aria-valuenow='(\d+)' aria-valuetext='([^']+)'", table)
    assert ("worker 1 GPU memory", "98", "12.50 GiB / spill at 12.80 GiB (critical)") in meters
    assert ("worker 0 host memory", "10", "1.00 GiB / 10.00 GiB (ok)") in meters
    assert len(meters) == 4  # GPU and host bars of workers 0 and 1; worker 2 has no GPU bar and no host limit:
    assert "role='img' aria-label='worker 2 host memory: 1.00 GiB (no limit)'" in table
    chart = _all_markup()[8]
    assert "role='img' aria-label='Cluster memory, last 30 s: data on GPU 16.50 GiB, host used 3.00 GiB" in chart


def test_thresholds_are_the_shared_memory_warning_levels():
    assert (vm.WARN_AT, vm.CRITICAL_AT) == (vm.MEMORY_WARN, vm.MEMORY_CRITICAL) == (0.8, 0.95)
    monitor = pytest.importorskip("gpu_dask_kit.monitor")
    if hasattr(monitor, "MEMORY_WARN"):
        assert (vm.MEMORY_WARN, vm.MEMORY_CRITICAL) == (monitor.MEMORY_WARN, monitor.MEMORY_CRITICAL)


def test_cpu_mode_is_said_once():
    for reason, line in [
        ("CPU mode: no NVIDIA driver was found.", "CPU mode: no NVIDIA driver was found."),
        ("CPU mode was asked for (device='cpu').", "CPU mode was asked for (device='cpu')."),
        ("the driver reports no GPU", "CPU mode: the driver reports no GPU"),
    ]:
        model = vm.monitor_model(ClusterMemory("cpu", 1000.0, (worker(),)), reason)
        assert model.mode_line == line and markup.monitor_header_html(model).count("CPU mode") == 1
        compact = markup.monitor_header_html(model, compact=True)  # under the controls, whose status says it
        assert "CPU mode" not in compact and "CPU cluster" not in compact and "data-state='live'" in compact


def test_panel_says_cpu_mode_once(no_leaks):
    session = gpu_dask_kit.start_cluster(device="cpu", n_workers=1, threads_per_worker=1, verbose=False)
    panel = show(display=False, interval=0.2)
    try:
        assert wait_until(lambda: panel.monitor.model is not None), panel.monitor.last_error
        text = panel.controls.status.value + panel.monitor.header.value
        assert text.count("CPU mode") == 1 and text.count("CPU</b> cluster") == 1, text
    finally:
        panel.close()
        session.close()
