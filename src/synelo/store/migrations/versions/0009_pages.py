"""pages: the admin logins, and an index for the pool health figures

Revision ID: 0009
Revises: 0008

An admin logs in to the pages with an admin token and gets a session cookie. The database
keeps only the cookie's SHA-256, the form token (CSRF) of the session, who logged in and the
SHA-256 of the token used, so that a session ends when its token is revoked, on every
worker, and a logout ends it for good.

The pool health page and the quality endpoint aggregate every round of a pool: the index
`ix_rounds_figures` holds each round's figures they read (a few dozen bytes), so that they
scan it instead of the round rows, which carry the stored report and answer (kilobytes).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FIGURES = ["pool_id", "voided", "seq", "p_a", "winner", "sum_a", "sum_b", "created_at"]


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("session_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_sessions_expires", "sessions", ["expires_at"])
    op.create_index("ix_rounds_figures", "rounds", FIGURES)


def downgrade() -> None:
    op.drop_index("ix_rounds_figures", "rounds")
    op.drop_index("ix_sessions_expires", "sessions")
    op.drop_table("sessions")
