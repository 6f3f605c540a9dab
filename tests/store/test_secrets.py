"""Secrets kept in a store (OAuth tokens): apart from runs, replaced whole, read back."""

from __future__ import annotations

from ponder.store import Store


async def test_a_secret_is_kept_replaced_and_never_a_run(store: Store) -> None:
    assert await store.get_secret("mcp-oauth", "https://a.test/mcp") is None
    await store.set_secret("mcp-oauth", "https://a.test/mcp", {"tokens": {"access_token": "t1"}})
    await store.set_secret("mcp-oauth", "https://b.test/mcp", {"tokens": {"access_token": "t2"}})
    await store.set_secret("mcp-oauth", "https://a.test/mcp", {"tokens": {"access_token": "t3"}})
    assert await store.get_secret("mcp-oauth", "https://a.test/mcp") == {
        "tokens": {"access_token": "t3"}
    }
    assert await store.get_secret("other", "https://a.test/mcp") is None
    assert await store.list_runs() == []
