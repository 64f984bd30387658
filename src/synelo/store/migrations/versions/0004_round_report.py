"""rounds keep the report as it was sent, every field, as the source of truth

Revision ID: 0004
Revises: 0003

`rounds.report` holds the whole report (rosters at round start, participants, winner, map,
server and every optional field) as JSON, so that any model can rate a pool from its rounds.
Rounds stored before this revision have no report (NULL): only their participants are known,
and a reader uses them as the rosters and says so. The downgrade drops the column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("rounds", sa.Column("report", sa.Text(), nullable=True))


def downgrade() -> None:
    # A plain ALTER TABLE … DROP COLUMN (SQLite 3.35+), never a batch copy of the table: on
    # SQLite that drops the old `rounds`, and the journal's ON DELETE CASCADE with it.
    op.drop_column("rounds", "report")
