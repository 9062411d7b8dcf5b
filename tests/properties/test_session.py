"""Properties of ``start_cluster`` (gpu_dask_kit.session): an impossible request raises one of the kit's errors and
leaves no process and no registry file behind; a malformed scheduler file is a ConnectError."""

from __future__ import annotations

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpu_dask_kit as kit
from gpu_dask_kit import ClusterStartError, ConnectError, KitError, OptionError
from gpu_dask_kit.options import ClusterOptions, option_name

from ..conftest import kit_children, wait_for_no_new_children
from .strategies import FIXTURES_OK, SCALARS, examples, ran

_REPORT = kit.detect()
_TOTAL_MEMORY = psutil.virtual_memory().total


def _not_a_size(text: str) -> bool:
    """Text that ClusterOptions refuses as memory_limit (how it refuses is what the property checks)."""
    try:
        ClusterOptions.from_config(memory_limit=text)
    except Exception:
        return True
    return False


def _impossible_requests():
    """(kind, kwargs) pairs, each invalid at validation, plan, bind or connect time on this machine."""
    workers = st.integers(1, 2)
    kinds = [
        st.builds(
            lambda k, v, n: ("unknown_key", {k: v, "n_workers": n, "memory_limit": "1GiB"}),
            st.text(min_size=1, max_size=15).filter(lambda k: option_name(k) is None and k not in ("verbose", "security")),
            SCALARS,
            workers,
        ),
        st.builds(
            lambda size, n: ("memory_above_machine", {"device": "cpu", "n_workers": n, "memory_limit": size}),
            st.one_of(st.integers(_TOTAL_MEMORY + 1, 2**62), st.integers(10**3, 10**6).map(lambda t: f"{t}TiB")),
            workers,
        ),
        st.builds(
            lambda size, n: ("bad_size", {"device": "cpu", "n_workers": n, "memory_limit": size}),
            st.one_of(st.sampled_from(["12 parsecs", "-1GiB", "150%", "lots", "1e400 GB", "NaN"]), st.text(max_size=8).filter(_not_a_size)),
            workers,
        ),
        st.builds(lambda n: ("bad_count", {"n_workers": n}), st.one_of(st.integers(max_value=0), st.sampled_from(["²", "-1", "2.5", "many", 2.0]))),
        st.builds(
            lambda a, t: ("closed_port", {"scheduler_address": a, "connect_timeout": t}),
            st.sampled_from([1, 9, 19, 79]).map(lambda p: f"tcp://127.0.0.1:{p}"),
            st.floats(0.2, 1.0),
        ),
        st.builds(
            lambda h, n: ("unbindable_host", {"device": "cpu", "n_workers": n, "memory_limit": "1GiB", "host": h}),
            st.sampled_from(["192.0.2.1", "198.51.100.7", "203.0.113.9"]),
            workers,
        ),
        st.builds(
            lambda d: ("bad_local_directory", {"device": "cpu", "n_workers": 1, "memory_limit": "1GiB", "local_directory": d}),
            st.sampled_from([f"{__file__}/spill", "/dev/null/spill", "x" * 300, "\x00"]),
        ),
        st.builds(lambda a, f: ("address_and_file", {"scheduler_address": a, "scheduler_file": f}), st.just("tcp://127.0.0.1:8786"), st.just(__file__)),
    ]
    if _REPORT.mode != "gpu":
        kinds.append(st.builds(lambda n: ("gpu_without_gpu", {"device": "gpu", "n_workers": n}), workers))
    ucxx = _REPORT.libraries.get("distributed_ucxx")
    if not (ucxx and ucxx.installed):
        kinds.append(st.builds(lambda n: ("ucx_without_ucxx", {"device": "cpu", "protocol": "ucx", "n_workers": n}), workers))
    return st.one_of(kinds)


N_START = examples(60)


@settings(max_examples=N_START, deadline=None, suppress_health_check=FIXTURES_OK)
@given(request=_impossible_requests())
def test_impossible_start_raises_a_kit_error_and_leaves_nothing(request, runtime_dir):
    kind, kwargs = request
    before = kit_children()
    with pytest.raises(KitError) as info:
        kit.start_cluster(verbose=False, **kwargs)
    err = info.value
    spawned = kit_children() - before
    ran("start_cluster_impossible", N_START, **{f"kind_{kind}": 1, "spawned_processes": len(spawned)})
    assert isinstance(err, (OptionError, ConnectError, ClusterStartError))
    if isinstance(err, OptionError):
        assert str(err).startswith(f"{err.parameter}=") and err.parameter in kwargs
    elif isinstance(err, ConnectError):
        assert str(err).startswith(f"scheduler_address={kwargs['scheduler_address']!r}: no scheduler answered within")
    else:
        assert "Everything that was started has been stopped" in str(err)
    assert not wait_for_no_new_children(before), f"{kind}: processes left running"
    assert list(runtime_dir.glob("session-*.json")) == [], f"{kind}: registry record left behind"
    assert kit.current_session() is None


def test_a_malformed_scheduler_file_is_a_connect_error(tmp_path, runtime_dir):
    path = tmp_path / "scheduler.json"
    before = kit_children()
    for content in ["not json", "{}", "", "[]", '{"address": "tls://127.0.0.1:9"}', '{"address": 5}']:
        path.write_text(content)
        with pytest.raises(ConnectError) as info:
            kit.start_cluster(verbose=False, scheduler_file=str(path), connect_timeout=1)
        assert str(info.value).startswith(f"scheduler_file={str(path)!r}"), content
    assert not wait_for_no_new_children(before) and list(runtime_dir.glob("session-*.json")) == []
