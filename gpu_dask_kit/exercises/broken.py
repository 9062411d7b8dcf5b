"""An answer cell that does not parse: the names keep the values of an earlier run, so the check judges nothing else.

IPython stores a cell in ``In`` even when it does not compile (an unclosed bracket), and it leaves every name as it
was: the check would otherwise find the previous, parsable answer cell and judge the old value as if it were new.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..notebook.cellreads import cells_making
from ..notebook.hints import CUDF_SIZE, LOCAL_SCHEDULER, import_line, known_error
from ..notebook.outcomes import raised
from ..notebook.skipped import cell_making
from .replay import CELL, TIMING_MAGICS, _assigned, _parse

__all__ = ["broken_cell", "raised_cell", "not_made"]

_OPERATORS = re.compile(r"(\*\*|//|>>|<<|[-+*/%@&|^])$")


def _assigns(source: str, name: str) -> bool:
    """True when a line of ``source`` (code that may not parse) assigns ``name``: the name on the left of a ``=``."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    for line in source.splitlines():
        match = re.search(r"(?<![=!<>])=(?!=)", line)
        if match is None or line.lstrip().startswith("#"):
            continue
        left = _OPERATORS.sub("", line[: match.start()].rstrip()).split(":")[0]  # `x +=`, `x: int =`
        if word.search(left) and re.fullmatch(r"[\w\s,()\[\]*.]*", left):
            return True
    return False


def _unparsable(source: str) -> tuple[str, SyntaxError] | None:
    """(the code that does not parse, its error) for a cell, or the code of a ``%%time`` cell inside it; else None."""
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        return source, err
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        func = getattr(call, "func", None)
        if isinstance(call, ast.Call) and getattr(func, "attr", "") in ("run_cell_magic", "run_line_magic") and call.args:
            magic, code = call.args[0], call.args[-1]
            if isinstance(magic, ast.Constant) and magic.value in TIMING_MAGICS and isinstance(code, ast.Constant) and isinstance(code.value, str):
                try:
                    ast.parse(code.value)
                except SyntaxError as err:
                    return code.value, err
    return None


