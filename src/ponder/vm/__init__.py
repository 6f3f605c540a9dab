"""ponder.vm."""
