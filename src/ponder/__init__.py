"""ponder — an agent runtime whose think–act loop is a program run by an instruction VM."""

from importlib.metadata import PackageNotFoundError, version

from ponder.exceptions import PonderError, RunError, UserError

try:
    __version__ = version("ponder")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["PonderError", "RunError", "UserError", "__version__"]
