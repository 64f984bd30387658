"""Player ids that contain '/' in URL paths.

A text pool takes any printable ASCII id, '/' included, and a client sends such an id in a
path as ``%2F``. The ASGI server decodes the path before routing, which would split that id
into two segments (a 404). `EncodedSlashes` rebuilds the routing path from the raw one so
that a segment keeps its own '/' (and '%') percent-encoded, and `player_path_id`
(`synelo.service.params`) decodes the segment once routed. Paths without ``%2F`` are left
exactly as they are.
"""

from __future__ import annotations

from urllib.parse import unquote

from starlette.types import ASGIApp, Receive, Scope, Send

ENCODED = "synelo.encoded_segments"  # scope key: path segments are still percent-encoded


class EncodedSlashes:
    """Routes ``/players/a%2Fb`` as one segment ``a/b`` instead of two."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and (b"%2F" in raw or b"%2f" in raw):  # no copy of every request's path
            segments = (unquote(s) for s in raw.split(b"?", 1)[0].decode("latin-1").split("/"))
            path = "/".join(s.replace("%", "%25").replace("/", "%2F") for s in segments)
            scope = {**scope, "path": path, ENCODED: True}
        await self.app(scope, receive, send)
