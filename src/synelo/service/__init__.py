"""The HTTP service (FastAPI), in layers, each importing only those below it:

- `middleware`: the ASGI layers around every request (limits, CORS, metrics, errors);
- `auth`, `deps`, `ids`, `params`, `gate`, `charts`: what the routes and pages share;
- `api`: thin routers over the store and the pure rating math, beside the modules that hold
  what the routes and the pages both run (`api.views`, `api.reports`, `api.actions`…);
- `pages`: the server-rendered pages, which call those modules, never a route;
- `history_import`: a history file rated into a pool through the round route's checks and
  writer (`synelo pool import`);
- `app`: the one composition root, which wires all of them; `server`: how uvicorn runs it.

"""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "api",
    "app",
    "auth",
    "charts",
    "deps",
    "gate",
    "history_import",
    "ids",
    "middleware",
    "pages",
    "params",
    "server",
]
