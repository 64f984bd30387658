"""convergence windows stored as a header plus chunks of entries

Revision ID: 0002
Revises: 0001

A rated round used to rewrite each player's whole window (~6.7 KB); now it rewrites a small
header in players.window_state and the unfilled newest chunk in players.window_tail, and full
chunks of entries live in window_chunks. Existing windows are converted, and converted back
on downgrade.
"""

import struct
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from synelo.store import window_codec as codec

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 50  # synelo.store.tables.WINDOW_CHUNK when this revision was written
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

players = sa.table(
    "players",
    sa.column("id", ID),
    sa.column("window_state", sa.LargeBinary()),
    sa.column("window_tail", sa.LargeBinary()),
)
chunks = sa.table(
    "window_chunks",
    sa.column("player_id", ID),
    sa.column("chunk", sa.BigInteger()),
    sa.column("data", sa.LargeBinary()),
)


def upgrade() -> None:
    op.add_column("players", sa.Column("window_tail", sa.LargeBinary(), nullable=True))
    op.create_table(
        "window_chunks",
        sa.Column("player_id", ID, nullable=False),
        sa.Column("chunk", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("player_id", "chunk"),
    )
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(players.c.id, players.c.window_state).where(players.c.window_state.is_not(None))
    ).all()
    for pid, blob in rows:
        win = codec.from_bytes(blob, _size(blob))
        newest = codec.chunk_of_newest(win, CHUNK)
        numbers = range(codec.oldest_chunk(win, CHUNK), newest + 1) if len(win) else []
        tail = None
        parts = []
        for n in numbers:
            data = codec.chunk_bytes(win, n, CHUNK)
            if n == newest and win.appended % CHUNK:
                tail = data  # the unfilled newest chunk stays in the player's row
            else:
                parts.append({"player_id": pid, "chunk": n, "data": data})
        if parts:
            conn.execute(chunks.insert(), parts)
        conn.execute(
            players.update()
            .where(players.c.id == pid)
            .values(window_state=codec.header_bytes(win), window_tail=tail)
        )


def downgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(players.c.id, players.c.window_state, players.c.window_tail).where(
            players.c.window_state.is_not(None)
        )
    ).all()
    for pid, header, tail in rows:
        stored: dict[int, bytes] = {
            number: data
            for number, data in conn.execute(
                sa.select(chunks.c.chunk, chunks.c.data).where(chunks.c.player_id == pid)
            )
        }
        if tail:
            stored[codec.chunk_number(tail, CHUNK)] = tail
        win = codec.from_parts(header, stored, CHUNK, _size(header))
        conn.execute(
            players.update().where(players.c.id == pid).values(window_state=codec.to_bytes(win))
        )
    op.drop_table("window_chunks")
    # a plain DROP COLUMN (SQLite >= 3.35): a batch table copy would drop `players`, and with
    # it, by ON DELETE CASCADE, the whole journal
    op.drop_column("players", "window_tail")


def _size(blob: bytes) -> int:
    """The window size a stored window was made with (both formats start version, size)."""
    size: int = struct.unpack_from("<HH", blob)[1]
    return size
