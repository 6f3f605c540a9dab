"""``/v1/config``: the configuration new runs get — read it, change it, save it to its file.

`LiveConfig` is the server's agent source: until an edit it hands out the agent it was
given; after one, an agent built from the edited config (`Agent.with_config`). A run in
flight keeps the agent it started with, so an edit never reaches it. Saving writes the
changed keys into the file the server was started with (``--config``), comments kept.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ponder.agent import Agent
from ponder.config import AgentConfig
from ponder.config.fields import apply_changes, describe_config, to_plain
from ponder.config.file import write_changes
from ponder.config.masking import unmask
from ponder.exceptions import ConfigError
from ponder.server.local_launcher import AgentSource
from ponder.server.schemas import ErrorBody

__all__ = ["UNSAFE_KEYS", "ConfigPatch", "ConfigView", "LiveConfig", "UnsafeChange", "router"]

UNSAFE_KEYS = frozenset(
    {
        "base_url",
        "agent_mcp_client_enable",
        "agent_mcp_server_scripts",
        "mcp_roots",
        "rag_index_path",
    }
)
"""Keys that start processes, send the API key somewhere or open files: the file's only."""

router = APIRouter(prefix="/v1/config", tags=["config"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody},
    401: {"model": ErrorBody},
    403: {"model": ErrorBody},
    409: {"model": ErrorBody},
}


class ConfigPatch(BaseModel):
    """Changes for new runs: key → value (null: back to the default); ``save`` writes the file."""

    model_config = ConfigDict(extra="forbid")

    values: dict[str, Any] = Field(max_length=200)
    save: StrictBool = False


class ConfigView(BaseModel):
    """The effective configuration by section, each key with its description."""

    path: str | None
    """The file the server was started with (``--config``); None without one."""
    sections: list[dict[str, Any]]


class LiveConfig:
    """The agent new runs get, rebuilt when the configuration is edited."""

    def __init__(
        self, source: AgentSource, path: Path | None = None, *, allow_unsafe: bool = False
    ) -> None:
        self._source = source
        self.path = path
        self.allow_unsafe = allow_unsafe
        """Whether the API may change `UNSAFE_KEYS` (``ponder serve --allow-unsafe-config``)."""
        self._base: AgentConfig | None = None
        self._edited: AgentConfig | None = None
        self._agent: Agent | None = None
        self._lock = asyncio.Lock()

    @property
    def config(self) -> AgentConfig:
        """The configuration the next run gets."""
        if self._edited is not None:
            return self._edited
        if self._base is None:
            source = self._source
            self._base = source.config if isinstance(source, Agent) else source().config
        return self._base

    def agent(self) -> Agent:
        """The agent for a new run."""
        source = self._source
        if not isinstance(source, Agent):
            fresh = source()
            return fresh if self._edited is None else fresh.with_config(self._edited)
        if self._edited is None:
            return source
        if self._agent is None:
            self._agent = source.with_config(self._edited)
        return self._agent

    async def update(self, values: dict[str, Any], *, save: bool) -> AgentConfig:
        """Validate and apply ``values``; with ``save``, write them to the file first.

        A value shown masked keeps its secrets (`ponder.config.masking.unmask`); a key
        whose value does not change is left out. ``ConfigError`` for an invalid value,
        `UnsafeChange` for a key only the file may change, `ConfigNotSaved` when the file
        cannot take them: then nothing changed, neither here nor in the file.
        """
        async with self._lock:
            values = self._real_changes(values)
            changed = apply_changes(self.config, values)
            if save:
                await self._save(changed, values)
            self._edited, self._agent = changed, None
            return changed

    def _real_changes(self, values: dict[str, Any]) -> dict[str, Any]:
        current = self.config
        real: dict[str, Any] = {}
        for key, value in values.items():
            if key not in AgentConfig.model_fields:
                real[key] = value  # apply_changes names the unknown key
                continue
            now = to_plain(getattr(current, key))
            value = unmask(value, now) if value is not None else None
            if value == now or (value is None and now == to_plain(_default(key))):
                continue
            if key in UNSAFE_KEYS and not self.allow_unsafe:
                raise UnsafeChange(key)
            real[key] = value
        return real

    async def _save(self, changed: AgentConfig, values: dict[str, Any]) -> None:
        if self.path is None:
            raise ConfigNotSaved("this server was started without --config: there is no file")
        written = {k: None if v is None else getattr(changed, k) for k, v in values.items()}
        try:
            await asyncio.to_thread(write_changes, self.path, written)
        except ConfigError as exc:
            raise ConfigNotSaved(str(exc)) from None


class ConfigNotSaved(Exception):
    """The changes could not be written to the config file (answered with 409)."""


class UnsafeChange(Exception):
    """A key that starts processes or reaches the network, changed over HTTP (403)."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"{key} starts processes, reaches the network or reads files, so it is changed "
            "only in the config file, unless the server runs with --allow-unsafe-config"
        )
        self.key = key


def _default(key: str) -> Any:
    return AgentConfig.model_fields[key].get_default(call_default_factory=True)


def _live(request: Request) -> LiveConfig:
    live = getattr(request.app.state, "live_config", None)
    if not isinstance(live, LiveConfig):  # the runs are configured where they run
        raise HTTPException(409, "this server's runs are configured elsewhere (their workers)")
    return live


def _view(live: LiveConfig) -> dict[str, Any]:
    path = str(live.path) if live.path is not None else None
    return {"path": path, "sections": describe_config(live.config)}


def _refusal(status: int, message: str, error_type: str, param: str | None) -> JSONResponse:
    body = {"error": {"message": message, "type": error_type, "param": param}}
    return JSONResponse(body, status_code=status)


@router.get("", response_model=ConfigView, responses=_ERRORS)
async def read_config(request: Request) -> dict[str, Any]:
    """The configuration new runs get, grouped the spec's way (secrets only as set/unset)."""
    return _view(_live(request))


@router.patch("", response_model=ConfigView, responses=_ERRORS)
async def change_config(body: ConfigPatch, request: Request) -> Any:
    """Change keys for new runs (never a run in flight); ``save`` also writes ``--config``.

    400 with the loader's message for an invalid key or value; 409 when ``save`` cannot
    write the file. Either way nothing changed.
    """
    live = _live(request)
    try:
        await live.update(body.values, save=body.save)
    except ConfigError as exc:
        return _refusal(400, str(exc), "invalid_request_error", exc.key)
    except ConfigNotSaved as exc:
        return _refusal(409, str(exc), "config_not_saved", None)
    except UnsafeChange as exc:
        return _refusal(403, str(exc), "unsafe_config_change", exc.key)
    return _view(live)
