"""visibility: public pools and hidden players

Revision ID: 0008
Revises: 0007

A pool's public read endpoints answer anyone only when the pool is public (`pools.public`,
false: every pool that existed before stays private). An admin may hide a player from
every public list (`players.hidden`), whatever their rating.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "pools", sa.Column("public", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "players", sa.Column("hidden", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    # plain DROP COLUMNs (SQLite ≥ 3.35), as the earlier migrations: a batch table copy of
    # `players` or `pools` would trip the foreign keys that point at them
    op.drop_column("players", "hidden")
    op.drop_column("pools", "public")
