"""The API's tokens: stored as their SHA-256 only, each with its role, a label and, for a
server token, the pools it may use (none named: every pool); added, listed, found by a
presented token (its use noted, to the minute), and revoked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import delete, insert, or_, select, update

from synelo.store.core import Core
from synelo.store.tables import api_tokens

Scope = frozenset[str] | None  # the pools a token may use; None: every pool
USE_NOTED_EVERY = timedelta(minutes=1)  # a token's last use is written this often at most


def hash_token(token: str) -> str:
    """The digest a token is stored and found by."""
    return hashlib.sha256(token.encode()).hexdigest()


class StoredToken(NamedTuple):
    """A stored token as `synelo token list` shows it."""

    id: int
    role: str
    label: str
    created_at: datetime
    pools: tuple[str, ...] | None = None  # by name; None: every pool
    last_used_at: datetime | None = None  # to USE_NOTED_EVERY; None: not used yet


class TokenHolder(NamedTuple):
    """Who a stored token is: its role, its label and the pools it may use."""

    role: str
    label: str
    pools: Scope


def add_token(
    core: Core, role: str, token: str, label: str, pools: Iterable[str] | None = None
) -> None:
    """Store a token (its digest only) with its role and label; `pools`: the only pools a
    server token may use (None: every pool). An admin token has no scope (ValueError)."""
    scope = None if pools is None else sorted(set(pools))
    if scope is not None and (role != "server" or not scope):
        raise ValueError("only a server token is scoped, to one pool or more")
    with core.write_transaction() as conn:
        conn.execute(
            insert(api_tokens).values(
                role=role,
                token_hash=hash_token(token),
                label=label,
                created_at=core.clock(),
                pools=None if scope is None else json.dumps(scope),
            )
        )


def token_identity(core: Core, token: str) -> TokenHolder | None:
    """Who a stored token is; None for an unknown one."""
    return token_holder(core, hash_token(token))


def token_holder(core: Core, token_hash: str) -> TokenHolder | None:
    """Who the stored token with this SHA-256 is; None for an unknown one."""
    with core.read() as conn:
        row = conn.execute(
            select(api_tokens.c.role, api_tokens.c.label, api_tokens.c.pools).where(
                api_tokens.c.token_hash == token_hash
            )
        ).first()
    if row is None:
        return None
    return TokenHolder(row.role, row.label, None if row.pools is None else frozenset(_names(row)))


def use_token(core: Core, token_hash: str) -> TokenHolder | None:
    """Who the stored token with this SHA-256 is (None for an unknown one), its use noted:
    `last_used_at` is written when it is older than USE_NOTED_EVERY, so a token in steady
    use costs one write a minute, and every other lookup stays a read. Of several workers
    that find it due at once, one writes (the update is conditional)."""
    with core.read() as conn:
        row = conn.execute(
            select(
                api_tokens.c.role,
                api_tokens.c.label,
                api_tokens.c.pools,
                api_tokens.c.last_used_at,
            ).where(api_tokens.c.token_hash == token_hash)
        ).first()
    if row is None:
        return None
    now = core.clock()
    due = now - USE_NOTED_EVERY
    if row.last_used_at is None or row.last_used_at <= due:
        with core.write_transaction() as conn:
            conn.execute(
                update(api_tokens)
                .where(
                    api_tokens.c.token_hash == token_hash,
                    or_(api_tokens.c.last_used_at.is_(None), api_tokens.c.last_used_at <= due),
                )
                .values(last_used_at=now)
            )
    return TokenHolder(row.role, row.label, None if row.pools is None else frozenset(_names(row)))


def _names(row: Any) -> tuple[str, ...]:
    return tuple(json.loads(row.pools))


_LISTED = (
    api_tokens.c.id,
    api_tokens.c.role,
    api_tokens.c.label,
    api_tokens.c.created_at,
    api_tokens.c.pools,
    api_tokens.c.last_used_at,
)


def _stored(row: Any) -> StoredToken:
    return StoredToken(
        row.id,
        row.role,
        row.label,
        row.created_at,
        None if row.pools is None else _names(row),
        row.last_used_at,
    )


def list_tokens(core: Core) -> list[StoredToken]:
    """The stored tokens (never the tokens themselves: only their hashes are kept)."""
    with core.read() as conn:
        rows = conn.execute(select(*_LISTED).order_by(api_tokens.c.id)).all()
    return [_stored(row) for row in rows]


def revoke_token(core: Core, token_id: int) -> StoredToken | None:
    """Delete a stored token; every worker refuses it within a second (their memory of a
    token lasts that long). None when there is no such token."""
    with core.write_transaction() as conn:
        row = conn.execute(select(*_LISTED).where(api_tokens.c.id == token_id)).first()
        if row is None:
            return None
        conn.execute(delete(api_tokens).where(api_tokens.c.id == token_id))
    return _stored(row)
