"""The HTTP server: runs over REST and SSE, an OpenAI-compatible endpoint, the viewer."""

__all__: list[str] = []
