"""job process: the process that runs a re-rate job, to see at once that it died

Revision ID: 0011
Revises: 0010

`jobs.process` names the process running a job (`store.jobs.ProcessId`: its host, its
machine's boot and namespaces, its pid and start time). A running job whose process on
this machine is gone is dead at once; one of another machine, or of a row written before
0011 (NULL), is dead after `STALE_AFTER` without a heartbeat, as before. The downgrade
drops the column with a plain `ALTER TABLE`: running jobs go back to the heartbeat alone.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("process", sa.String(200), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "process")
