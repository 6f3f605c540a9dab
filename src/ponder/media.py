"""Images and files in a prompt (and in tool results): `Image`, `File`, and how they are kept.

``Image(path | bytes | url)`` and ``File(path | bytes, media_type=...)`` read their data
when made, so an unreadable or unknown one is a `UserError` naming it before any request.
Data up to `INLINE_MAX_BYTES` is kept inline (base64) in the ledger and so in every
checkpoint; a larger file is kept by reference (its absolute path) and read when a request
is sent. A URL stays a URL. Providers get them in their own wire format (OpenAI content
parts, Anthropic blocks); a provider whose profile has no ``vision`` is refused.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from ponder.exceptions import UserError

__all__ = ["INLINE_MAX_BYTES", "Attachment", "File", "Image", "split_prompt"]

INLINE_MAX_BYTES = 4 * 1024 * 1024
"""Data up to this size is kept inline in checkpoints; larger files by their path."""

Source: TypeAlias = str | Path | bytes
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)


class _Media(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    media_type: str
    data: str | None = None
    """The content, base64 (inline)."""
    path: str | None = None
    """Where a file too large to keep inline is read from when a request is sent."""
    url: str | None = None
    name: str | None = None

    def base64(self) -> str:
        """The content as base64 (read from ``path`` for a file kept by reference)."""
        if self.data is not None:
            return self.data
        if self.path is None:
            raise UserError(f"{self.label()} has no data, only a URL")
        return base64.b64encode(_read(Path(self.path), self.label())).decode()

    def data_url(self) -> str:
        """The URL a provider reads it from: its own URL, or a ``data:`` URL."""
        return self.url or f"data:{self.media_type};base64,{self.base64()}"

    def label(self) -> str:
        """How errors name it."""
        return f"{type(self).__name__}({self.name or self.url or self.path or self.media_type!r})"


class Image(_Media):
    """An image for the model: ``Image("photo.png")``, ``Image(png_bytes)``, ``Image(url)``."""

    kind: Literal["image"] = "image"

    def __init__(
        self,
        source: str | Path | bytes | None = None,
        /,
        *,
        media_type: str | None = None,
        **data: Any,
    ) -> None:
        if source is None:
            data["media_type"] = media_type  # a stored one, validated
        else:
            data.update(_load(source, "Image", media_type))
            if not data["media_type"].startswith("image/"):
                raise UserError(f"Image({_shown(source)}): not an image ({data['media_type']})")
        super().__init__(**data)


class File(_Media):
    """A document for the model (a PDF, a text file): ``File("report.pdf")``."""

    kind: Literal["file"] = "file"

    def __init__(
        self,
        source: str | Path | bytes | None = None,
        /,
        *,
        media_type: str | None = None,
        **data: Any,
    ) -> None:
        data.update(_load(source, "File", media_type) if source else {"media_type": media_type})
        super().__init__(**data)


Attachment: TypeAlias = Annotated[Image | File, Field(discriminator="kind")]


def split_prompt(prompt: Any) -> tuple[str, list[Image | File]]:
    """A prompt's text (its strings, joined by blank lines) and its images and files."""
    if isinstance(prompt, str):
        return prompt, []
    if not isinstance(prompt, list | tuple):
        raise UserError(f"prompt must be a str or a list of str, Image and File, got {prompt!r}")
    texts: list[str] = []
    media: list[Image | File] = []
    for item in prompt:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Image | File):
            media.append(item)
        else:
            raise UserError(f"prompt items are str, Image or File, got {item!r}")
    return "\n\n".join(texts), media


def _load(source: str | Path | bytes, what: str, media_type: str | None) -> dict[str, Any]:
    if isinstance(source, bytes):
        if len(source) > INLINE_MAX_BYTES:
            raise UserError(
                f"{what}(bytes): {len(source)} bytes is over the {INLINE_MAX_BYTES}-byte inline "
                "cap; give a path (kept by reference) or a URL"
            )
        kind = media_type or _sniff(source)
        if kind is None:
            raise UserError(f"{what}(bytes): unknown type; give media_type='image/png' or the like")
        return {"media_type": kind, "data": base64.b64encode(source).decode()}
    text = str(source)
    if isinstance(source, str) and text.startswith(("http://", "https://")):
        guessed = media_type or mimetypes.guess_type(text.split("?")[0])[0] or "image/png"
        return {"media_type": guessed, "url": text, "name": text.rsplit("/", 1)[-1] or None}
    path = Path(text).expanduser().resolve()
    return _from_path(path, what, media_type)


def _from_path(path: Path, what: str, media_type: str | None) -> dict[str, Any]:
    label = f"{what}({str(path)!r})"
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"{label}: cannot read it: {exc.strerror}") from None
    head = _read(path, label, limit=16)
    kind = media_type or _sniff(head) or mimetypes.guess_type(path.name)[0]
    if kind is None:
        raise UserError(f"{label}: unknown type; give media_type='...'")
    found: dict[str, Any] = {"media_type": kind, "name": path.name}
    if size > INLINE_MAX_BYTES:
        return {**found, "path": str(path)}
    return {**found, "data": base64.b64encode(_read(path, label)).decode()}


def _read(path: Path, label: str, limit: int = -1) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        raise UserError(f"{label}: cannot read it: {exc.strerror}") from None


def _sniff(head: bytes) -> str | None:
    for signature, kind in _SIGNATURES:
        if head.startswith(signature):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _shown(source: str | Path | bytes) -> str:
    return "bytes" if isinstance(source, bytes) else repr(str(source))
