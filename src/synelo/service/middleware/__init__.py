"""The ASGI layers around every request, outermost first: the security headers, metrics and
the access log, CORS of the public endpoints, rate limits, each client's fair share, encoded
slashes, the body limit; and the log of unexpected errors. None of them imports a route or a
page."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "cors",
    "errors",
    "fairshare",
    "headers",
    "limits",
    "metrics",
    "paths",
    "ratelimit",
]
