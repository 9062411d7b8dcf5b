"""A learner's path: open a workshop notebook in a real JupyterLab, Run All, and get no error.

nbval checks every notebook's outputs in a bare kernel, once, with the exercises solved (`make
test-notebooks`); this runs the entry notebook (with the widgets) the way a learner does, through the UI and
without solving anything, and checks that every code cell ran, that no cell raised, that every self-check
says "Not answered yet", that the widgets rendered, and that the last cell left no cluster behind. (The SVD
notebook ran here too before: its Run All adds no UI path that 00's lacks, and its cells run under nbval.)

    python -m pytest tests/browser/test_notebooks_in_lab.py --confcutdir=tests/browser -p no:cacheprovider
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import open_notebook, run_command, save_screenshot
from test_widgets_browser import accept_kernel_dialog, records, wait_gone

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

STATE = """() => {
  const nb = window.jupyterapp.shell.currentWidget;
  const cells = nb.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  for (const c of cells) {
    for (const o of c.model.outputs.toJSON()) {
      if (o.output_type === 'error') errors.push(`${o.ename}: ${o.evalue}`);
    }
  }
  const checks = cells.filter(c => c.model.sharedModel.getSource().includes('exercises.check('))
    .map(c => c.model.outputs.toJSON().map(o => o.text || '').join(''));
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  return {counts: cells.map(c => c.model.executionCount), errors, checks,
          kernel: kernel ? kernel.status : 'none', name: nb.context.path};
}"""


def run_all(page, timeout: float) -> dict:
    """Run All and wait until every code cell has run (or one raised) and the kernel is idle."""
    run_command(page, "notebook:run-all-cells")
    deadline = time.monotonic() + timeout
    while True:
        state = page.evaluate(STATE)
        done = all(c is not None for c in state["counts"]) or state["errors"]
        if done and state["kernel"] == "idle":
            return state
        if time.monotonic() > deadline:
            return state
        time.sleep(0.5)


@pytest.mark.parametrize("name, widget", [("00_start_here.ipynb", ".gdkw-status")])
def test_run_all_in_jupyterlab_without_errors(lab_page, lab_server, name, widget):
    shutil.copy(NOTEBOOKS / name, lab_server.root_dir / name)
    open_notebook(lab_page, name)
    accept_kernel_dialog(lab_page)
    run_command(lab_page, "notebook:clear-all-cell-outputs")  # the stored outputs must not count
    state = run_all(lab_page, timeout=300)
    save_screenshot(lab_page, f"run-all-{name}")
    assert not state["errors"], f"{name}: a cell raised in JupyterLab: {state['errors']}"
    assert all(c is not None for c in state["counts"]), f"{name}: cells left unexecuted: {state['counts']}"
    # Run All solves nothing: every self-check reports the exercise unanswered (and none raised)
    assert len(state["checks"]) >= 2 and all(t.startswith("Not answered yet") for t in state["checks"]), state["checks"]
    if widget:
        assert lab_page.locator(widget).count() >= 1, f"{name}: the controls widget did not render"
    # the last cell closes the cluster: no record, no worker process
    left = [p["pid"] for r in records(lab_server) for p in r.get("processes", [])]
    assert not records(lab_server) and not wait_gone(left), f"{name}: a cluster outlived its notebook"
    status, sessions = lab_server.api("api/sessions")
    for s in sessions if status == 200 else []:
        if s.get("path", "").endswith(name):
            lab_server.api(f"api/sessions/{s['id']}", method="DELETE")
