"""The `ponder` command: run, chat, demo, dis, serve, runs, index, mcp."""

__all__: list[str] = []
