"""Reading a learner's answer by meaning: numbers, fractions and sizes in the forms people write them.

Every function returns ``None`` for something it cannot read, and never raises.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["as_number", "as_fraction", "as_bytes", "close", "unit_mixup", "decimal_digits_binary_unit"]


def as_number(value: Any) -> float | None:
    """A number from an int, float, NumPy scalar, 0-d array or a string such as "1,000", "2.5x" or "1e3".

    >>> as_number(3), as_number("1,000"), as_number(" 2.5x "), as_number("abc"), as_number(None)
    (3.0, 1000.0, 2.5, None, None)
    >>> as_number(True) is None   # True is not a number here
    True
    """
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return None
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "").rstrip("x×").strip()
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
    return number if math.isfinite(number) else None


def as_fraction(value: Any) -> float | None:
    """A fraction from 0.5, "0.5" or "50%" (all 0.5); a bare 50 stays 50 (the check then explains).

    >>> as_fraction("50%"), as_fraction(0.5), as_fraction("0.5"), as_fraction(" 12.5 % ")
    (0.5, 0.5, 0.5, 0.125)
    >>> as_fraction("half") is None
    True
    """
    if isinstance(value, str) and value.strip().endswith("%"):
        number = as_number(value.strip()[:-1])
        return None if number is None else number / 100
    return as_number(value)


def as_bytes(value: Any) -> int | None:
    """Bytes from an int or a size string; "8GB" is 8 * 10**9 and "8GiB" is 8 * 2**30, as in Dask.

    >>> as_bytes("8GB"), as_bytes("8GiB"), as_bytes(1024), as_bytes("8 gigs")
    (8000000000, 8589934592, 1024, None)
    """
    if isinstance(value, str):
        from dask.utils import parse_bytes

        try:
            return int(parse_bytes(value.strip()))
        except (ValueError, TypeError, KeyError):
            return None
    number = as_number(value)
    return None if number is None or number < 0 else int(number)


def close(given: float | None, expected: float, rel: float = 0.01, abs_: float = 0.0) -> bool:
    """True when ``given`` is within ``rel`` (relative) or ``abs_`` of ``expected``.

    >>> close(0.503, 0.5), close(0.6, 0.5), close(None, 1.0)
    (True, False, False)
    """
    if given is None:
        return False
    return abs(given - expected) <= max(rel * abs(expected), abs_)


def unit_mixup(given: int | None, expected: int) -> str | None:
    """A sentence when ``given`` is ``expected``'s digits read with a decimal unit (GB) instead of the binary one (GiB).

    Only the same digits count: 9.6 GB for 9.6 GiB is a mix-up, 10 GB for 9.6 GiB is not.

    >>> unit_mixup(8_000_000_000, 8 * 2**30)
    "Dask reads 'GB' (and 'G') as powers of 1000 bytes (decimal), while the size you started from is in binary units (GiB): they differ by about 7%."
    >>> unit_mixup(4096 * 10**6, 4 * 2**30)[-101:]
    'while your number counts the size in binary units (MiB, 1024**2 bytes each): they differ by about 5%.'

    >>> unit_mixup(8 * 2**30, 8 * 2**30) is None, unit_mixup(10**10, int(9.6 * 2**30)) is None
    (True, True)
    """
    found = _same_digits(given, expected, given_base=1000, expected_base=1024)
    if found is None:
        return None
    p, power = found
    gap = round(100 * (1 - 1000**p / 1024**p))  # MB vs MiB: 5 %; GB vs GiB: 7 %
    unit = _DECIMAL_UNITS.get(p, "GB")
    binary = f"{unit[0]}iB"
    counted = (
        f"the size you started from is in binary units ({binary})"
        if p == power
        else f"your number counts the size in binary units ({binary}, 1024**{p} bytes each)"  # (learner review 55: 4096MB for 4 GiB)
    )
    return f"Dask reads '{unit}' (and '{unit[0].upper()}') as powers of 1000 bytes (decimal), while {counted}: they differ by about {gap}%."


def decimal_digits_binary_unit(given: int | None, expected: int) -> str | None:
    """A sentence when ``given`` is ``expected`` counted in decimal units (divided by 1e9) but written with the binary
    unit (GiB): the reverse of :func:`unit_mixup` (learner review 55: ``f"{total / 1e9}GiB"``).

    >>> decimal_digits_binary_unit(int(4 * 2**30 / 1e9 * 2**30), 4 * 2**30)[:62]
    'the number is the size counted in decimal GB (divided by 1e9, '
    >>> decimal_digits_binary_unit(4 * 2**30, 4 * 2**30) is None
    True
    """
    found = _same_digits(given, expected, given_base=1024, expected_base=1000)
    if found is None:
        return None
    p, _ = found
    gap = round(100 * (1024**p / 1000**p - 1))
    unit = _DECIMAL_UNITS.get(p, "GB")
    return (
        f"the number is the size counted in decimal {unit} (divided by 1e{3 * p}, powers of 1000 bytes), but the "
        f"unit written after it is the binary {unit[0]}iB ({1024**p:,} bytes each): about {gap}% too much."
    )


#: The decimal units by power of 1000 (their binary twins: kiB... written from the first letter).
_DECIMAL_UNITS = {1: "kB", 2: "MB", 3: "GB", 4: "TB"}


def _same_digits(given: int | None, expected: int, given_base: int, expected_base: int) -> tuple[int, int] | None:
    """(p, power) when ``given`` read in units of ``given_base**p`` has the digits of ``expected`` read in units of
    ``expected_base**p``, for p the largest binary unit ``expected`` fills (``power``) or the one below it (4096MB for
    4GiB); None when ``given`` is ``expected`` or no such p exists."""
    if given is None or expected <= 0 or close(given, expected, rel=0.001):
        return None
    power = max(1, int(math.log(expected, 1024)))
    for p in sorted({power, max(1, power - 1)}, reverse=True):
        if close(given / given_base**p, expected / expected_base**p, rel=0.002):
            return p, power
    return None
