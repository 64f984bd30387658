"""Shared dependencies of the routers: the store, the pool, and the two auth levels."""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request
from starlette.concurrency import run_in_threadpool

from synelo.domain import Pool, UnknownPool
from synelo.schemas import POOL_NAME
from synelo.service.auth import may_use, require
from synelo.store.core import POOL_MEMORY_S
from synelo.store.repository import Store


async def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def get_pool(
    request: Request, pool: Annotated[str, Path(description="pool name", pattern=POOL_NAME)]
) -> Pool:
    """The pool's settings (404 when there is no such pool, or when the request's token
    may not use it: the same answer, given before the database is asked); read from the
    database only the first time (in the thread pool, so the event loop never waits on
    it). The route's token must have been checked first (its `dependencies`)."""
    return await _pool(request, pool, POOL_MEMORY_S)


async def get_pool_read_again(
    request: Request, pool: Annotated[str, Path(description="pool name", pattern=POOL_NAME)]
) -> Pool:
    """`get_pool` for a route that reads the pool again, by id, with the rest of what it
    reads, and checks what it changed (a splits request): the pool as this worker last read
    it, however long ago, which spares such a request a second hop to the thread pool."""
    return await _pool(request, pool, math.inf)


async def _pool(request: Request, pool: str, within_s: float) -> Pool:
    """The pool as read in this process within `within_s`, or as read now."""
    if not may_use(request, pool):
        raise HTTPException(404, f"unknown pool {pool!r}")
    store: Store = request.app.state.store
    known = store.known_pool(pool, within_s)
    if known is not None:
        return known
    try:
        return await run_in_threadpool(store.get_pool, pool)
    except UnknownPool:
        raise HTTPException(404, f"unknown pool {pool!r}") from None


StoreDep = Annotated[Store, Depends(get_store)]
PoolDep = Annotated[Pool, Depends(get_pool)]
PoolReadAgainDep = Annotated[Pool, Depends(get_pool_read_again)]
ServerAuth = Depends(require("server"))
RoundAuth = Depends(require("server", rounds=True))  # counts against the rounds limit too
AdminAuth = Depends(require("admin"))
