"""ponder's MCP client under the conformance suite: ``client.py SERVER_URL``.

The suite runs this once per client scenario (``MCP_CONFORMANCE_SCENARIO``, with
``MCP_CONFORMANCE_CONTEXT`` JSON for credentials). It connects with `MCPToolset` —
OAuth for ``auth/*`` scenarios, the "browser" being `tests/fixtures/fake_browser.py` —
lists the tools and calls each once; elicitation is accepted with the schema's defaults.
Exits 1 with the reason on stderr when the server could not be used.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ponder.mcp import MCPToolset, parse_server_spec
from ponder.mcp.binding import RunBinding
from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ponder.tools.tool import ToolContext

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def sample(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind in ("number", "integer"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {k: sample(v) for k, v in schema.get("properties", {}).items()}
    return "x"


def protected_by(url: str) -> str:
    """The authorization server the MCP server's protected-resource metadata names.

    In cross-app access the issuer is configuration; the suite does not pass it in its
    context, so the harness looks it up the way an administrator would.
    """
    import httpx

    parts = urlsplit(url)
    found = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    servers: list[str] = httpx.get(found, timeout=10).json()["authorization_servers"]
    return servers[0]


def entry(url: str, scenario: str, store: str) -> dict[str, Any]:
    found: dict[str, Any] = {"name": "conformance", "url": url}
    if not scenario.startswith("auth/"):
        return found
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth: dict[str, Any] = {"token_store": store}
    if "idp_id_token" in context:
        oauth.update(flow="identity_assertion", issuer=protected_by(url))
        oauth.update(client_id=context["client_id"], client_secret=context["client_secret"])
        oauth.update(id_token=context["idp_id_token"], idp_client_id=context["idp_client_id"])
        oauth.update(idp_token_endpoint=context["idp_token_endpoint"])
        oauth.update(token_endpoint_auth_method="client_secret_basic")
    elif "private_key_pem" in context:
        oauth.update(flow="private_key_jwt", client_id=context["client_id"])
        oauth.update(private_key=context["private_key_pem"])
        oauth.update(signing_algorithm=context.get("signing_algorithm", "RS256"))
    elif "client_secret" in context:
        oauth.update(flow="client_credentials", client_id=context["client_id"])
        oauth.update(client_secret=context["client_secret"], issuer=context.get("issuer"))
    elif "client_id" in context:
        oauth.update(client_id=context["client_id"])
    if scenario == "auth/basic-cimd":
        oauth.update(client_metadata_url="https://conformance-test.local/client-metadata.json")
    found["oauth"] = oauth
    return found


async def accept(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


async def main(url: str) -> int:
    browser = webbrowser.GenericBrowser([sys.executable, str(FIXTURES / "fake_browser.py"), "%s"])
    webbrowser.register("conformance-browser", None, browser, preferred=True)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with tempfile.TemporaryDirectory() as store:
        config = parse_server_spec(entry(url, scenario, store))
        async with MCPToolset([config], init_timeout=20) as toolset:
            with toolset.bind(RunBinding(run_id="conformance", elicit=accept)):
                tools = await toolset.tools()
                if toolset.errors:
                    print(json.dumps(toolset.errors), file=sys.stderr)
                    return 1
                for tool in tools:
                    ctx = ToolContext(run_id="conformance", call_id=tool.name, tool_name=tool.name)
                    result = await tool.function(ctx, sample(tool.parameters))
                    print(f"{tool.name}: {result.output or result.error}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
