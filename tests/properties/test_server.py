"""Properties of the server extension's REST routes (gpu_dask_kit.server): 2xx/4xx (never 500, never a traceback)
for any id, query string or body."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jupyter_server.utils import url_path_join

from gpu_dask_kit.server.handlers import make_handlers

from ..conftest import kit_children
from .strategies import FIXTURES_OK, JSON, NASTY, examples, ran

pytest_plugins = ["pytest_jupyter.jupyter_server"]

API = "gpu-dask-kit/api"
VALID_UNKNOWN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"gpu_dask_kit.server": True}}}


def _route_paths() -> list[str]:
    """Concrete paths for every route the extension registers (a new route is covered automatically)."""
    import re

    paths = []
    for pattern, _handler, _kwargs in make_handlers("", None):
        path = re.sub(r"\(\?P<\w+>[^)]*\)", VALID_UNKNOWN, pattern).removesuffix("/?").lstrip("/")
        assert not set(path) & set("()[]?*+\\$^"), f"route {pattern!r}: teach _route_paths its placeholder"
        paths.append(path)
    return paths


ROUTE_PATHS = _route_paths()


class Server:
    """Synchronous requests to the pytest-jupyter server (hypothesis drives sync functions)."""

    def __init__(self, loop, client, base_url, auth):
        self.loop, self.client, self.base, self.auth = loop, client, url_path_join(base_url, API), auth

    def fetch(self, raw_path: str, method: str = "GET", body: bytes | None = None, headers=None):
        headers = {**self.auth, **(headers or {})}
        return self.loop.run_until_complete(
            self.client.fetch(
                self.base + "/" + raw_path,
                method=method,
                body=body,
                headers=headers,
                raise_error=False,
                allow_nonstandard_methods=True,
                follow_redirects=False,
                request_timeout=30,
            )
        )


@pytest.fixture
def server(jp_serverapp, http_server_client, jp_base_url, jp_auth_header, jp_asyncio_loop):
    return Server(jp_asyncio_loop, http_server_client, jp_base_url, jp_auth_header)


def _check_reply(response) -> str:
    body = response.body.decode("utf-8", "replace") if response.body else ""
    assert 200 <= response.code < 500, (response.code, response.effective_url, body[:300])
    assert "Traceback" not in body and 'File "' not in body, body[:300]
    if response.code >= 400 and response.headers.get("Content-Type", "").startswith("application/json"):
        assert not json.loads(body).get("traceback")
    return body


TRAVERSAL = [
    "..",
    ".",
    "../x",
    "..%2F..%2Fvictim",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "x%2F..%2F..%2Fvictim",
    "%00",
    "%ZZ",
    "%FF%FE",
    VALID_UNKNOWN + "%0A",
    VALID_UNKNOWN.upper(),
    "0" * 33,
    "a" * 4000,
    "%252e%252e",
]

N_IDS = examples(200)


@settings(max_examples=N_IDS, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    session_id=st.one_of(
        st.text(max_size=64),
        st.from_regex(r"[0-9a-f]{32}", fullmatch=True),
        st.text(alphabet="0123456789abcdefABCDEF./%\\", max_size=40),
        st.sampled_from(TRAVERSAL),
    ),
    encode=st.booleans(),
    method=st.sampled_from(["GET", "DELETE"]),
)
def test_any_session_id_is_answered_with_a_4xx(server, session_id, encode, method, runtime_dir):
    ran("rest_session_ids", N_IDS)
    raw = urllib.parse.quote(session_id, safe="") if encode else urllib.parse.quote(session_id, safe="/%.\\")
    response = server.fetch(f"sessions/{raw}", method=method)
    _check_reply(response)
    if encode and session_id:
        import re

        expected = 404 if re.fullmatch(r"[0-9a-f]{32}", session_id) else 400
        assert response.code == expected, (session_id, response.code)
    assert list(runtime_dir.glob("*")) == []


N_QUERY = examples(60)


@settings(max_examples=N_QUERY, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    path=st.sampled_from([p for p in ROUTE_PATHS if VALID_UNKNOWN not in p]),
    params=st.dictionaries(st.text(max_size=10), st.one_of(st.text(max_size=20), st.sampled_from(NASTY[:30])), max_size=4),
)
def test_any_query_string_on_the_get_routes_is_ignored(server, path, params):
    ran("rest_query_strings", N_QUERY)
    query = urllib.parse.urlencode(params)
    response = server.fetch(f"{path}?{query}")
    body = _check_reply(response)
    assert response.code == 200 and isinstance(json.loads(body), dict)


N_BODIES = examples(200)


@settings(max_examples=N_BODIES, deadline=None, suppress_health_check=FIXTURES_OK)
@given(
    path=st.sampled_from(ROUTE_PATHS),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode), JSON.map(lambda j: json.dumps(j).encode())),
    content_type=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]),
)
def test_any_body_on_any_route_is_answered_without_a_500(server, path, method, body, content_type, runtime_dir):
    ran("rest_bodies", N_BODIES)
    before = kit_children()
    response = server.fetch(path, method=method, body=body, headers={"Content-Type": content_type})
    _check_reply(response)
    # no route takes a body: reads answer as usual, writes are 405, an unknown session 404, and tornado
    # itself answers 400 to a form body it cannot parse
    assert response.code in (200, 400, 404, 405), response.code
    assert kit_children() == before and list(runtime_dir.glob("*")) == []
