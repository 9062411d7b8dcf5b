"""The kit's exceptions and warning class.

Every error names the parameter, the value given, what is accepted and what to do, so a learner can
fix the call without reading the source.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KitError", "OptionError", "ClusterStartError", "ConnectError", "KitWarning"]


class KitError(Exception):
    """Base class of the kit's errors."""


class OptionError(KitError, ValueError):
    """An option has a value the kit does not accept. Raised before any process starts.

    >>> print(OptionError("n_workers", 0, "a whole number >= 1", "pass n_workers=1 or more"))
    n_workers=0 is not accepted: expected a whole number >= 1. Pass n_workers=1 or more.
    """

    def __init__(self, parameter: str, value: Any, accepted: str, hint: str = "") -> None:
        self.parameter = parameter
        self.value = value
        self.accepted = accepted
        self.hint = hint
        message = f"{parameter}={value!r} is not accepted: expected {accepted}."
        if hint:
            message += f" {hint[0].upper()}{hint[1:]}"
            if not message.endswith((".", "!", "?", ")")):
                message += "."
        super().__init__(message)


class ClusterStartError(KitError, RuntimeError):
    """The cluster could not be started; everything that was started has been stopped again."""


class ConnectError(KitError, ConnectionError):
    """An existing scheduler could not be reached, or no worker arrived in time."""


class KitWarning(UserWarning):
    """Warnings issued by gpu-dask-kit (the test suite turns them into errors)."""
