"""Structure of the teaching notebooks (DESIGN.md rule 12), checked without executing them.

Executing them is nbval's job (`pytest --nbval notebooks ...`) and the venue check's (`gpu-dask-kit check`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
EXPECTED = [
    "00_start_here",
    "01_gpu_cluster_setup",
    "02_arrays_and_svd",
    "03_dataframes_groupby",
    "04_map_partitions",
    "05_delayed_regressions",
    "06_persist_vs_compute",
    "07_multi_gpu_etl",
    "08_scripts_and_clusters",
    "09_gpu_first",
]
#: Removed or deprecated APIs that old GPU-Dask notebooks still use (DESIGN.md, "Things users complain about").
REMOVED_APIS = ["rmm.rmm_cupy_allocator", "from_dask_dataframe", "jit_unspill", "rmm.reinitialize(pool_allocator"]
IGNORE_MARKER = "# NBVAL_IGNORE_OUTPUT"


def _load(path: Path):
    return nbformat.read(path, as_version=4)


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request):
    return request.param, _load(request.param)


def test_the_expected_notebooks_exist():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


def test_numbering_is_consecutive_and_names_are_snake_case():
    for index, path in enumerate(NOTEBOOKS):
        assert re.fullmatch(r"\d\d_[a-z0-9_]+", path.stem), path.name
        assert int(path.stem[:2]) == index, f"{path.name}: expected number {index:02d}"


def test_readme_outline_lists_every_notebook_once_in_order():
    text = (NOTEBOOK_DIR / "README.md").read_text()
    rows = re.findall(r"^\|\s*\[?`?(\d\d_[a-z0-9_]+)", text, flags=re.MULTILINE)
    assert rows == [p.stem for p in NOTEBOOKS], f"notebooks/README.md table rows {rows}"
    header = text.split("\n|", 1)[1].splitlines()[0].lower()
    for column in ("notebook", "topics", "time", "gpu-only"):
        assert column in header, f"README table needs a {column!r} column: {header}"


def test_title_objectives_and_time_come_first(notebook):
    path, nb = notebook
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    title = first.source.splitlines()[0]
    assert title.startswith(f"# {path.stem[:2]} "), f"{path.name}: the first line should be '# {path.stem[:2]} · Title', got {title!r}"
    assert "**Objectives**" in first.source, f"{path.name}: objectives missing from the first cell"
    assert re.search(r"\*\*Estimated time:\*\* \d+ minutes", first.source), f"{path.name}: estimated time missing"


def test_parameters_cell_sets_scale_from_the_environment_then_the_kit_starts_the_cluster(notebook):
    path, nb = notebook
    code = _code(nb)
    params = code[0]
    assert "parameters" in params.metadata.get("tags", []), f"{path.name}: first code cell should be tagged 'parameters'"
    assert 'SCALE = os.environ.get("GPU_DASK_KIT_SCALE", "small")' in params.source
    assert "FULL" in params.source and "CPU_CLUSTER" in params.source
    starts = [i for i, c in enumerate(code) if "kit.start_cluster(" in c.source]
    assert starts, f"{path.name}: the kit never starts a cluster"
    # Right after the parameters (00 shows the environment report first: two short cells, then the start).
    assert starts[0] <= 3, f"{path.name}: the cluster should start right after the parameters (code cell {starts[0]})"


def test_exercises_have_prompt_answer_cell_then_check_and_no_solution_cell(notebook):
    """Prompt, an answer cell assigning each answer to ``...``, then ``exercises.check``: a plain Run All solves
    nothing, and no cell holds a reference solution (``exercises.solution(key)`` prints one on request)."""
    from gpu_dask_kit.exercises import EXERCISES

    path, nb = notebook
    cells = nb.cells
    keys = []
    for i, cell in enumerate(cells):
        assert "solution" not in cell.metadata.get("tags", []), f"{path.name} cell {i}: no solution cells (Run All would run them)"
        if "exercise" not in cell.metadata.get("tags", []):
            continue
        prompt, check = cells[i - 1], cells[i + 1]
        match = re.search(r"\*\*Exercise (\d\d-\d)\.\*\*", prompt.source)
        assert prompt.cell_type == "markdown" and match, f"{path.name} cell {i}: prompt '**Exercise NN-k.**' missing"
        key = match.group(1)
        assert key.startswith(path.stem[:2]) and key in EXERCISES, f"{path.name}: unknown exercise {key}"
        assert f'exercises.solution("{key}")' in prompt.source, f"{path.name} {key}: the prompt should say how to get the solution"
        for name in EXERCISES[key].names:
            assert re.search(rf"^{name} = \.\.\.$", cell.source, flags=re.MULTILINE), f"{path.name} {key}: {name} = ... missing"
        assert "self-check" in check.metadata.get("tags", []), f"{path.name} cell {i + 1}: the check should follow the answer cell"
        assert f'exercises.check("{key}", globals())' in check.source, f"{path.name} cell {i + 1}: check call missing"
        keys.append(key)
    assert len(keys) >= 2, f"{path.name}: at least two exercises"
    assert keys == sorted(set(keys)), f"{path.name}: exercises numbered in order, each once: {keys}"


def test_last_code_cell_closes_the_session(notebook):
    path, nb = notebook
    last = _code(nb)[-1]
    assert "session.close()" in last.source, f"{path.name}: the last code cell should close the session"


def test_no_removed_apis(notebook):
    path, nb = notebook
    for cell in nb.cells:
        for api in REMOVED_APIS:
            assert api not in cell.source, f"{path.name}: uses the removed API {api!r}"


def test_ignore_markers_are_on_their_own_first_line(notebook):
    """nbval only honours the marker when the comment is exactly NBVAL_IGNORE_OUTPUT."""
    path, nb = notebook
    for cell in _code(nb):
        if "NBVAL_IGNORE_OUTPUT" in cell.source:
            assert cell.source.splitlines()[0] == IGNORE_MARKER, f"{path.name}: {cell.source.splitlines()[0]!r}"


def test_outputs_are_stored_and_free_of_errors(notebook):
    """The notebooks are committed executed (nbval compares against these outputs), in order."""
    path, nb = notebook
    counts = [c.execution_count for c in _code(nb)]
    assert all(isinstance(n, int) for n in counts), f"{path.name}: not executed (refresh with `make notebooks`)"
    assert counts == sorted(counts), f"{path.name}: cells were executed out of order"
    for cell in _code(nb):
        for output in cell.outputs:
            assert output.output_type != "error", f"{path.name}: stored error output {output.get('ename')}"
            text = output.get("text", "")
            assert "Traceback" not in text, f"{path.name}: a traceback in stored output"


def test_trailing_semicolons_are_not_used_to_hide_output(notebook):
    path, nb = notebook
    for cell in _code(nb):
        lines = [line for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#")]
        if lines:
            assert not lines[-1].rstrip().endswith(";"), f"{path.name}: assign to _ instead of a trailing ';'"


def test_machine_dependent_cells_are_ignored(notebook):
    """Timings and dashboard links change every run: such cells carry the ignore marker."""
    path, nb = notebook
    for cell in _code(nb):
        risky = ("perf_counter()" in cell.source and "print" in cell.source) or cell.source.strip().endswith("dashboard_link")
        if risky:
            assert cell.source.startswith(IGNORE_MARKER), f"{path.name}: mark this cell {IGNORE_MARKER}: {cell.source[:80]!r}"


def test_sanitize_file_has_only_complete_pairs():
    text = (NOTEBOOK_DIR / "nbval-sanitize.cfg").read_text()
    regexes = re.findall(r"^regex: (.*)$", text, flags=re.MULTILINE)
    pairs = re.findall(r"^regex: (.*)$\n^replace: (.+)$", text, flags=re.MULTILINE)
    assert regexes and len(pairs) == len(regexes), "every regex needs a non-empty replace: line right after it"
    for regex, _ in pairs:
        re.compile(regex)


#: Text that would give an exercise's answer away (agreed with the exercises in /work/notes/22-contract.md): the
#: reference answer's values in the forms a prompt could quote, and the one line of code that is the answer.
ANSWER_GIVEAWAYS = {
    "00-1": ["N // 10", "(a ** 2).sum()"],
    "05-1": ["y = 2 * x0 - 3 * x1", "y = 2*x0 - 3*x1"],
    "00-2": ["4GiB", "4 GiB", "4294967296"],  # CPU_CLUSTER: two workers of 2 GiB
    "01-2": ["9.6GiB", "9.6 GiB", "9.60 GiB", "10307921510"],
    "02-2": ["360MiB", "360 MiB", "377487360"],
    "03-1": ['groupby("name").y.max()'],
    "04-1": ["df.assign(x_demeaned=", "df.copy()"],
    "04-2": ["41200", "41,200", "41 200"],  # partition 2 at small scale (04's partitions are uneven on purpose)
    "05-2": ["dask.compute(*lazy_fits)"],
    "06-1": ["col_sums.persist()", "to_host(col_sums.compute())", "to_host(col_sums_persisted.compute())"],
    "06-2": ["1.86%", "0.0186"],
    "07-1": ['groupby("name").size()', '["name"].value_counts()'],
    "09-1": ["client.submit(sum, "],
    "09-2": ["4GiB", "4 GiB", "4294967296"],
}


def _gives_away(giveaway: str, text: str) -> bool:
    """``giveaway`` in ``text`` as a whole number or size (``"N // 10"`` is not found in ``"N // 1000"``)."""
    return re.search(r"(?<![\d.])" + re.escape(giveaway) + r"(?!\d)", text) is not None


def test_no_markdown_or_stored_output_gives_an_answer_away(notebook):
    """Beyond the prompt: no prose and no stored output of the notebook quotes an answer (review 2: 04's
    partitions all had 43,200 rows, so any printed partition size was 04-2's answer)."""
    path, nb = notebook
    keys = [key for key in ANSWER_GIVEAWAYS if key.startswith(path.stem[:2])]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            text = cell.source
        else:
            text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", []))
        for key in keys:
            for giveaway in ANSWER_GIVEAWAYS[key]:
                assert not _gives_away(giveaway, text), f"{path.name} cell {i}: {giveaway!r} gives {key}'s answer away"


def test_prompts_do_not_contain_their_answers(notebook):
    path, nb = notebook
    for cell in nb.cells:
        match = re.match(r"\*\*Exercise (\d\d-\d)\.\*\*", cell.source) if cell.cell_type == "markdown" else None
        if match:
            for giveaway in ANSWER_GIVEAWAYS.get(match.group(1), []):
                assert giveaway not in cell.source, f"{path.name} {match.group(1)}: the prompt gives the answer away ({giveaway!r})"


def test_memory_thresholds_are_named_not_typed(notebook):
    """Dask's spill/pause thresholds are configuration: prose names the key, a cell reads the value (issue 22)."""
    path, nb = notebook
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "distributed.worker.memory" in cell.source:
            typed = re.findall(r"\b(?:60|70|80|95) ?%", cell.source)
            assert not typed, f"{path.name}: read {typed} from dask.config in a cell instead of typing it"
        if cell.cell_type == "code":
            assert not re.search(r"\b0\.(?:6|7|8|95) \* ", cell.source), f"{path.name}: a typed memory threshold: {cell.source[:80]!r}"


def test_gpu_cells_do_not_mix_numpy_operands_into_dask_arrays(notebook):
    """`da.from_array(numpy)` stays NumPy under array.backend='cupy', and CuPy refuses NumPy operands (PITFALLS)."""
    path, nb = notebook
    for cell in _code(nb):
        assert "da.from_array(" not in cell.source, f"{path.name}: da.from_array does not follow array.backend: {cell.source[:80]!r}"


#: Words a learner should not meet: ``mode`` is gpu/cpu (``session.backend`` is its deprecated alias), and the
#: project's internal names for its reference material ("seed 001") mean nothing outside it (issue 22 review 1).
FORBIDDEN_WORDS = {
    "session.backend": "use session.mode (gpu/cpu); backend is dask's array/dataframe backend",
    "seed 00": "name the source (e.g. the NVTabular documentation example) instead of the project's seed number",
    "no speed-up of": "phrase a ratio below 1 as 'slower: 0.78x'",
}


def test_no_internal_or_deprecated_words(notebook):
    path, nb = notebook
    for i, cell in enumerate(nb.cells):
        for word, instead in FORBIDDEN_WORDS.items():
            assert word not in cell.source, f"{path.name} cell {i}: {word!r}: {instead}"


def test_rmm_options_are_guarded_on_rmm_being_installed(notebook):
    """dask-cuda raises ValueError for rmm_pool_size when RMM is not installed, and the kit refuses it in GPU mode:
    a GPU branch asks for a pool only where ``HAS_RMM`` says RMM is there (found by tests/strictgpu)."""
    path, nb = notebook
    for i, cell in enumerate(_code(nb)):
        asks_pool = re.search(r"""rmm_pool_size["']?\s*[:=]""", cell.source)
        gpu_branch = any(m in cell.source for m in ('== "gpu"', "ON_GPU", "LocalCUDACluster("))
        if asks_pool and gpu_branch:
            assert "HAS_RMM" in cell.source, f"{path.name} code cell {i}: an RMM pool asked for without checking HAS_RMM"


def _names(source: str, kind: type) -> set[str]:
    """Names a cell reads (``ast.Load``) or deletes (``ast.Del``); IPython magics and shell lines are skipped."""
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, kind)}


def test_no_cell_deletes_a_name_another_cell_reads(notebook):
    """``del x`` in one cell makes every other cell that reads ``x`` fail with NameError when a learner runs it
    again (review 2, notebook 06): drop the reference with ``x = None`` and let those cells say what to re-run."""
    path, nb = notebook
    cells = {i: c.source for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    for i, source in cells.items():
        for name in _names(source, ast.Del):
            readers = [j for j, other in cells.items() if j != i and name in _names(other, ast.Load)]
            assert not readers, f"{path.name} cell {i}: `del {name}`, read again in cells {readers}"


def test_as_completed_demo_shows_a_completion_order_other_than_the_submission_order():
    """09's futures section: the stored output says the tasks finished in another order than submitted (review 2)."""
    nb = _load(NOTEBOOK_DIR / "09_gpu_first.ipynb")
    demo = [c for c in _code(nb) if "as_completed(" in c.source]
    assert demo, "09: no as_completed demo"
    text = "".join(o.get("text", "") for c in demo for o in c.outputs)
    assert "another order than they were submitted: True" in text, text
