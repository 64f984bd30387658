"""The pages' admin sessions: opened with an admin token, found again by their cookie, ended
by a logout or by time.

Only digests are kept: the cookie's SHA-256 (a stolen database opens no session) and the
SHA-256 of the token the session was opened with, which the web layer checks on every use,
so that revoking that token ends its sessions on every worker at once.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, insert, select

from synelo.store.repository import Store
from synelo.store.tables import sessions


@dataclass(frozen=True, slots=True)
class AdminSession:
    """A logged-in admin: who (as the change log names them), the form token every form of
    theirs carries, and the digest of the token they logged in with."""

    actor: str
    csrf: str
    token_hash: str


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class SessionStore:
    """Every read and write of a session (see the module)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def open(self, token_hash: str, actor: str, lifetime: timedelta) -> tuple[str, AdminSession]:
        """A new session: the cookie value (returned once, never stored) and the session.
        Sessions that have expired are deleted on the way."""
        cookie = secrets.token_urlsafe(32)
        session = AdminSession(actor, secrets.token_urlsafe(32), token_hash)
        now = self.store.clock()
        with self.store.write_transaction() as conn:
            conn.execute(delete(sessions).where(sessions.c.expires_at < now))
            conn.execute(
                insert(sessions).values(
                    session_hash=_digest(cookie),
                    csrf=session.csrf,
                    actor=actor,
                    token_hash=token_hash,
                    created_at=now,
                    expires_at=now + lifetime,
                )
            )
        return cookie, session

    def find(self, cookie: str) -> AdminSession | None:
        """The session of a cookie, if it has not ended (logged out or expired)."""
        with self.store.read() as conn:
            row = conn.execute(
                select(
                    sessions.c.actor, sessions.c.csrf, sessions.c.token_hash, sessions.c.expires_at
                ).where(sessions.c.session_hash == _digest(cookie))
            ).first()
        if row is None or row.expires_at <= self.store.clock():
            return None
        return AdminSession(row.actor, row.csrf, row.token_hash)

    def close(self, cookie: str) -> None:
        """End a session (a logout): its cookie opens nothing any more."""
        with self.store.write_transaction() as conn:
            conn.execute(delete(sessions).where(sessions.c.session_hash == _digest(cookie)))
