"""`create_app`: the ponder HTTP server — runs API, OpenAI-compatible endpoint and viewer.

```python
app = create_app(Agent(ScriptedModel([...])), token=None)
serve_app(app, host="127.0.0.1", port=8000)
```

Errors are JSON ``{"error": {"message", "type", "param", "code"}}``: 4xx for bad input
(never a 500 for it; a 400 on the OpenAI-compatible paths, where the runs API says 422),
401 without the token when one is set, 413 for oversized bodies.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

from ponder.extras import require

require("server", "the HTTP server (ponder serve, ponder.server)")

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

import ponder
from ponder.exceptions import RunLeaseError, StoreError, UserError
from ponder.protocols import mount_protocols
from ponder.server import elicitations, openai_compat, routes, settings
from ponder.server.guards import BearerTokenGuard, BodySizeLimit, RequestOriginGuard
from ponder.server.launcher import Launcher
from ponder.server.local_launcher import AgentSource, RunConflict, RunLauncher
from ponder.server.openai_request import RequestError
from ponder.server.runs import MemoryRunRegistry, RunRegistry
from ponder.server.stopping import recover_runs
from ponder.store.base import Store

__all__ = [
    "DEFAULT_DRAIN_SECONDS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_REQUEST_TIMEOUT",
    "create_app",
    "serve_app",
]

DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_DRAIN_SECONDS = 10.0
"""How long a stop lets running tool calls finish before it interrupts their runs."""
DEFAULT_REQUEST_TIMEOUT = 10.0
"""Seconds a connection may stay open without a request before the server closes it."""
DEFAULT_MAX_CONNECTIONS = 1000
"""Connections served at once (at most half the file descriptor limit); more get a 503."""
_LOG = logging.getLogger("uvicorn.error")
"""The server's own log (uvicorn prints it; ponder's loggers print nothing by default)."""
_STATIC = Path(str(files("ponder.server") / "static"))
_ERROR_TYPES = {
    401: "authentication_error",
    404: "not_found",
    409: "conflict",
    413: "request_too_large",
}


_OPENAI_PATHS = ("/v1/chat/", "/v1/models")
"""Paths of the OpenAI-compatible API, whose bad requests are 400s as OpenAI's are."""


def _error(
    status: int,
    message: str,
    error_type: str,
    param: str | None = None,
    code: str | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"message": message, "type": error_type, "param": param, "code": code}
    return JSONResponse({"error": body}, status_code=status)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    status = 400 if request.url.path.startswith(_OPENAI_PATHS) else 422
    if first.get("type") == "json_invalid":  # its loc is a position in the text, not a field
        ctx = first.get("ctx")
        where = ctx.get("error") if isinstance(ctx, dict) else first.get("msg")
        message = f"the request body is not valid JSON: {where}"
        return _error(status, message, "invalid_request_error")
    param = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
    message = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body')}: {e.get('msg')}"
        for e in errors[:5]
    )
    return _error(status, message or "invalid request", "invalid_request_error", param)


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    kind = _ERROR_TYPES.get(exc.status_code, "invalid_request_error")
    if exc.status_code >= 500:
        kind = "server_error"
    if isinstance(exc, RequestError):
        return _error(exc.status_code, str(exc.detail), kind, exc.param, exc.code)
    return _error(exc.status_code, str(exc.detail), kind)


async def _user_error(_: Request, exc: Exception) -> JSONResponse:
    return _error(400, str(exc), "invalid_request_error")


async def _conflict(_: Request, exc: Exception) -> JSONResponse:
    return _error(409, str(exc), "conflict")


async def _store_error(_: Request, exc: Exception) -> JSONResponse:
    return _error(503, f"the run store failed: {exc}", "store_error")


def _lifespan(launcher: Launcher, drain_seconds: float, resume_stored: bool) -> Any:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if not isinstance(launcher, RunLauncher):
            yield
            await launcher.shutdown()
            return
        recovering = asyncio.ensure_future(
            _recover(launcher) if resume_stored and launcher.store is not None else asyncio.sleep(0)
        )
        yield
        recovering.cancel()
        await asyncio.gather(recovering, return_exceptions=True)
        await launcher.shutdown(drain_seconds)

    return lifespan


async def _recover(launcher: RunLauncher) -> None:
    resumed = await recover_runs(launcher)
    if resumed:
        unfinished = "stored run(s) an earlier stop or crash left unfinished"
        _LOG.warning("resumed %d %s", len(resumed), unfinished)


