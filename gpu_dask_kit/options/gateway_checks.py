"""Pure checks of the Dask Gateway options' values (``deploy="gateway"``): the gateway's address and the
extra cluster options passed through to it. Same contract as :mod:`.checks`; whether the gateway answers
and offers an option is asked of the gateway when the cluster starts (:mod:`gpu_dask_kit.deploy.gateway`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from ..errors import OptionError
from .checks import Spec, blank

__all__ = ["gateway_address", "gateway_cluster_options"]


def gateway_address(spec: Spec, value: Any) -> str | None:
    """The gateway's public HTTP(S) address, without a trailing "/"; or None (dask-gateway's own config).

    >>> from gpu_dask_kit.options import OPTION_SPECS
    >>> gateway_address(OPTION_SPECS["gateway_address"], " https://hub.example.org/services/dask-gateway/ ")
    'https://hub.example.org/services/dask-gateway'
    """
    if blank(value):
        return None
    text = value.strip().rstrip("/") if isinstance(value, str) else None
    parsed = urlparse(text) if text else None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise OptionError(
            spec.name, value, spec.accepted, "copy the address your hub's admin gives (a hub sets DASK_GATEWAY__ADDRESS for you: leave it None there)"
        )
    return text


def gateway_cluster_options(spec: Spec, value: Any) -> tuple[tuple[str, Any], ...]:
    """Extra cluster options for the gateway, by the gateway's own names: a mapping, its JSON text or
    (name, value) pairs; kept as sorted pairs (the options are frozen).

    >>> from gpu_dask_kit.options import OPTION_SPECS
    >>> gateway_cluster_options(OPTION_SPECS["gateway_cluster_options"], '{"image": "rapids:26.10"}')
    (('image', 'rapids:26.10'),)
    """
    if blank(value):
        return ()
    given = value  # the error names what was given (its JSON text, not the number that text parsed to: '0.0')
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise OptionError(spec.name, given, spec.accepted, 'write it as JSON, e.g. \'{"image": "rapids:26.10"}\'') from None
    try:
        pairs = dict(value.items() if isinstance(value, Mapping) else value)
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or not all(isinstance(k, str) and k.isidentifier() for k in pairs):
        raise OptionError(spec.name, given, spec.accepted, 'list the names with `Gateway().cluster_options()` and pass e.g. {"image": ...}')
    return tuple(sorted(pairs.items()))
