"""ponder.store."""
