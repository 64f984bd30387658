"""Shared dependencies of the routers: the store, the pool, and the two auth levels."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request

from synelo.service.auth import require
from synelo.store.repository import Store
from synelo.store.typedefs import Pool, UnknownPool


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_pool(request: Request,
             pool: Annotated[str, Path(description="pool name", max_length=64)]) -> Pool:
    """The pool's settings (404 when there is no such pool)."""
    try:
        return request.app.state.store.pool_settings(pool)
    except UnknownPool:
        raise HTTPException(404, f"unknown pool {pool!r}") from None


StoreDep = Annotated[Store, Depends(get_store)]
PoolDep = Annotated[Pool, Depends(get_pool)]
ServerAuth = Depends(require("server"))
AdminAuth = Depends(require("admin"))
