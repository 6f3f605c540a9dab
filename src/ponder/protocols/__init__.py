"""The open agent protocols ponder speaks: AG-UI towards frontends, A2A between agents.

- ``ponder.protocols.agui``: the AG-UI endpoint (``POST /v1/agui``) and a mountable app.
- ``ponder.protocols.a2a_server``: an A2A server (agent card, JSON-RPC tasks) for the agent.
- ``ponder.protocols.a2a_client``: `A2AAgent`, a remote A2A agent as a tool.

Each needs its extra (``agui``, ``a2a``); the wire types and encoders are the official SDKs'.
"""

from __future__ import annotations

from typing import Any

from ponder.exceptions import UserError
from ponder.extras import require

__all__ = ["mount_protocols"]


def mount_protocols(app: Any, *, token: bool = False) -> list[str]:
    """Add the AG-UI and A2A endpoints to ponder's server ``app`` when their extras are in.

    Returns the protocols mounted. The endpoints follow the app's ``state.launcher``.
    """
    mounted: list[str] = []
    launcher = app.state.launcher
    try:
        require("agui", "the AG-UI endpoint")
    except UserError:
        pass
    else:
        from ponder.protocols import agui

        app.include_router(agui.router)
        mounted.append("agui")
    try:
        require("a2a", "the A2A server")
    except UserError:
        pass
    else:
        from ponder.protocols import a2a_server

        app.router.routes.extend(a2a_server.a2a_routes(launcher, token=token))
        mounted.append("a2a")
    return mounted
