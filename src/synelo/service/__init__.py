"""The HTTP API (FastAPI): thin routers over the store and the pure rating math.

The package imports nothing itself: the pages (`synelo.web`) import routers of it, and the
app (`synelo.service.app`) imports the pages.
"""
