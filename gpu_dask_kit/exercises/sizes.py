"""A size answer (bytes, or a string with a unit) read by meaning, and the hints in steps when it is not the size."""

from __future__ import annotations

from typing import Any

from .judging import describe, is_lazy
from .model import Hint
from .values import as_bytes, close, unit_mixup

__all__ = ["size_answer"]


def size_answer(value: Any, expected: int, name: str, look: str) -> int:
    """The answer in bytes when it means ``expected``; a :class:`Hint` in steps otherwise (never the value).

    ``look`` says where the right number comes from. The tolerance is 0.5%: a size rounded to 3 significant digits passes
    (off by at most half a unit of the third digit), one a digit off does not (learner review 14: 9.52 GiB for 9.6 GiB).
    """
    if is_lazy(value):
        raise Hint(f"{name} is still lazy (a Dask object): a size is a plain number or string. {look}")
    given = as_bytes(value)
    if given is None and isinstance(value, str) and any(op in value for op in "*/+"):
        raise Hint(
            f"{name} is a str that holds arithmetic ({value!r}): Python does not compute inside a string, and a size string "
            f"is one number with its unit. Compute the number first, then give it in bytes or as a size string. {look}"
        )
    if isinstance(value, str) and value.strip().endswith("%"):
        raise Hint(f"{name} is a percentage, a share; the question asks for an amount of memory (bytes, or a size string). {look}")
    if given is None:
        what = f"{value!r} is a string Dask does not read as a size" if isinstance(value, str) else f"{describe(value)} is neither"
        raise Hint(f"{name} should be a size: a number of bytes (an int) or a string with a unit such as 'MiB' or 'GiB'; {what}. {look}")
    if close(given, expected, rel=0.005):
        return given
    mixup = unit_mixup(given, expected)
    if mixup and not isinstance(value, str):
        raise Hint(
            f"{name} was worked out in decimal units (powers of 1000 bytes: MB, GB, as in 1e6 or 1e9), but the memory it "
            "starts from is given in binary units (a MiB is 2**20 bytes, a GiB 2**30): redo it in the unit the size is given in."
        )
    if mixup:
        raise Hint(f"{name} has the right digits in the wrong unit: {mixup} Any unit is fine, as long as the number is read in it.")
    if (isinstance(value, str) and value.strip().endswith("%")) or 0 < given <= 1:
        raise Hint(f"{name} looks like a fraction; the question asks for an amount of memory (bytes, or a size string). {look}")
    if given < 1024 <= expected:
        raise Hint(f"{name} is read as a few bytes: a bare number is a count of bytes. Give a size string with its unit, or the bytes. {look}")
    direction = "larger" if given > expected else "smaller"
    raise Hint(f"{name} is {direction} than it should be. {look}")
