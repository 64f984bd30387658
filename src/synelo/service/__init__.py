"""The HTTP API (FastAPI): thin routers over the store and the pure rating math."""

from synelo.service.app import create_app

__all__ = ["create_app"]
