"""Which cells raised: IPython keeps every cell's source in ``In``, but not whether it ran to its end.

A cell that raises half-way leaves the names it did not reach as an earlier run made them, and an exercise check
would judge those old values as if the new cell had made them. A ``post_run_cell`` callback records, per execution
number, the error each cell raised (``ExecutionResult.error_in_exec``); :func:`raised` reads that record back for a
cell of ``In``. The callback is registered by the kit's IPython extension (``start_cluster`` loads it) and by the
first ``from gpu_dask_kit import exercises``; cells run before either are not known (:func:`raised` says None).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["track", "install", "raised"]

RECORD = "_gpu_dask_kit_raised"  # shell attribute: {execution number: "ErrorName: first line of its message"}
SINCE = "_gpu_dask_kit_raised_since"  # shell attribute: the first execution number the record covers
SAID = "_gpu_dask_kit_said"  # shell attribute the hints set: (id of an error, the kit's sentence shown for it)


def _describe(err: BaseException, cause: bool = True) -> str:
    """``ErrorName: first line``, a long line cut at a word with "...", never mid-word; with the error it was raised
    from (``raise ... from e``: Dask's "Metadata inference failed" names the function's own error only below).

    >>> _describe(ValueError("a fraction must be at most 1 " * 20))[-7:]
    '1 a ...'
    >>> try:
    ...     try:
    ...         raise ValueError("output array is read-only")
    ...     except ValueError as e:
    ...         raise ValueError("Metadata inference failed in `demean`.\\n\\nOriginal error is below:") from e
    ... except ValueError as err:
    ...     _describe(err)
    'ValueError: Metadata inference failed in `demean` (from ValueError: output array is read-only)'
    """
    try:
        text = (str(err).strip().splitlines() or [""])[0]
    except Exception:  # an exception whose __str__ fails
        text = ""
    if len(text) > 300:
        text = text[:300].rsplit(" ", 1)[0] + " ..."
    said = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if cause and err.__cause__ is not None:
        return f"{said.rstrip('.')} (from {_describe(err.__cause__, cause=False)})"
    return said


def track(shell: Any) -> None:
    """Record, from now on, which cells of ``shell`` raise (once per shell)."""
    events = getattr(shell, "events", None)
    if events is None or getattr(shell, RECORD, None) is not None:
        return
    record: dict[int, str | None] = {}

    def note(result: Any) -> None:
        number, err = getattr(result, "execution_count", None), getattr(result, "error_in_exec", None)
        said = getattr(shell, SAID, None)  # the kit's sentence shown instead of the error's own text (see hints)
        if isinstance(number, int) and err is not None and isinstance(said, tuple) and said[0] == id(err):
            record[number] = f"{type(err).__name__}: {said[1]}"
        elif isinstance(number, int):
            record[number] = _describe(err) if err is not None else None

    setattr(shell, RECORD, record)
    setattr(shell, SINCE, int(getattr(shell, "execution_count", 0) or 0))
    events.register("post_run_cell", note)


def install() -> None:
    """:func:`track` the running IPython, if any (IPython is never imported here: a script is not a shell)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        track(shell)


def raised(namespace: dict[str, Any], number: int) -> str | None:
    """ "ValueError: ...": what cell ``In[number]`` of the notebook whose globals are ``namespace`` raised when it last
    ran; None when it ran to its end, or when nothing recorded it (not IPython, or run before the record began)."""
    get_ipython = namespace.get("get_ipython")
    try:
        shell = get_ipython() if callable(get_ipython) else None
    except Exception:
        return None
    record = getattr(shell, RECORD, None)
    if not isinstance(record, dict) or number < getattr(shell, SINCE, 0):
        return None
    return record.get(number)
