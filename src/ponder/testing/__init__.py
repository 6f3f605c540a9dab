"""ponder.testing."""
