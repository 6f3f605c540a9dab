"""The durability tests use the store fixture of the store tests (memory, SQLite, PostgreSQL)."""

from tests.store.conftest import store

__all__ = ["store"]
