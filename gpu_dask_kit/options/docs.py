"""What is derived from the option specs as text: ``start_cluster``'s signature and docstring, the
README's option table and the packaged ``gpu-dask-kit.yaml``.

    python -m gpu_dask_kit.options --readme-table   # print the README table
    python -m gpu_dask_kit.options --write          # rewrite README.md's table and gpu-dask-kit.yaml
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from ..config import DEFAULTS_FILE, NON_OPTION_KEYS
from .spec import OPTION_SPECS

__all__ = ["with_option_signature", "options_doc_section", "options_markdown_table", "yaml_text", "write", "main"]

F = TypeVar("F", bound=Callable[..., Any])


def with_option_signature(func: F) -> F:
    """Give a ``**options`` function the real keyword-only signature (every option with its packaged
    default) and append the options' docs to its docstring, so ``help()`` and Shift+Tab show them.

    The function itself is returned (no wrapper): only ``__signature__`` and ``__doc__`` change.
    """
    signature = inspect.signature(func)
    params = list(signature.parameters.values())
    if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        raise TypeError(f"with_option_signature: {func.__qualname__} must end with **options")
    taken = {p.name for p in params}
    options = [
        inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=s.default, annotation=s.annotation)
        for s in OPTION_SPECS.values()
        if s.name not in taken
    ]
    func.__signature__ = signature.replace(parameters=params[:-1] + options)  # type: ignore[attr-defined]
    func.__doc__ = inspect.cleandoc(func.__doc__ or "") + "\n\n" + options_doc_section()
    return func


def options_doc_section() -> str:
    """The "Cluster options" section appended to docstrings (one entry per option, from its spec)."""
    lines = [
        "Cluster options",
        "---------------",
        "Keyword-only. A default shown here can be changed in the dask config (`gpu-dask-kit.*`); explicit arguments win.",
        "",
    ]
    for s in OPTION_SPECS.values():
        lines += [f"{s.name} = {_shown(s.default)}" + (f" ({s.unit})" if s.unit else ""), f"    {s.help()}"]
    return "\n".join(lines)


def _shown(value: Any) -> str:
    return repr(list(value) if isinstance(value, tuple) else value)


def options_markdown_table() -> str:
    """The README's option table: one row per spec, with its packaged default."""
    rows = ["| option (kwarg, `--flag`, config key) | default | unit | accepted | what it does |", "|---|---|---|---|---|"]
    for s in OPTION_SPECS.values():
        notes = (" Per worker." if s.per_worker else "") + (" GPU only." if s.gpu_only else "") + (" Batch jobs only." if s.slurm_only else "")
        rows.append(f"| `{s.name}` | `{_shown(s.default)}` | {s.unit} | {s.accepted} | {s.doc}{notes} |")
    return "\n".join(rows) + "\n"


def yaml_text() -> str:
    """The packaged ``gpu-dask-kit.yaml``: every option's default under its dashed key, with its help."""
    lines = [
        '# Defaults of every gpu-dask-kit option, loaded into dask.config under "gpu-dask-kit".',
        "# GENERATED from gpu_dask_kit/options/spec.py: `python -m gpu_dask_kit.options --write` (tests/test_options.py checks it).",
        "# Instructors override them with a YAML file in ~/.config/dask/ (or $DASK_CONFIG), or with environment",
        "# variables such as DASK_GPU_DASK_KIT__N_WORKERS=2. Explicit arguments always win. Keys are the option",
        "# names with dashes (underscores work too); the CLI flags are the same.",
        "gpu-dask-kit:",
    ]
    for s in OPTION_SPECS.values():
        default = list(s.default) if isinstance(s.default, tuple) else s.default
        lines += [f"  # {s.help()}", f"  {s.config_key.split('.', 1)[1]}: {json.dumps(default)}"]
    for key, (default, text) in NON_OPTION_KEYS.items():
        lines += [f"  # {text} (not a cluster option)", f"  {key}: {json.dumps(default)}"]
    return "\n".join(lines) + "\n"


_TABLE = re.compile(r"(<!-- options-table:.*?-->\n)(.*?)(<!-- end options-table -->)", re.S)


def write(readme: str) -> list[str]:
    """Rewrite the README's table (between its markers) and the packaged YAML; the paths changed."""
    changed = []
    with open(readme) as f:
        text = f.read()
    if not _TABLE.search(text):
        raise SystemExit(f"{readme}: no '<!-- options-table: ... -->' ... '<!-- end options-table -->' markers")
    new = _TABLE.sub(lambda m: m[1] + options_markdown_table() + m[3], text)
    for path, old, content in ((readme, text, new), (DEFAULTS_FILE, open(DEFAULTS_FILE).read(), yaml_text())):
        if old != content:
            with open(path, "w") as f:
                f.write(content)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_dask_kit.options", description="Text derived from the option specs.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--readme-table", action="store_true", help="Print the README's option table (Markdown).")
    what.add_argument("--yaml", action="store_true", help="Print the packaged gpu-dask-kit.yaml.")
    what.add_argument("--doc", action="store_true", help="Print the options section of start_cluster's docstring.")
    what.add_argument("--write", metavar="README", nargs="?", const="README.md", help="Rewrite the table in README (default: README.md) and the packaged YAML.")
    args = parser.parse_args(argv)
    if args.write:
        changed = write(args.write)
        print("\n".join(f"rewrote {p}" for p in changed) or "README table and YAML already up to date")
    else:
        print(options_markdown_table() if args.readme_table else yaml_text() if args.yaml else options_doc_section(), end="")
    return 0
