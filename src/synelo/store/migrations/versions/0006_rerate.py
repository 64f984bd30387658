"""re-rating: journal generations, voided rounds, the admin change log and background jobs

Revision ID: 0006
Revises: 0005

A re-rate writes a pool's new journal rows beside the old ones, under the next
`generation`, and then swaps: `pools.generation` names the rows in force, the players'
chains point at them, and the old generation is deleted afterwards. `rounds.voided` marks a
round that an admin took out of the ratings (`pools.voided` counts them). `changes` is the
pool's admin log, in order: sets, resets, voids, unvoids and parameter changes, with who
made each and why; a re-rate replays its sets and resets at their place among the rounds.
`jobs` follows each background re-rate. `pools.autotune` is a pool's auto-tuning setting
(JSON; NULL: off).

The journal loses its foreign keys (to pools, players and rounds). It is an append-only log
that only the store writes, in transactions that hold the rows it refers to; a re-rate
writes millions of its rows, and on PostgreSQL the three per-row checks took 78 % of a
COPY's time (0.79 s of 50,000 rows against 0.17 s without). On SQLite the table is rebuilt
without them (the round writer skipped them already).

Rounds stored before reports were kept (0004) get one now, built from their participants
in the journal and marked `"rosters_known": false`, so that every round can be re-rated
(and voided) from the rounds table alone. The downgrade drops what this revision added and
leaves those reports in place (0004's readers read them).
"""

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column(
        "pools", sa.Column("generation", sa.BigInteger(), nullable=False, server_default="0")
    )
    op.add_column("pools", sa.Column("voided", sa.BigInteger(), nullable=False, server_default="0"))
    op.add_column("pools", sa.Column("autotune", sa.Text(), nullable=True))
    op.add_column(
        "rounds", sa.Column("voided", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "journal", sa.Column("generation", sa.BigInteger(), nullable=False, server_default="0")
    )
    _journal_references(False)
    op.create_table(
        "changes",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("pool_id", ID, sa.ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("player_key", sa.String(64), nullable=True),
        sa.Column("round_id", sa.String(128), nullable=True),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_changes_pool", "changes", ["pool_id", "seq", "id"])
    op.create_table(
        "jobs",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("pool_id", ID, sa.ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("total", sa.BigInteger(), nullable=False),
        sa.Column("done", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_jobs_pool", "jobs", ["pool_id", "status"])
    _backfill_reports()


_REFERENCES = (("player_id", "players"), ("pool_id", "pools"), ("round_pk", "rounds"))


def _journal_references(present: bool) -> None:
    """Drop (or restore) the journal's foreign keys: PostgreSQL drops and adds constraints;
    SQLite, which cannot, rebuilds the table (nothing refers to the journal)."""
    if op.get_bind().dialect.name != "sqlite":
        for column, table in _REFERENCES:
            name = f"journal_{column}_fkey"
            if present:
                op.create_foreign_key(name, "journal", table, [column], ["id"], ondelete="CASCADE")
            else:
                op.drop_constraint(name, "journal", type_="foreignkey")
        return
    columns: list[sa.Column[Any]] = [
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
        sa.Column("generation", sa.BigInteger(), nullable=False, server_default="0"),
    ]
    keys: list[sa.ForeignKeyConstraint] = [
        sa.ForeignKeyConstraint([column], [f"{table}.id"], ondelete="CASCADE")
        for column, table in _REFERENCES
        if present
    ]
    names = ", ".join(c.name for c in columns)
    op.create_table("journal_rebuilt", *columns, *keys, sa.PrimaryKeyConstraint("id"))
    op.execute(f"INSERT INTO journal_rebuilt ({names}) SELECT {names} FROM journal")
    op.drop_index("ix_journal_round", table_name="journal")
    op.drop_table("journal")
    op.rename_table("journal_rebuilt", "journal")
    op.create_index("ix_journal_round", "journal", ["round_pk"])


def _backfill_reports() -> None:
    """A report for every round stored without one: its participants as its rosters."""
    conn = op.get_bind()
    rounds = sa.table(
        "rounds",
        sa.column("id"),
        sa.column("round_id"),
        sa.column("server_id"),
        sa.column("map"),
        sa.column("winner"),
        sa.column("report"),
    )
    journal = sa.table(
        "journal", sa.column("id"), sa.column("round_pk"), sa.column("player_id"), sa.column("team")
    )
    players = sa.table("players", sa.column("id"), sa.column("player_key"))
    while True:
        batch = conn.execute(
            sa.select(
                rounds.c.id, rounds.c.round_id, rounds.c.server_id, rounds.c.map, rounds.c.winner
            )
            .where(rounds.c.report.is_(None))
            .order_by(rounds.c.id)
            .limit(1000)
        ).all()
        if not batch:
            return
        sides: dict[int, dict[str, list[str]]] = {row.id: {"A": [], "B": []} for row in batch}
        rows = conn.execute(
            sa.select(journal.c.round_pk, journal.c.team, players.c.player_key)
            .select_from(journal.join(players, players.c.id == journal.c.player_id))
            .where(journal.c.round_pk.in_(list(sides)))
            .order_by(journal.c.id)
        )
        for pk, team, key in rows:
            sides[pk][team].append(key)
        for row in batch:
            teams = sides[row.id]
            report = {
                "round_id": row.round_id,
                "server_id": row.server_id,
                "map": row.map,
                "winner": row.winner,
                "teams": teams,
                "participants": teams,
                "rosters_known": False,
            }
            conn.execute(
                sa.update(rounds)
                .where(rounds.c.id == row.id)
                .values(report=orjson.dumps(report).decode())
            )


def downgrade() -> None:
    # only the journal generation in force survives: 0005 reads every row of a round
    op.execute(
        "DELETE FROM journal WHERE generation <> "
        "(SELECT pools.generation FROM pools WHERE pools.id = journal.pool_id)"
    )
    op.drop_index("ix_jobs_pool", table_name="jobs")
    op.drop_table("jobs")
    op.drop_index("ix_changes_pool", table_name="changes")
    op.drop_table("changes")
    _journal_references(True)
    # plain DROP COLUMN, never a batch copy (see 0004)
    op.drop_column("journal", "generation")
    op.drop_column("rounds", "voided")
    op.drop_column("pools", "autotune")
    op.drop_column("pools", "voided")
    op.drop_column("pools", "generation")
