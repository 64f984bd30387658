"""round time: when a round was played, as its report says

Revision ID: 0012
Revises: 0011

The pages dated every round by when the service received it (`rounds.created_at`), so a
history of 20 days imported in a minute showed as one day. `rounds.played_at` is the
report's own time: its `ended_at`, else its `started_at`, never after it was received;
NULL when it gives neither, and the round is then dated by when it was received. The
upgrade fills it in from the stored reports that give a time, and adds it to
`ix_rounds_figures`, which the health page's rounds per day read. The downgrade drops both
with a plain `ALTER TABLE` (never a batch copy of `rounds`, whose drop would cascade to the
journal on SQLite).
"""

from collections.abc import Sequence
from datetime import datetime

import orjson
import sqlalchemy as sa
from alembic import op

from synelo.store.tables import UtcDateTime

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FIGURES = ["pool_id", "voided", "seq", "p_a", "winner", "sum_a", "sum_b", "created_at"]
BATCH = 1000  # rounds read and updated at a time

rounds = sa.table(
    "rounds",
    sa.column("id", sa.BigInteger()),
    sa.column("report", sa.Text()),
    sa.column("created_at", UtcDateTime()),
    sa.column("played_at", UtcDateTime()),
)


def upgrade() -> None:
    op.add_column("rounds", sa.Column("played_at", sa.DateTime(timezone=True), nullable=True))
    conn = op.get_bind()
    timed = sa.or_(rounds.c.report.like('%"ended_at"%'), rounds.c.report.like('%"started_at"%'))
    last = 0
    while True:
        found = conn.execute(
            sa.select(rounds.c.id, rounds.c.report, rounds.c.created_at)
            .where(rounds.c.id > last, timed)
            .order_by(rounds.c.id)
            .limit(BATCH)
        ).all()
        if not found:
            break
        last = found[-1].id
        dated = [
            {"pk": pk, "at": at}
            for pk, report, received in found
            if (at := _played_at(report, received)) is not None
        ]
        if dated:
            conn.execute(
                rounds.update()
                .where(rounds.c.id == sa.bindparam("pk"))
                .values(played_at=sa.bindparam("at")),
                dated,
            )
    op.drop_index("ix_rounds_figures", "rounds")
    op.create_index("ix_rounds_figures", "rounds", [*FIGURES, "played_at"])


def downgrade() -> None:
    op.drop_index("ix_rounds_figures", "rounds")
    op.create_index("ix_rounds_figures", "rounds", FIGURES)
    op.drop_column("rounds", "played_at")


def _played_at(report: str, received: datetime) -> datetime | None:
    """The report's `ended_at`, else its `started_at`, but not after `received` (None:
    neither)."""
    stored = orjson.loads(report)
    moment = stored.get("ended_at") or stored.get("started_at")
    return None if moment is None else min(datetime.fromisoformat(moment), received)
