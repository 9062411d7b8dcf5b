"""The property tier: after each module, the examples each property ran are merged into
``test-artifacts/properties.json`` (for the report)."""

from __future__ import annotations

import json

import pytest
from hypothesis import __version__ as hypothesis_version
from hypothesis import settings

from .strategies import ARTIFACT, recorded_counts


@pytest.fixture(scope="module", autouse=True)
def _write_counts():
    yield
    data = {"tests": {}}
    if ARTIFACT.exists():
        try:
            data = json.loads(ARTIFACT.read_text())
        except ValueError:
            pass
    data.setdefault("tests", {}).update(recorded_counts())
    data["hypothesis"] = hypothesis_version
    data["profile_max_examples"] = settings.default.max_examples
    data["total_examples_run"] = sum(e["examples_run"] for e in data["tests"].values())
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    ARTIFACT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
