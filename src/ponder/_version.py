"""The installed version of ponder (a leaf: anything may import it)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
