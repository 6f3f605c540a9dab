"""ponder.mcp."""
