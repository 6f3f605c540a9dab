"""ponder.tools."""
