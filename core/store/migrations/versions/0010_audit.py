"""audit: who decided, edited, committed, archived, deleted or changed the settings of a
report, and when (auditevent, appended only); a proposal's decided_by and a version's
committed_by (existing rows: NULL, made before this was kept)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-08
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "auditevent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("actor", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("via", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_auditevent_report_id", "auditevent", ["report_id"])
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("decided_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )
    with op.batch_alter_table("reportversion", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("committed_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("reportversion", schema=None) as batch_op:
        batch_op.drop_column("committed_by")
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.drop_column("decided_by")
    op.drop_index("ix_auditevent_report_id", table_name="auditevent")
    op.drop_table("auditevent")
