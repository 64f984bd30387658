"""The security headers of every answer, pages and API alike (issue 36, defects 1 and 2).

- `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`: no page is shown in a frame,
  from another site or from another port or subdomain of the same site (which
  `SameSite=Strict` lets through), so an admin's page cannot be clicked through a frame;
- a Content-Security-Policy: the pages run no script and load only the app's own
  stylesheet (`/static/synelo.css`), so they allow nothing else; the API documents (`/docs`,
  `/redoc`) run the packaged Swagger UI and ReDoc from `/static/docs/`, no other script,
  and may style inline (both inject their styles), fetch the OpenAPI document and start
  ReDoc's search worker from a blob;
- `X-Content-Type-Options: nosniff`, and `Referrer-Policy: same-origin` (a page's address,
  which may name a private pool or a player, is never sent to another site).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
DOCS_PATHS = frozenset({"/docs", "/redoc"})
COMMON = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]
_PAGE = [*COMMON, (b"content-security-policy", PAGE_POLICY.encode())]
_DOCS = [*COMMON, (b"content-security-policy", DOCS_POLICY.encode())]


def security_headers(path: str = "") -> list[tuple[bytes, bytes]]:
    """The headers above for an answer to `path`: the docs' policy or the pages' (also for
    an answer to no path: the connection-level ones of synelo.service.server)."""
    return _DOCS if path in DOCS_PATHS else _PAGE


class SecurityHeaders:
    """Adds the headers above to every HTTP answer (outermost, so a 413 or 429 has them).
    An unhandled error's 500 is sent from Starlette's ServerErrorMiddleware, outside this
    one: the app's 500 handler adds the same `security_headers` itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = security_headers(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