def broken_cell(namespace: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """What to tell the learner when the latest cell in ``In`` that assigns one of ``names`` does not parse; else None.

    >>> msg = broken_cell({"In": ["", "total = a.sum()", "total = (a**2).sum(", "check()"]}, ("total",))
    >>> "does not run" in msg and "SyntaxError: '(' was never closed, line 1" in msg
    True
    """
    history = namespace.get("In")
    if isinstance(namespace.get(CELL), str) or not isinstance(history, list):
        return None
    for source in reversed(history):
        if not isinstance(source, str):
            continue
        found = _unparsable(source)
        if found is None:
            tree = _parse(source)
            if tree is not None and any(_assigned(tree, n) is not None for n in names):
                return None  # the latest answer cell parses: judge it as usual
            continue
        hit = [n for n in names if _assigns(found[0], n)]
        if not hit:
            continue
        err = found[1]
        line = f", line {err.lineno}" if err.lineno else ""
        return (
            f"your latest answer cell (the one that assigns {hit[0]}) does not run: Python cannot read it (SyntaxError: "
            f"{err.msg}{line}), so nothing in it ran and the check judges nothing: {' and '.join(hit)} still hold"
            f"{'s' if len(hit) == 1 else ''} what an earlier cell made. Fix that cell and run it, then this check."
        )
    return None


#: What a known error of an answer cell means (said before the rest of the message).
_WHY = {
    "Missing dependency": f"{LOCAL_SCHEDULER}: ",
    "is read-only": (  # (learner reviews 26-28: `x = df.x.to_numpy(); x -= x.mean()` inside the mapped function)
        "your function changes, in place, an array that belongs to the partition it was given: pandas hands out "
        "its column data read-only (to_numpy() and .values return a view of it), and Dask's partitions are not yours "
        "to change. Make a new array from it instead of writing into it (or copy it first). So "
    ),
    "Metadata inference failed": (
        "Dask ran your function on a small made-up partition (with the frame's columns and dtypes) to learn what it "
        "returns, and it failed there. Read the error at the end first: an ordinary mistake in the function (a column "
        "name misspelt, a pandas call misused) fails there as it would on any partition. Beyond those, a function "
        "mapped over partitions may use only the partition it is given (a read of the whole Dask frame, or a "
        "computation of it, inside it fails or hangs; a lookup of the made-up partition's values, such as its "
        "1970-01-01 timestamps, in a table made outside it finds nothing). So "
    ),
    "NoValidWorkerError": (  # (learner review 27: a resource name fixed, and the cell still failed)
        "no worker offers what the tasks ask for (resources=...; the workers' offers are in "
        "session.client.scheduler_info()['workers'][...]['resources']). If you corrected resources= and ran the cell "
        "again, the new call handed back the failed futures of the old one: map and submit name a task after its "
        "function and arguments, not its resources, so add pure=False (a new key for each task). So "
    ),
    "cannot be deterministically hashed": (
        "Dask names each task after what it runs, and it could not make a name from a function in that cell: the "
        "function refers to something that cannot be copied to a worker (the client, a future, a lock). A function "
        "that runs on the workers must work from the data it is given; compute anything else outside it. So "
    ),
}


def raised_cell(namespace: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """What to tell the learner when the latest cell in ``In`` that assigns one of ``names`` raised when it last ran
    (see ``gpu_dask_kit.notebook.outcomes``); else None. The names then hold what an earlier run made, or nothing."""
    history = namespace.get("In")
    if isinstance(namespace.get(CELL), str) or not isinstance(history, list):
        return None
    for number in range(len(history) - 1, 0, -1):
        source = history[number]
        tree = _parse(source) if isinstance(source, str) else None
        hit = [n for n in names if tree is not None and _assigned(tree, n) is not None]
        if not hit:
            continue
        err = raised(namespace, number)
        if err is None:
            return None  # the latest answer cell ran to its end (or nothing recorded it): judge it as usual
        missing = not_made(err, namespace)
        if missing:
            return f"your answer cell (In [{number}]) raised NameError: {missing}"
        sign = next((sign for sign in _WHY if sign in err), "")
        why = (
            _WHY.get(sign, "")
            or (f"{known}. So " if (known := known_error(err)) else "")  # (CuPy's TypeErrors, arithmetic on futures)
            or _resource_lookup(err, source)
            or _cudf_size(err, source)
            or _local_scheduler(err, source)
            or _refused(err, source)
            or _none_read(err, source, namespace)
            or _spelled(err, source)
        )
        if sign == "NoValidWorkerError" and "workers=" in source:  # (learner review 32: a pin to workers by name)
            why = (
                "no worker can run the tasks: they are pinned to workers by name (workers=...), and those workers do not "
                "offer what the tasks ask for (resources=...). Ask only for what the task needs, without workers=, and "
                "let the scheduler find a worker that offers it. So "
            )
        elif sign == "NoValidWorkerError" and (more := _more_than_offered(source, namespace)):  # (learner review 36: {"GPU_SLOT": 2})
            why = more
        elif sign == "NoValidWorkerError" and "pure=False" in source:  # (learner review 30: the advice was already followed)
            why = (
                "no worker offers what the tasks ask for: compare the resource's name and amount each task asks for "
                "(resources=...) with what the workers offer (session.client.scheduler_info()['workers'][...]['resources']); "
                "a task asking for a resource no worker declares, or for more of it than any one worker has, never runs. So "
            )
        return (
            f"{why}"
            f"your answer cell (In [{number}]) failed when it last ran ({err.rstrip('.')}); the check cannot tell what it makes: "
            f"{' and '.join(hit)} may still hold what an earlier run left (or what the lines before the error made). Make "
            "that cell run to its end without an error, run it, then this check."
        )
    return None


def _cudf_size(err: str, source: str) -> str:
    """What the error of cuDF's ``groupby(...).size()`` on a frame with a column called ``name`` means (see
    ``notebook.hints.CUDF_SIZE``; the check sees only the recorded error and the cell, not the traceback)."""
    if "truth value of a Series is ambiguous" not in err or ".size(" not in source or "groupby" not in source:
        return ""
    return f"{CUDF_SIZE[0].upper()}{CUDF_SIZE[1:]}. So "


def _none_read(err: str, source: str, namespace: dict[str, Any]) -> str:
    """What ``'NoneType' object has no attribute`` means when the cell reads a name that holds None (said before the
    rest; learner review 33, 06-2: ``x_persisted.nbytes`` after the cell that drops x_persisted)."""
    if "'NoneType' object has no attribute" not in err:
        return ""
    tree = _parse(source)
    read = [n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)] if tree is not None else []
    empty = [name for name in dict.fromkeys(read) if name in namespace and namespace[name] is None]
    if not empty:
        return ""
    return (
        f"`{empty[0]}` holds None in this notebook now: a cell set it to None (the lesson does that to drop data from the "
        "workers), so it has no attributes. Use a name that still holds the data, or make it again first. So "
    )


def _spelled(err: str, source: str) -> str:
    """What a KeyError means when the cell passes a name in parentheses, ``(f)``, as an argument: a one-element tuple
    without its comma is the str itself, read letter by letter as column names (learner review 33, 05-1:
    ``fit_ols(data, (f))`` raised "None of [Index(['x', '0'] ...] are in the [columns]")."""
    bare = re.search(r"[,(]\s*\(\s*([A-Za-z_]\w*)\s*\)\s*[,)]", source)
    if not err.startswith("KeyError") or bare is None:
        return ""
    name = bare.group(1)
    return (
        f"your answer cell passes ({name}) as an argument: parentheses alone do not make a tuple, so it is {name} itself "
        f"(a str), and a str is read letter by letter where column names are expected. A tuple of one item needs a comma: "
        f"({name},), not ({name}). So "
    )


def _asked(source: str) -> dict[str, float]:
    """The resources a cell's ``resources={...}`` literal asks for (the largest amount per name), or {}.

    >>> _asked("f = c.map(g, xs, resources={'GPU_SLOT': 2}, pure=False)")
    {'GPU_SLOT': 2}
    """
    tree = _parse(source)
    asked: dict[str, float] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.keyword) and node.arg == "resources" and isinstance(node.value, ast.Dict):
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, (int, float)):
                    asked[str(k.value)] = max(asked.get(str(k.value), 0), v.value)
    return asked


