"""The package's import graph has no cycle (an AST scan of every module, pydeps-like)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gpu_dask_kit

ROOT = Path(gpu_dask_kit.__file__).parent
#: Calls from the session object and the package's ``show()`` into the notebook layer (``session.show()``,
#: ``gpu_dask_kit.show()``, the HTML repr), imported inside the function only when a notebook calls it; the
#: notebook layer imports the session and the public API, not back.
UPWARD_CALLS = {
    ("gpu_dask_kit", "gpu_dask_kit.notebook.widgets"),
    ("gpu_dask_kit.session", "gpu_dask_kit.notebook.widgets"),
    ("gpu_dask_kit.session", "gpu_dask_kit.notebook.reprs"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, modules: set[str], top_level_only: bool) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and top_level_only:
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
            visit(child, depth + 1)

    visit(ast.parse(path.read_text()), 0)
    return {m for m in found if m in modules and m != name}


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    paths = [p for p in ROOT.rglob("*.py") if "labextension" not in p.relative_to(ROOT).parts[:1]]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules, top_level_only) for p in paths}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_scan_sees_the_layers():
    graph = _graph(top_level_only=False)
    assert "gpu_dask_kit.plan" in graph["gpu_dask_kit.session"]
    assert (
        "gpu_dask_kit.session" in graph["gpu_dask_kit.integrations.labextension"]
        or "gpu_dask_kit.deploy.local" in graph["gpu_dask_kit.integrations.labextension"]
    )
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle_at_import_time():
    assert _cycle(_graph(top_level_only=True)) is None


def test_no_import_cycle_counting_imports_inside_functions():
    graph = _graph(top_level_only=False)
    for source, target in UPWARD_CALLS:
        graph.get(source, set()).discard(target)
    assert _cycle(graph) is None


def test_planner_and_records_import_no_deploy_or_session_code():
    graph = _graph(top_level_only=False)
    for pure in ("gpu_dask_kit.plan", "gpu_dask_kit.registry", "gpu_dask_kit.processes", "gpu_dask_kit.environment"):
        assert not {m for m in graph[pure] if m.startswith(("gpu_dask_kit.deploy", "gpu_dask_kit.session"))}, pure


def test_a_worker_unpickling_the_kits_plugins_imports_no_session_code():
    """The package root loads its public names on first use (PEP 562), so a worker process that unpickles
    ``gpu_dask_kit.plugins.KitMetrics`` does not import the session, the planner or the deploy targets."""
    import subprocess
    import sys

    code = (
        "import sys, gpu_dask_kit.plugins\n"
        "print(sorted(m for m in sys.modules if m.startswith('gpu_dask_kit')))\n"
        "from gpu_dask_kit import start_cluster, ClusterOptions\n"
        "print('gpu_dask_kit.session' in sys.modules, sorted(set(gpu_dask_kit.__all__) - set(dir(gpu_dask_kit))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    loaded = ast.literal_eval(out[0])
    assert not [m for m in loaded if m.startswith(("gpu_dask_kit.session", "gpu_dask_kit.plan", "gpu_dask_kit.deploy"))], loaded
    assert out[1] == "True []"
    try:
        gpu_dask_kit.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no attribute 'no_such_name'" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


#: A ``_name`` read on an object that is not ``self``/``cls`` (or through getattr).
PRIVATE = re.compile(r"""getattr\([^,]+,\s*["'](_[a-z]\w*)|(?<![\w.])(?!self\b|cls\b)[A-Za-z_]\w*\.(_[a-z]\w*)""")
#: ``_name`` reads on objects that are not ``self``/``cls``, allowed with why: the kit's own markers on IPython's shell
#: (written and read by the same module), and KitPanel's field set by ``show()`` in the module that defines KitPanel.
PRIVATE_ALLOWED = {
    ("clients.py", "_gpu_dask_kit_client_watch"),
    ("hints.py", "_gpu_dask_kit_made"),
    ("hints.py", "_gpu_dask_kit_hints"),
    ("hints.py", "_gpu_dask_kit_track"),
    ("__init__.py", "_shown_in"),
    ("guard.py", "_getframe"),
}


def test_no_private_attribute_of_another_modules_object_is_read():
    """No reach-ins (``cluster._adaptive``, ``session._closed`` from another module, ``getattr(x, "_y")``)."""
    found = []
    for path in ROOT.rglob("*.py"):
        if "labextension" in path.relative_to(ROOT).parts[:1]:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            for match in PRIVATE.finditer(code):
                name = match.group(1) or match.group(2)
                if (path.name, name) not in PRIVATE_ALLOWED:
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_private_scan_finds_a_reach_in():
    assert PRIVATE.search('adaptive = getattr(cluster, "_adaptive", None)') and PRIVATE.search("x = session._closed")
    assert not PRIVATE.search("self._closed = True") and not PRIVATE.search("value.__class__")
