"""An ASGI middleware that answers 413 for a body over the limit, before anything reads it,
and 422 for a JSON body with a lone UTF-16 surrogate in a string.

FastAPI's own `max_body_size` answers a too-long Content-Length with a plain-text 413; game
servers' HTTP extensions throw on a body that is not JSON, so synelo keeps its own.

Python's JSON reader takes an escaped half of a surrogate pair (``"\\udc00"``) and makes a
string that no UTF-8 encoder will write: a field the model accepted failed in the database,
and the 422 of a field it refused failed to encode its own echo. I-JSON (RFC 7493, §2.1)
forbids such strings, and so does synelo, before the route sees the body.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


class BodyLimit:
    """Rejects bodies over `max_bytes` whether or not Content-Length is sent (a chunked
    body is read up to the limit and then passed on intact), and JSON bodies holding a lone
    surrogate (see the module's docstring)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # client went away
                await self.app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _is_json(scope) and (found := lone_surrogate(body)) is not None:
            await _send_json(send, 422, {"detail": [found]})
            return
        await self.app(
            scope,
            _replay([{"type": "http.request", "body": body, "more_body": False}], receive),
            send,
        )

    async def _reject(self, send: Send) -> None:
        detail = {"detail": f"request body exceeds {self.max_bytes} bytes"}
        await _send_json(send, 413, detail, close=True)


async def _send_json(send: Send, status: int, content: Any, close: bool = False) -> None:
    body = orjson.dumps(content)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _is_json(scope: Scope) -> bool:
    """Whether FastAPI will read the body as JSON: its media type is application/json or
    application/*+json (FastAPI's strict content type)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            media: bytes = value.split(b";", 1)[0].strip().lower()
            return media.startswith(b"application/") and (
                media == b"application/json" or media.endswith(b"+json")
            )
    return False


def lone_surrogate(body: bytes) -> dict[str, Any] | None:
    """The 422 error for the first string of the JSON `body` that holds a lone surrogate, in
    FastAPI's format, with the string escaped; None when there is none. A body without a
    surrogate escape (nearly all) is only scanned, not parsed a second time."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None  # not JSON: FastAPI answers it with its own 422
    todo: list[tuple[tuple[str | int, ...], Any]] = [(("body",), document)]
    while todo:  # not recursive: the body may nest as deep as the JSON reader allows
        loc, value = todo.pop()
        if isinstance(value, str):
            if _has_surrogate(value):
                return _surrogate_error(loc, value)
        elif isinstance(value, list):
            todo.extend(((*loc, i), v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            for key in value:
                if _has_surrogate(key):
                    return _surrogate_error((*loc, escape_surrogates(key)), key)
            todo.extend(((*loc, k), v) for k, v in reversed(value.items()))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its escape (``\\udc00``), so that it
    can be written as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _surrogate_error(loc: tuple[str | int, ...], value: str) -> dict[str, Any]:
    return {
        "type": "string_unicode",
        "loc": list(loc),
        "msg": "String should not contain a lone UTF-16 surrogate (RFC 7493)",
        "input": escape_surrogates(value),
    }


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    async def receive() -> Message:
        if messages:
            return messages.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