def _more_than_offered(source: str, namespace: dict[str, Any]) -> str:
    """Why no worker runs the tasks when they ask for more of a resource than any worker offers (said before the rest)."""
    session = namespace.get("session")
    try:
        workers = session.client.scheduler_info(n_workers=-1)["workers"].values()  # type: ignore[union-attr]
    except Exception:
        return ""
    for name, amount in _asked(source).items():
        most = max((w.get("resources", {}).get(name, 0) for w in workers), default=0)
        if 0 < most < amount:
            return (
                f"your tasks each ask for {amount:g} of {name}, and no worker offers that much ({most:g} at most, in "
                "session.client.scheduler_info()['workers'][...]['resources']): a task runs only where one worker has all "
                "it asks for. Ask for what one task needs. So "
            )
    return ""


def _resource_lookup(err: str, source: str) -> str:
    """What a KeyError named after a resource means when the tasks may run on workers that do not offer it
    (``allow_other_workers=True``; learner review 37, 08-2)."""
    found = re.match(r"KeyError: '([^']+)'", err)
    if found is None or found.group(1) not in _asked(source) or "allow_other_workers" not in source:
        return ""
    return (
        f"allow_other_workers=True let the scheduler put a task that asks for {found.group(1)} on a worker that does not "
        f"offer it, and that worker failed looking the resource up (KeyError: '{found.group(1)}'). Leave workers= and "
        "allow_other_workers out, and let the scheduler find a worker that offers the resource. So "
    )


