"""token last used: when each stored token was last used, to the minute

Revision ID: 0013
Revises: 0012

`api_tokens.last_used_at` is when the token was last used (`synelo token list` shows it),
written at most once a minute a token (`store.tokens.use_token`), so that a lookup stays a
read. NULL: not used since it was made, or since this migration. The downgrade drops the
column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "api_tokens", sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("api_tokens", "last_used_at")
