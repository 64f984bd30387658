"""A table of natives by their SourcePawn name, filled by a decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Native = Callable[..., Any]


class NativeTable(dict[str, Native]):
    def native(self, name: str) -> Callable[[Native], Native]:
        """Registers the decorated function as the native `name` (methodmaps: `Type.Method`)."""

        def register(fn: Native) -> Native:
            self[name] = fn
            return fn

        return register
