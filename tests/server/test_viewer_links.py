"""The viewer makes a link of an http(s) URL only: an MCP server's ``javascript:`` URL is text.

The served ``links.js`` and ``elicitation.js`` run in Node on a small stand-in for the DOM
(the browser tests in ``tests/viewer`` need Chromium); each URL is shown as a URL-mode
question, and the hrefs of the links the page made are compared.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from ponder.server.app import create_app

from .live import echo_agent, live_server

SCRIPT = Path(__file__).with_name("node") / "elicitation_links.cjs"
URLS = {
    "https://example.com/approve?x=1": ["https://example.com/approve?x=1"],
    "http://127.0.0.1:8000/cb": ["http://127.0.0.1:8000/cb"],
    "javascript:alert(document.cookie)": [],
    " JavaScript:alert(1)": [],
    "data:text/html,<script>alert(1)</script>": [],
    "vbscript:msgbox(1)": [],
    "/relative/path": [],
    "not a url": [],
}


def test_only_http_urls_of_an_elicitation_become_links() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    with live_server(create_app(echo_agent())) as server:
        served = {
            name: httpx.get(f"{server.url}/static/{name}.js").text
            for name in ("links", "elicitation")
        }
        page = httpx.get(server.url).text
    assert page.index("/static/links.js") < page.index("/static/elicitation.js")
    ran = subprocess.run(
        ["node", str(SCRIPT), json.dumps(list(URLS))],
        input=json.dumps(served),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert dict(zip(URLS, json.loads(ran.stdout), strict=True)) == URLS
