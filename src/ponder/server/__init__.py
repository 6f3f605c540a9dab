"""ponder.server."""
