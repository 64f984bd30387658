"""the window's unfilled newest chunk is read from the journal, not rewritten in the row

Revision ID: 0003
Revises: 0002

A rated round rewrote each player's window header and unfilled newest chunk (~450 bytes a
row); now it writes only `window_appended`, the number of entries since the window
(re)started, and the newest entries are the player's newest journal rows. Rows keep their old
columns until they are next rated (the service reads both kinds), so the upgrade only adds
the column. The downgrade writes the header and tail back for rows rated since.
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from synelo.store import window_codec as codec

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 50  # synelo.store.tables.WINDOW_CHUNK when this revision was written
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

pools = sa.table("pools", sa.column("id", ID), sa.column("params", sa.Text()))
players = sa.table(
    "players",
    sa.column("id", ID),
    sa.column("pool_id", ID),
    sa.column("window_state", sa.LargeBinary()),
    sa.column("window_tail", sa.LargeBinary()),
    sa.column("window_appended", sa.BigInteger()),
    sa.column("last_journal", sa.BigInteger()),
)
chunks = sa.table(
    "window_chunks",
    sa.column("player_id", ID),
    sa.column("chunk", sa.BigInteger()),
    sa.column("data", sa.LargeBinary()),
)
journal = sa.table(
    "journal",
    sa.column("id", sa.BigInteger()),
    sa.column("after", sa.Integer()),
    sa.column("p", sa.Float()),
    sa.column("s", sa.Float()),
    sa.column("prev_id", sa.BigInteger()),
)


def upgrade() -> None:
    op.add_column("players", sa.Column("window_appended", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    conn = op.get_bind()
    sizes = {
        pid: json.loads(params).get("window", 500)
        for pid, params in conn.execute(sa.select(pools.c.id, pools.c.params))
    }
    rows = conn.execute(
        sa.select(
            players.c.id, players.c.pool_id, players.c.window_appended, players.c.last_journal
        ).where(players.c.window_appended.is_not(None))
    ).all()
    for pid, pool_id, appended, last in rows:
        stored: dict[int, bytes] = {
            number: data
            for number, data in conn.execute(
                sa.select(chunks.c.chunk, chunks.c.data).where(chunks.c.player_id == pid)
            )
        }
        tail: list[tuple[int, float, float]] = []
        at = last
        for _ in range(appended % CHUNK):
            after, p, s, at = conn.execute(
                sa.select(journal.c.after, journal.c.p, journal.c.s, journal.c.prev_id).where(
                    journal.c.id == at
                )
            ).one()
            tail.append((after, p, s))
        win = codec.from_chunks_and_tail(stored, tail[::-1], appended, CHUNK, sizes[pool_id])
        newest = codec.chunk_of_newest(win, CHUNK)
        conn.execute(
            players.update()
            .where(players.c.id == pid)
            .values(
                window_state=codec.header_bytes(win) if appended else None,
                window_tail=codec.chunk_bytes(win, newest, CHUNK) if appended % CHUNK else None,
            )
        )
    # a plain DROP COLUMN (SQLite ≥ 3.35): a batch table copy would drop `players`, and with
    # it, by ON DELETE CASCADE, every window chunk
    op.drop_column("players", "window_appended")
