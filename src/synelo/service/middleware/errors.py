"""Logging unexpected errors (the 500s) without one traceback per request."""

from __future__ import annotations

import logging
import time
import traceback

Place = tuple[str, tuple[tuple[str, int], ...]]  # exception type, its traceback's lines


class ErrorLog:
    """Logs an error's traceback the first time it happens at a place (the same exception
    type raised along the same lines of code), then at most once per `interval_s` for that
    place, saying how many were left out. A database that goes away makes every request
    fail the same way: that is one traceback a minute, not thousands."""

    def __init__(
        self, logger: logging.Logger, interval_s: float = 60.0, max_places: int = 1000
    ) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.max_places = max_places
        self._places: dict[Place, tuple[float, int]] = {}  # → (last logged, left out since)

    def error(self, exc: BaseException, message: str, *args: object) -> bool:
        """Log `exc` with `message` % `args` unless its place was logged less than
        `interval_s` ago; True if it was logged."""
        place = _place(exc)
        now = time.monotonic()
        last = self._places.get(place)
        if last is not None and now - last[0] < self.interval_s:
            self._places[place] = (last[0], last[1] + 1)
            return False
        if last is None and len(self._places) >= self.max_places:
            self._places.clear()  # forget the old places rather than grow without end
        self._places[place] = (now, 0)
        if last is not None and last[1]:
            message += f" ({last[1]} more like it since the last logged, {now - last[0]:.0f} s ago)"
        self.logger.error(message, *args, exc_info=exc)
        return True


def _place(exc: BaseException) -> Place:
    lines = tuple((f.f_code.co_filename, line) for f, line in traceback.walk_tb(exc.__traceback__))
    return type(exc).__qualname__, lines
