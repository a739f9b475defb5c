"""report archived_at: an archived report is hidden from the list and skipped by the
schedule (existing reports stay active: NULL)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("report", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("archived_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("report", schema=None) as batch_op:
        batch_op.drop_column("archived_at")
