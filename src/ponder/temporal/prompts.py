"""A prompt's images and files on Temporal: carried inline in the run's input.

`TemporalAgent.start` takes a prompt as `Agent.run` does (text, or ``[text, Image(...),
File(...)]``); the images and files travel in the workflow input as JSON, so they are in
the history and every worker that takes the run up sends them with the prompt. Only what
the input itself holds can travel: a file kept by its path (one over `INLINE_MAX_BYTES`)
is refused, as is more inline data than a Temporal payload takes.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from ponder.exceptions import UserError
from ponder.media import Attachment, File, Image, split_prompt

__all__ = ["INPUT_MEDIA_MAX_BYTES", "attachments_from_data", "prompt_input"]

INPUT_MEDIA_MAX_BYTES = 1_500_000
"""Inline data (base64) a run's input may hold; Temporal refuses a payload over 2 MB."""

_ATTACHMENTS = TypeAdapter(tuple[Attachment, ...])


def prompt_input(prompt: Any) -> dict[str, Any]:
    """The run input's ``prompt`` (its text) and ``attachments`` (its images and files)."""
    text, media = split_prompt(prompt)
    for item in media:
        _check_carried(item)
    total = sum(len(item.data or "") for item in media)
    if total > INPUT_MEDIA_MAX_BYTES:
        raise UserError(
            f"the prompt's images and files come to {total} bytes of inline data; a run on "
            f"Temporal carries at most {INPUT_MEDIA_MAX_BYTES} in its input (a Temporal "
            "payload holds 2 MB): give URLs, or fewer or smaller files"
        )
    if not media:
        return {"prompt": text}
    return {
        "prompt": text,
        "attachments": [item.model_dump(mode="json", exclude_none=True) for item in media],
    }


def _check_carried(item: Image | File) -> None:
    if item.path is not None:
        raise UserError(
            f"{item.label()} is kept by its path (it is over the inline cap), which a "
            "worker of a run on Temporal may not read: give a URL or a smaller file"
        )


def attachments_from_data(data: Any) -> tuple[Image | File, ...]:
    """The images and files a run's input carries (``ValidationError`` for bad data)."""
    return _ATTACHMENTS.validate_python(data or ())
