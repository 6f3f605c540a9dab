"""Install npm packages used by tests (MCP reference servers) into a cache folder once.

The cache is ``.cache/npm`` in the checkout (override with ``PONDER_NPM_CACHE``). A file
lock makes concurrent test processes install each package once.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("PONDER_NPM_CACHE", ROOT / ".cache" / "npm"))


def npm_package(spec: str) -> Path:
    """Install ``spec`` (``name@version``) if needed; return its package folder.

    Skips the calling test when npm is not installed.
    """
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    name = spec.rsplit("@", 1)[0] if spec.count("@") > (1 if spec.startswith("@") else 0) else spec
    CACHE.mkdir(parents=True, exist_ok=True)
    package_dir = CACHE / "node_modules" / name
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (package_dir / "package.json").exists():
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), spec],
                check=True,
                capture_output=True,
                timeout=600,
            )
    return package_dir


def npm_bin_command(spec: str) -> list[str]:
    """The ``node <entry>`` command that runs the package's (first) bin script."""
    package_dir = npm_package(spec)
    meta = json.loads((package_dir / "package.json").read_text())
    bin_field = meta["bin"]
    entry = bin_field if isinstance(bin_field, str) else next(iter(bin_field.values()))
    return ["node", str(package_dir / entry)]
