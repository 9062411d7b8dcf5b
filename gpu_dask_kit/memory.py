"""Pure sizing policy: parse memory sizes, resolve fractions of a device, align pool sizes.

Nothing here touches hardware or starts anything; every function is a small pure function.
A *size* given by a user is one of:

- a whole number of bytes (``4_000_000_000``),
- a string with a unit (``"4GiB"``, ``"512 MB"``; the units of :func:`dask.utils.parse_bytes`),
- a fraction of the total, as a float or a string in (0, 1] (``0.8``, ``"0.8"``, ``"80%"``).
"""

from __future__ import annotations

import math

from dask.utils import format_bytes, parse_bytes

from .errors import OptionError

__all__ = ["Size", "parse_size", "resolve_size", "align_pool_size", "format_bytes", "POOL_ALIGNMENT"]

#: A parsed size: whole bytes (int) or a fraction of a total (float in (0, 1]).
Size = int | float

#: RMM pool sizes must be multiples of 256 bytes.
POOL_ALIGNMENT = 256

_SIZE_FORMS = 'a size such as "4GiB" or "512MB", a whole number of bytes, or a fraction of the total such as 0.8 or "80%"'


#: A float above 1 is taken as bytes (4e9) from this size on; below it (2.0, 1.5) it is a mistyped fraction.
_SMALLEST_FLOAT_BYTES = 2**20


def parse_size(value: object, parameter: str) -> Size:
    """Parse a user-given size into whole bytes (int) or a fraction of the total (float).

    >>> parse_size("4GiB", "memory_limit")
    4294967296
    >>> parse_size("0.5", "rmm_pool_size"), parse_size("80%", "device_memory_limit"), parse_size(1.0, "x")
    (0.5, 0.8, 1.0)
    >>> parse_size("12 parsecs", "memory_limit")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gpu_dask_kit.errors.OptionError: memory_limit='12 parsecs' is not accepted: expected a size such as "4GiB" ... KiB, MiB, GiB or TiB.
    """
    if isinstance(value, bool):
        raise OptionError(parameter, value, _SIZE_FORMS)
    if isinstance(value, int):
        if value <= 0:
            raise OptionError(parameter, value, _SIZE_FORMS, "a size must be greater than zero")
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value >= _SMALLEST_FLOAT_BYTES and value == int(value):
            return int(value)  # 4e9: bytes written in float notation
        if math.isfinite(value) and value > 1.0:
            bytes_like = value >= _SMALLEST_FLOAT_BYTES  # (learner review 57: 0.6 * 16 * 2**30 is a size, not a whole one)
            raise OptionError(
                parameter,
                value,
                _SIZE_FORMS,
                f"{value!r} is neither a fraction (at most 1: 0.5 is half) nor "
                + ("a whole number of bytes (round it: int(...))" if bytes_like else "a plausible number of bytes")
                + '; write a fraction or a size with its unit such as "2GiB"',
            )
        return _fraction(value, value, parameter)
    if not isinstance(value, str) or not value.strip():
        raise OptionError(parameter, value, _SIZE_FORMS)
    text = value.strip()
    if text.endswith("%"):
        try:
            number = float(text[:-1])
        except ValueError:
            raise OptionError(parameter, value, _SIZE_FORMS) from None
        return _fraction(number / 100.0, value, parameter)
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            raise OptionError(parameter, value, _SIZE_FORMS)
        if number <= 1.0:
            return _fraction(number, value, parameter)
        if number != int(number):
            raise OptionError(parameter, value, _SIZE_FORMS, "bytes are whole numbers")
        return int(number)
    try:
        parsed = parse_bytes(text)
    except (ValueError, TypeError):
        raise OptionError(parameter, value, _SIZE_FORMS, "check the unit: KB, MB, GB, TB, KiB, MiB, GiB or TiB") from None
    if parsed <= 0:
        raise OptionError(parameter, value, _SIZE_FORMS, "a size must be greater than zero")
    return int(parsed)


def _fraction(number: float, original: object, parameter: str) -> float:
    if not (0.0 < number <= 1.0) or number != number:  # NaN fails both
        raise OptionError(parameter, original, _SIZE_FORMS, "a fraction must be greater than 0 and at most 1")
    return float(number)


def resolve_size(size: Size, total: int) -> int:
    """Turn a parsed size into bytes against ``total`` (a fraction multiplies the total).

    >>> resolve_size(0.5, 1000), resolve_size(300, 1000)
    (500, 300)
    """
    if isinstance(size, float):
        return int(size * total)
    return int(size)


def align_pool_size(nbytes: int) -> int:
    """Round a pool size down to RMM's 256-byte alignment.

    >>> align_pool_size(1000), align_pool_size(1024)
    (768, 1024)
    """
    return (int(nbytes) // POOL_ALIGNMENT) * POOL_ALIGNMENT


def describe_size(size: Size | None) -> str:
    """Human text for a parsed size.

    >>> describe_size(0.8), describe_size(2**30), describe_size(None)
    ('80% of the total', '1.00 GiB', 'off')
    """
    if size is None:
        return "off"
    if isinstance(size, float):
        return f"{size * 100:g}% of the total"
    return format_bytes(size)
