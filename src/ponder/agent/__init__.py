"""ponder.agent."""
