"""Who holds a lease, and whether that holder died on this host.

A lease owner is ``host:pid:nonce``: a process on the same host can tell that a holder's
process is gone (its lease may then be taken over at once, not only once it expires).
"""

from __future__ import annotations

import os
import socket
import uuid

__all__ = ["is_dead_here", "lease_owner"]


def lease_owner() -> str:
    """A new owner name for a lease this process takes (``host:pid:nonce``)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def is_dead_here(holder: str) -> bool:
    """True if ``holder`` names a process of this host that no longer exists."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
