"""pool context: what a pool's model learns beside its players

Revision ID: 0007
Revises: 0006

A model may keep pool-level figures, read and written by the rounds that concern them: the
Hive model's reference side, its recent round lengths and its side win rates per context
bucket (`Model.context_keys`). One row per entry, so that a round touches only its own
buckets; the rows follow their pool by ON DELETE CASCADE.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "pool_context",
        sa.Column(
            "pool_id",
            ID,
            sa.ForeignKey("pools.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("entry", sa.Text(), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pool_context")
