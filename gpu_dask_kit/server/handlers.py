"""Thin authenticated JSON handlers over the core's public functions.

Routes, under ``<base_url>gpu-dask-kit/api/``:

- ``GET environment``      -> ``models.environment_model`` over ``environment.detect().to_dict()``
- ``GET gpus``             -> the shared sampler (``environment.sample_gpus().to_dict()``, cached)
- ``GET sessions``         -> ``models.sessions_reply`` over ``registry.list_sessions()``
- ``DELETE sessions/<id>`` -> 204; 400 for a malformed id, 404 for an unknown one
- ``gateway-clusters``     -> the user's Dask Gateway clusters (:mod:`.gateway`)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from .. import registry
from ..environment import detect
from .memory_cache import MemoryCache
from .models import environment_model, sessions_reply
from .sampler import GpuSampler

AUTH_RESOURCE = "gpu-dask-kit"


@dataclass
class ServerState:
    """What the handlers of one server share: one sampler, one memory cache, the gateway calls' time box."""

    sampler: GpuSampler
    memory: MemoryCache
    proxy: bool = False
    gateway_timeout: float = 5.0

    def close(self) -> None:
        self.sampler.close()
        self.memory.close()


class KitHandler(APIHandler):
    """Base: JSON replies, the ``gpu-dask-kit`` authorization resource, no tracebacks in replies."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, state: ServerState) -> None:
        self.state = state

    def finish_json(self, model: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(model, default=str))

    async def in_thread(self, func, *args):
        return await asyncio.get_running_loop().run_in_executor(None, func, *args)


class EnvironmentHandler(KitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        report = await self.in_thread(detect)
        self.finish_json(environment_model(report.to_dict()))


class GpusHandler(KitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.state.sampler.get())


class SessionsHandler(KitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        from ..integrations import labextension as labext

        records = await self.in_thread(lambda: [r.to_dict() for r in registry.list_sessions()])
        memory = await self.state.memory.get(records)
        self.finish_json(sessions_reply(records, memory, labext.in_server_ids(), self.state.proxy))


class SessionHandler(KitHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        sid = self._valid(session_id)
        try:
            record = await self.in_thread(registry.get_session, sid)
        except KeyError as exc:
            raise web.HTTPError(404, _text(exc)) from None
        self.finish_json(record.to_dict())

    @web.authenticated
    @authorized
    async def delete(self, session_id: str) -> None:
        from ..cleanup import shutdown_session
        from ..integrations import labextension as labext

        sid = self._valid(session_id)
        try:
            if sid in labext.in_server_ids():  # also one still starting (its record may not be written yet)
                await labext.close_in_server(sid)  # on this event loop, through dask-labextension's manager
            else:
                await self.in_thread(shutdown_session, sid)  # KeyError for an unknown id
        except KeyError as exc:
            raise web.HTTPError(404, _text(exc)) from None
        self.set_status(204)
        self.finish()

    @staticmethod
    def _valid(session_id: str) -> str:
        try:
            return registry.validate_session_id(session_id)
        except ValueError as exc:
            raise web.HTTPError(400, str(exc)) from None


def _text(exc: KeyError) -> str:
    return exc.args[0] if exc.args else "no such session"


def make_handlers(prefix: str, state: ServerState) -> list[tuple[str, type, dict[str, Any]]]:
    """The route table; ``prefix`` is ``<base_url>gpu-dask-kit/api``."""
    kwargs = {"state": state}
    return [
        (f"{prefix}/environment", EnvironmentHandler, kwargs),
        (f"{prefix}/gpus", GpusHandler, kwargs),
        (f"{prefix}/sessions/?", SessionsHandler, kwargs),
        (f"{prefix}/sessions/(?P<session_id>[^/]+)/?", SessionHandler, kwargs),
    ]