def create_app(
    agent: AgentSource | None = None,
    *,
    launcher: Launcher | None = None,
    token: str | None = None,
    registry: RunRegistry | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    store: Store | None = None,
    allowed_hosts: list[str] | None = None,
    config_path: Path | None = None,
    drain_seconds: float = DEFAULT_DRAIN_SECONDS,
    resume_stored: bool = False,
    allow_unsafe_config: bool = False,
) -> FastAPI:
    """The server for ``agent`` (an `Agent`, or a function returning one per run).

    Every state-changing request needs a JSON body or the ``X-Ponder-Request`` header
    (no cross-site requests); with ``allowed_hosts``, only those ``Host`` names are served.

    With ``token`` every ``/v1/`` request needs ``Authorization: Bearer <token>``. With a
    ``store`` every run is checkpointed, stored runs are listed, and suspended runs can be
    resumed (``POST /v1/runs/{id}/resume``), also ones another process started.

    Instead of an agent, a ``launcher`` may run the runs elsewhere (for example
    ``ponder.temporal.launcher.TemporalLauncher``, on Temporal's workers).
    ``/v1/config`` edits the configuration of new runs of a local agent; with
    ``config_path`` (the file the agent's config came from) edits can be saved to it;
    keys that start processes or reach the network (`settings.UNSAFE_KEYS`) only with
    ``allow_unsafe_config``.

    Stopping the server interrupts the runs it checkpoints to ``store`` resumably, each
    once its running tool calls finish (at most ``drain_seconds``); with ``resume_stored``
    it resumes, once started, the store's runs a stop interrupted or a crash left running.
    """
    live_config: settings.LiveConfig | None = None
    if launcher is None:
        if agent is None:
            raise UserError("create_app needs an agent or a launcher")
        live_config = settings.LiveConfig(agent, config_path, allow_unsafe=allow_unsafe_config)
        launcher = RunLauncher(live_config.agent, registry or MemoryRunRegistry(), store)
    elif agent is not None or store is not None or registry is not None:
        raise UserError("create_app takes an agent (with a store, a registry) or a launcher")
    app = FastAPI(
        title="ponder",
        version=ponder.__version__,
        description="Run ponder agents over HTTP and watch them think.",
        lifespan=_lifespan(launcher, drain_seconds, resume_stored),
    )
    app.state.launcher = launcher
    app.state.live_config = live_config
    _add_error_handlers(app)
    _add_routes(app)
    mount_protocols(app, token=bool(token))
    if token:
        app.add_middleware(BearerTokenGuard, token=token)
    app.add_middleware(RequestOriginGuard, allowed_hosts=allowed_hosts or ["*"])
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(UserError, _user_error)
    app.add_exception_handler(RunLeaseError, _conflict)
    app.add_exception_handler(RunConflict, _conflict)
    app.add_exception_handler(StoreError, _store_error)


def _add_routes(app: FastAPI) -> None:
    app.include_router(routes.router)
    app.include_router(elicitations.router)
    app.include_router(openai_compat.router)
    app.include_router(settings.router)
    app.mount("/static", StaticFiles(directory=_STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def viewer() -> FileResponse:
        return FileResponse(_STATIC / "index.html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(_STATIC / "favicon.svg", media_type="image/svg+xml")


def serve_app(
    app: FastAPI,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[], None] | None = None,
    access_log: bool = True,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> None:
    """Serve ``app`` with uvicorn until Ctrl-C or SIGTERM; ``on_ready`` runs once it listens.

    Uvicorn's own chatter stays at warnings; with ``access_log`` each request is one line.
    A stop is graceful (the process then exits 0); a second Ctrl-C cuts its drain short.
    A connection is closed when no request arrives within ``request_timeout`` seconds (of
    it opening, or of its last answer); past ``max_connections`` (at most half the file
    descriptor limit) a new one gets a 503 at once.
    """
    import uvicorn

    from ponder.server.connections import bounded_protocol, connection_limit, quiet_accept_errors

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            quiet_accept_errors(asyncio.get_running_loop())
            await super().startup(sockets)
            if self.started and on_ready is not None:
                on_ready()

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            launcher = getattr(app.state, "launcher", None)
            if self.force_exit and isinstance(launcher, RunLauncher):
                launcher.hurry = True
            captured = getattr(self, "_captured_signals", None)
            if sig == signal.SIGTERM and isinstance(captured, list):
                captured[:] = [s for s in captured if s != sig]  # handled: not raised again

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=5,
        http=bounded_protocol(connection_limit(max_connections), request_timeout),
        timeout_keep_alive=max(1, min(5, int(request_timeout))),
    )
    if access_log:
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    try:
        Server(config).run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled, once shut down
        pass
