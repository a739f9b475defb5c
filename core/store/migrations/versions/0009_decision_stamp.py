"""section proposal decided_at / decided_via: when and through which door (app, cli) a
section was last decided, so a decision made on a stale view is refused with that
(existing proposals: NULL, decided before this was kept)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("decided_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )
        batch_op.add_column(
            sa.Column("decided_via", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.drop_column("decided_via")
        batch_op.drop_column("decided_at")
