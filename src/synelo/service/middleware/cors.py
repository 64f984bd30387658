"""CORS for the public read endpoints (/v1/public/…), beyond what a success answer carries.

A public pool's answers carry `Access-Control-Allow-Origin: *` themselves (api.public).
This middleware adds what a website's script needs around them: the answer to a preflight
(OPTIONS, sent when the script sets a header of its own such as If-None-Match), and the
same header on every error of those routes (404, 422, 429), so that the script can read
the error and its Retry-After. A private pool's success answers stay without CORS: they
need a token, and the preflight allows no Authorization header.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from synelo.service.middleware.ratelimit import PUBLIC_PREFIX

PREFLIGHT_MAX_AGE_S = 600
_PREFLIGHT = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, HEAD"),
    (b"access-control-allow-headers", b"If-None-Match"),
    (b"access-control-max-age", str(PREFLIGHT_MAX_AGE_S).encode()),
    (b"content-length", b"0"),
]


class PublicCors:
    """Preflights and errors of the public read endpoints, with CORS headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(PUBLIC_PREFIX):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": _PREFLIGHT})
            await send({"type": "http.response.body", "body": b""})
            return

        async def annotated(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                headers = MutableHeaders(scope=message)
                headers["Access-Control-Allow-Origin"] = "*"
                headers["Access-Control-Expose-Headers"] = "Retry-After"
            await send(message)

        await self.app(scope, receive, annotated)
