"""Python 3.11's ``functools.cached_property`` without its lock, as Python 3.12 has it.

Before 3.12, ``cached_property.__get__`` holds ONE lock per property for every instance of the class (CPython issue
87634; 3.12 removed it). dask's DataFrame expressions compute ``divisions`` and ``_meta`` in cached properties, and a
``LocalCluster`` runs its scheduler in the notebook's own process, where it turns each graph into tasks on an offload
thread through those same properties. So a property that computes on the cluster while it holds the lock (a
``sort_values`` learning its divisions; a ``map_partitions`` function that calls ``.compute()`` while Dask infers its
output) waits for the scheduler, whose offload thread waits for the lock: the cell hangs for ever, and so does every
later cell that needs that property (seen in notebooks 03 and 04 on Python 3.11, also in tests). On 3.11 the kit
makes ``cached_property`` behave as on 3.12 when it starts a cluster: two threads may compute the same property of the
same object at the same time (both get the same value); nothing waits on another instance.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

__all__ = ["install", "installed"]

_MISSING = object()

#: Python's own ``cached_property.__get__``, as it was when the kit was imported (with its lock before 3.12).
ORIGINAL = functools.cached_property.__get__


def _get(self: Any, instance: Any, owner: type | None = None) -> Any:
    if instance is None:
        return self
    if self.attrname is None:
        raise TypeError("Cannot use cached_property instance without calling __set_name__ on it.")
    try:
        cache = instance.__dict__
    except AttributeError:
        raise TypeError(f"No '__dict__' attribute on {type(instance).__name__!r} instance to cache {self.attrname!r} property.") from None
    value = cache.get(self.attrname, _MISSING)
    if value is _MISSING:
        value = self.func(instance)
        try:
            cache[self.attrname] = value
        except TypeError:
            raise TypeError(
                f"The '__dict__' attribute on {type(instance).__name__!r} instance does not support item assignment for caching {self.attrname!r} property."
            ) from None
    return value


def installed() -> bool:
    """True where ``cached_property`` takes no lock (Python 3.12 and later, or after :func:`install`)."""
    return sys.version_info >= (3, 12) or functools.cached_property.__get__ is _get


def install() -> bool:
    """On Python before 3.12, replace ``cached_property.__get__`` with the lock-free one (once); True if it did now."""
    if installed():
        return False
    functools.cached_property.__get__ = _get  # type: ignore[method-assign]
    return True
