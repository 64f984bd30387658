"""token scopes: server tokens valid for some pools only

Revision ID: 0010
Revises: 0009

`api_tokens.pools` is the JSON list of the pool names a stored token may use (`synelo token
create --role server --pool NAME`), or NULL for every pool: every token made before keeps
working for every pool, as tokens given in the environment do.

A downgrade deletes the scoped tokens rather than keep them without their scope, in which
they would be valid for every pool.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("pools", sa.Text(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM api_tokens WHERE pools IS NOT NULL")
    op.drop_column("api_tokens", "pools")
