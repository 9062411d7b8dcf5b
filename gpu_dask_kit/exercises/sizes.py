"""A size answer (bytes, or a string with a unit) read by meaning, and the hints in steps when it is not the size."""

from __future__ import annotations

import math
import re
from typing import Any

from .judging import describe, is_lazy
from .model import Hint
from .values import as_bytes, as_number, close, decimal_digits_binary_unit, unit_mixup

__all__ = ["size_answer"]


def size_answer(value: Any, expected: int, name: str, look: str) -> int:
    """The answer in bytes when it means ``expected``; a :class:`Hint` in steps otherwise (never the value).

    ``look`` says where the right number comes from. A size rounded to 3 significant digits in the unit the size is
    read in passes (off by at most half a unit of the third digit, see :func:`rounding_allowed`), one a digit off does
    not (9.52 GiB for 9.6 GiB; 361 MiB for 360 MiB; 0.35 GiB, two digits, for 360 MiB).
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
    if given is not None and isinstance(value, str) and re.search(r"\d\s*[kKmMgGtTpP][iI]?b\s*$", value):
        raise Hint(  # (learner review 50: "4Gib" was Correct: Dask reads it as bytes, a reader as gibibits)
            f"{name}'s unit ends in a lowercase b, which stands for bits (Mb, Gib: 8 bits to a byte). Dask reads size "
            "strings without regard to case and takes it as bytes, but a person reading your code would not: write the "
            f"unit with a capital B (bytes), such as MiB or GiB. {look}"
        )
    if given is None:
        what = f"{value!r} is a string Dask does not read as a size" if isinstance(value, str) else f"{describe(value)} is neither"
        raise Hint(f"{name} should be a size: a number of bytes (an int) or a string with a unit such as 'MiB' or 'GiB'; {what}. {look}")
    if abs(given - expected) <= rounding_allowed(expected) * (1 + 1e-9):
        return given
    mixup = unit_mixup(given, expected)
    if mixup and not isinstance(value, str):
        raise Hint(
            f"{name} was worked out in decimal units (powers of 1000 bytes: MB, GB, as in 1e6 or 1e9), but the memory it "
            "starts from is given in binary units (a MiB is 2**20 bytes, a GiB 2**30): redo it in the unit the size is given in."
        )
    if mixup:
        raise Hint(f"{name} has the right digits in the wrong unit: {mixup} Any unit is fine, as long as the number is read in it.")
    labelled = decimal_digits_binary_unit(given, expected) if isinstance(value, str) else None
    if labelled:
        raise Hint(f"{name}: {labelled} The number and its unit must match: both decimal or both binary. {look}")
    bare = as_number(value)  # (learner review 35: "0.5" was "read as a few bytes"; review 57: 0.6 was "0 bytes")
    if (isinstance(value, str) and value.strip().endswith("%")) or 0 < given <= 1 or (bare is not None and 0 < bare <= 1):
        share = " (Dask reads a memory limit up to 1 as a share of the machine's memory)" if name == "memory_limit" else ""
        raise Hint(f"{name} looks like a fraction{share}; the question asks for an amount of memory (bytes, or a size string). {look}")
    if given == 0:
        raise Hint(f"{name} is 0 bytes (if arithmetic made it: int() of a number below 1 is 0, for one). {look}")
    if given < 1024 <= expected:
        raise Hint(f"{name} is read as a few bytes: a bare number is a count of bytes. Give a size string with its unit, or the bytes. {look}")
    direction = "larger" if given > expected else "smaller"
    if close(given, expected, rel=0.01):
        raise Hint(
            f"{name} is a little {direction} than it should be (by less than 1%): a step off, or rounded to fewer than three "
            f"significant digits. Work it out exactly (Python can do the arithmetic), or keep three digits in MiB or GiB. {look}"
        )
    raise Hint(f"{name} is {direction} than it should be. {look}")


def rounding_allowed(expected: int) -> float:
    """Bytes a size may be off by: half a unit of the third significant digit of ``expected`` written in the largest
    binary unit it fills (KiB, MiB, GiB, TiB).

    >>> rounding_allowed(360 * 2**20) / 2**20, rounding_allowed(int(9.6 * 2**30)) / 2**30, rounding_allowed(100)
    (0.5, 0.005, 0.5)
    """
    unit = max([1] + [2**power for power in (10, 20, 30, 40) if expected >= 2**power])
    value = expected / unit
    return 0.5 * 10 ** (math.floor(math.log10(value)) - 2) * unit if value > 0 else 0.0
