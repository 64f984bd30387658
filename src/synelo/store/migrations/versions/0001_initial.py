"""initial schema

Revision ID: 0001
Revises:

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# BIGINT keys, INTEGER on SQLite so that they alias the rowid.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "api_tokens",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "pools",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kmax", sa.Integer(), nullable=False),
        sa.Column("player_ids", sa.String(length=8), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("rounds", sa.BigInteger(), nullable=False),
        sa.Column("brier_sum", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "players",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("pool_id", ID, nullable=False),
        sa.Column("player_key", sa.String(length=64), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("rounds_played", sa.Integer(), nullable=False),
        sa.Column("last_played", sa.DateTime(timezone=True), nullable=True),
        sa.Column("convergence", sa.Float(), nullable=False),
        sa.Column("window_state", sa.LargeBinary(), nullable=True),
        sa.Column("last_journal", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pool_id", "player_key", name="uq_players_pool_key"),
    )
    op.create_table(
        "rounds",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("pool_id", ID, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("round_id", sa.String(length=128), nullable=False),
        sa.Column("server_id", sa.String(length=128), nullable=False),
        sa.Column("map", sa.String(length=128), nullable=False),
        sa.Column("winner", sa.String(length=4), nullable=False),
        sa.Column("sum_a", sa.Integer(), nullable=False),
        sa.Column("sum_b", sa.Integer(), nullable=False),
        sa.Column("p_a", sa.Float(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pool_id", "round_id", name="uq_rounds_pool_round_id"),
        sa.UniqueConstraint("pool_id", "seq", name="uq_rounds_pool_seq"),
    )
    op.create_table(
        "journal",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("pool_id", ID, nullable=False),
        sa.Column("player_id", ID, nullable=False),
        sa.Column("round_pk", ID, nullable=True),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("team", sa.String(length=1), nullable=True),
        sa.Column("before", sa.Integer(), nullable=False),
        sa.Column("after", sa.Integer(), nullable=False),
        sa.Column("k", sa.Float(), nullable=True),
        sa.Column("p", sa.Float(), nullable=True),
        sa.Column("s", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_id", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["round_pk"], ["rounds.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.create_index("ix_journal_round", ["round_pk"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.drop_index("ix_journal_round")

    op.drop_table("journal")
    op.drop_table("rounds")
    op.drop_table("players")
    op.drop_table("pools")
    op.drop_table("api_tokens")
