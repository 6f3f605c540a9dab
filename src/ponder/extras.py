"""Optional parts of ponder and the extras that install them.

A plain ``pip install ponder`` gives the library and the ``ponder`` command with
OpenAI-compatible models. The rest is an extra: ``server`` (``ponder serve``: FastAPI,
uvicorn, sse-starlette), ``mcp`` (MCP servers' tools, the thinking MCP server),
``postgres`` (the PostgreSQL store), ``anthropic``, ``temporal``, ``agui`` (the AG-UI
endpoint) and ``a2a`` (the A2A server and `A2AAgent`); ``all`` installs
every one. Using a part whose extra is missing raises `UserError` naming the extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ponder.exceptions import UserError

__all__ = ["EXTRAS", "missing_extra", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("fastapi", "uvicorn", "sse_starlette", "starlette"),
    "mcp": ("mcp", "mcp_types"),
    "postgres": ("psycopg",),
    "anthropic": ("anthropic",),
    "temporal": ("temporalio",),
    "agui": ("ag_ui.core", "ag_ui.encoder"),
    "a2a": ("a2a.client", "a2a.server.routes", "a2a.types"),
}
"""Each extra and the modules it provides."""


def missing_extra(extra: str, feature: str, error: ImportError) -> UserError:
    """The error for ``feature`` needing ``extra``, whose import failed with ``error``."""
    module = error.name or "a module"
    return UserError(
        f"{feature} needs the {extra!r} extra ({module} is not installed): "
        f"pip install 'ponder[{extra}]'"
    )


def require(extra: str, feature: str) -> list[ModuleType]:
    """Import every module of ``extra``, or raise `UserError` naming it."""
    try:
        return [importlib.import_module(name) for name in EXTRAS[extra]]
    except ImportError as error:
        raise missing_extra(extra, feature, error) from None
