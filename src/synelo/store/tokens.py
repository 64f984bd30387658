"""The API's tokens: stored as their SHA-256 only, each with its role and a label; added,
listed, found by a presented token, and revoked."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import delete, insert, select

from synelo.store.core import Core
from synelo.store.tables import api_tokens


def hash_token(token: str) -> str:
    """The digest a token is stored and found by."""
    return hashlib.sha256(token.encode()).hexdigest()


class StoredToken(NamedTuple):
    """A stored token as `synelo token list` shows it."""

    id: int
    role: str
    label: str
    created_at: datetime


def add_token(core: Core, role: str, token: str, label: str) -> None:
    """Store a token (its digest only) with its role and label."""
    with core.write_transaction() as conn:
        conn.execute(
            insert(api_tokens).values(
                role=role, token_hash=hash_token(token), label=label, created_at=core.clock()
            )
        )


def token_identity(core: Core, token: str) -> tuple[str, str] | None:
    """(role, label) of a stored token; None for an unknown one."""
    return token_holder(core, hash_token(token))


def token_holder(core: Core, token_hash: str) -> tuple[str, str] | None:
    """(role, label) of the stored token with this SHA-256; None for an unknown one."""
    with core.read() as conn:
        row = conn.execute(
            select(api_tokens.c.role, api_tokens.c.label).where(
                api_tokens.c.token_hash == token_hash
            )
        ).first()
    return None if row is None else (row.role, row.label)


def list_tokens(core: Core) -> list[StoredToken]:
    """The stored tokens (never the tokens themselves: only their hashes are kept)."""
    with core.read() as conn:
        rows = conn.execute(
            select(
                api_tokens.c.id, api_tokens.c.role, api_tokens.c.label, api_tokens.c.created_at
            ).order_by(api_tokens.c.id)
        ).all()
    return [StoredToken(*row) for row in rows]


def revoke_token(core: Core, token_id: int) -> StoredToken | None:
    """Delete a stored token; every worker refuses it within a second (their memory of a
    token lasts that long). None when there is no such token."""
    with core.write_transaction() as conn:
        row = conn.execute(
            select(
                api_tokens.c.id, api_tokens.c.role, api_tokens.c.label, api_tokens.c.created_at
            ).where(api_tokens.c.id == token_id)
        ).first()
        if row is None:
            return None
        conn.execute(delete(api_tokens).where(api_tokens.c.id == token_id))
    return StoredToken(*row)
