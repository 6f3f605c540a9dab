"""ponder.cli."""