def _local_scheduler(err: str, source: str) -> str:
    """What a P2P shuffle failure means when the cell asked for a local scheduler (``scheduler="threads"``): the
    shuffle needs the cluster's workers (said before the rest; learner review 11, 07-1)."""
    if "P2P" not in err or "scheduler=" not in source:
        return ""
    return (
        "the cell asked for a local scheduler (scheduler=...), but the computation shuffles data with Dask's P2P method, "
        "which needs the cluster's workers, so it failed. Leave scheduler= out, and the cluster computes it. So "
    )


def _refused(err: str, source: str) -> str:
    """What ``SystemExit: 2`` means when the cell parses a command line: argparse refused a flag (said before the rest)."""
    if not err.startswith("SystemExit") or "parse_" not in source:
        return ""
    tree = _parse(source)
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)] if tree is not None else []
    flags = [w for t in texts for w in t.split() if w.startswith("--") and "_" in w]
    whole = [  # parse_args("--n-workers 4 ..."): one string, which argparse reads character by character (learner review 41)
        n
        for n in (ast.walk(tree) if tree is not None else ())
        if isinstance(n, ast.Call)
        and getattr(n.func, "attr", "").startswith("parse_")
        and n.args
        and isinstance(n.args[0], (ast.Constant, ast.JoinedStr))
        and (isinstance(n.args[0], ast.JoinedStr) or isinstance(n.args[0].value, str))
    ]
    how = (
        "it was given ONE string, and parse_args wants a list of strings, one per word (argparse reads a string character by "
        'character: "- - n - w ..."); split the command line into its words ("...".split(), or a list written out)'
        if whole
        else f"{flags[0]} is written with underscores, and the parser knows its flags with dashes between the words (its --help lists them)"
        if flags
        else "a flag it does not know, or a flag without its value (the usage and error lines printed above the exception say which)"
    )
    return f"the parser refused the command line (SystemExit: 2 is how argparse stops): {how}. So "


def not_made(err: str, namespace: dict[str, Any]) -> str | None:
    """For ``NameError: name 'medians' is not defined`` of a name this kernel lacks: which cell to run (None otherwise).

    >>> not_made("NameError: name 'medians' is not defined", {"In": ["", "medians = {1: 2.0}", "speed_up = medians[1]"]})[:81]
    "it reads `medians`, which a cell above it makes (In [1] in this kernel's history)"
    """
    found = re.match(r"NameError: name '(\w+)' is not defined", err)
    if found is None or found.group(1) in namespace:
        return None
    name = found.group(1)
    history = [str(s) for s in namespace.get("In", [])] if isinstance(namespace.get("In"), list) else []
    cells = cells_making(history, name)
    alias = import_line(name)
    if alias is not None and not cells:  # (learner review 25: `pd` pointed at a later cell that needs names of its own)
        module, line = alias
        return (
            f"it reads `{name}`, the module {module}, which no cell run in this kernel has imported: add "
            f"`{line}` at the top of your answer cell, run it, then this check."
        )
    where = cell_making(namespace, name) if not cells else None  # in JupyterLab: the open notebook's cell that makes it
    if where:
        return (
            f"it reads `{name}`, which this kernel does not have: {where} makes it, and it has not run in this kernel "
            "(skipped, or run before a kernel restart): run it, then your answer cell, then this check."
        )
    if not cells:  # nothing run in this kernel made it: a skipped cell above, or a name no cell makes (a typo, GiB)
        return (
            f"it reads `{name}`, which this kernel does not have (no cell run in it made `{name}`). If a cell above makes "
            "it, that cell was skipped or the kernel restarted since: run it, then your answer cell, then this check; if "
            f"none does, your answer cell has to make `{name}` itself (or the name is misspelled)."
        )
    return (
        f"it reads `{name}`, which a cell above it makes (In [{cells[-1]}] in this kernel's history), and this kernel "
        "does not have it (the kernel restarted since, or a later cell deleted it): run that cell, then your answer cell, "
        "then this check."
    )
