"""job cancelled: room in `jobs.status` for "cancelled"

Revision ID: 0014
Revises: 0013

An admin can cancel a running advise job (`store.jobs.cancel_job`); its row then reads
"cancelled", one letter more than `jobs.status`'s 8 held. The column is widened to 16.
On SQLite that is a batch copy of `jobs` (no table refers to it, so the copy drops
nothing else). The downgrade turns every cancelled job into a failed one that says it
was cancelled, then narrows the column back.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column(
            "status", existing_type=sa.String(8), type_=sa.String(16), existing_nullable=False
        )


def downgrade() -> None:
    op.execute(
        "UPDATE jobs SET status = 'failed', error = COALESCE(error, 'cancelled')"
        " WHERE status = 'cancelled'"
    )
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column(
            "status", existing_type=sa.String(16), type_=sa.String(8), existing_nullable=False
        )
