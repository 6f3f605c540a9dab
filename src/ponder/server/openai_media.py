"""Images in OpenAI chat messages (``image_url`` content parts) as ponder `Image`s.

An ``image_url`` part names an ``http(s)://`` URL, which goes to the model as it is, or a
``data:image/...;base64,...`` URL, decoded and kept inline. Nothing else is read: a path
or another scheme would make the server open its own files. Other non-text parts
(``input_audio``, ``file``) are refused by name, never dropped.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from fastapi import HTTPException

from ponder.exceptions import UserError
from ponder.media import Image
from ponder.server.schemas import ChatMessageIn

__all__ = ["RequestError", "images_of"]

_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,(.*)$", re.DOTALL)


class RequestError(HTTPException):
    """A 400 in OpenAI's shape, naming the request field at fault."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(400, message)
        self.param, self.code = param, code


def images_of(message: ChatMessageIn, index: int) -> list[Image]:
    """The images of a message's ``image_url`` parts; `RequestError` for another part."""
    if not isinstance(message.content, list):
        return []
    images: list[Image] = []
    for number, part in enumerate(message.content):
        where = f"messages.{index}.content.{number}"
        if part.type == "text":
            continue
        if part.type != "image_url":
            raise RequestError(
                f"{where}: content parts of type {part.type!r} are not supported "
                "(give text and image_url parts)",
                f"{where}.type",
            )
        if message.role != "user":
            raise RequestError(f"{where}: only user messages may carry images", where)
        images.append(_image(getattr(part, "image_url", None), f"{where}.image_url"))
    return images


def _image(value: Any, where: str) -> Image:
    url = value.get("url") if isinstance(value, dict) else None
    if not isinstance(url, str) or not url:
        raise RequestError(f"{where}: give {{'url': 'https://...' or 'data:image/...'}}", where)
    found = _DATA_URL.match(url)
    if not url.startswith(("http://", "https://")) and found is None:
        raise RequestError(
            f"{where}.url: not an http(s) URL or a base64 data: URL of an image", f"{where}.url"
        )
    try:
        if found is None:
            return Image(url)
        data = base64.b64decode(found.group(2), validate=True)
        return Image(data, media_type=found.group(1))
    except binascii.Error:
        message = f"{where}.url: the data: URL is not valid base64"
        raise RequestError(message, f"{where}.url") from None
    except UserError as error:
        raise RequestError(f"{where}.url: {error}", f"{where}.url") from None
