"""pools choose their rating model; players keep that model's state and a display name

Revision ID: 0005
Revises: 0004

`pools.model` names the pool's rating model (`synelo.models`); every existing pool is a
SynElo pool. `players.state` keeps a player's state in a model other than SynElo, as the
model encodes it (JSON); SynElo keeps its state in the window columns as before, and NULL
here. `players.name` is the player's display name, the latest reported (never their id).
The downgrade drops the three columns (only SynElo pools can then be read).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "pools", sa.Column("model", sa.String(32), nullable=False, server_default="synelo")
    )
    op.add_column("players", sa.Column("state", sa.Text(), nullable=True))
    op.add_column("players", sa.Column("name", sa.String(64), nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN, never a batch copy (see 0004): a copy of `players`
    # would cascade-delete the journal on SQLite.
    op.drop_column("players", "name")
    op.drop_column("players", "state")
    op.drop_column("pools", "model")
