"""shared source checks: one look at a source serves every report citing it; cost events
count 304s and checks served from the pool (existing events: 0)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sourcecheck",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("provider", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("as_of", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("checked_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=True),
        sa.Column("etag", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("last_modified", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["source_id"], ["source.id"]),
        sa.ForeignKeyConstraint(["snapshot_id"], ["snapshot.id"]),
        sa.ForeignKeyConstraint(["run_id"], ["updaterun.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_sourcecheck_source", "sourcecheck", ["source_id", "provider", "checked_at"])
    op.create_table(
        "checkuse",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("used_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["check_id"], ["sourcecheck.id"]),
        sa.ForeignKeyConstraint(["report_id"], ["report.id"]),
        sa.ForeignKeyConstraint(["run_id"], ["updaterun.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_checkuse_check_id"), "checkuse", ["check_id"], unique=False)
    op.create_index(op.f("ix_checkuse_report_id"), "checkuse", ["report_id"], unique=False)
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("not_modified", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("shared_checks", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.drop_column("shared_checks")
        batch_op.drop_column("not_modified")
    op.drop_index(op.f("ix_checkuse_report_id"), table_name="checkuse")
    op.drop_index(op.f("ix_checkuse_check_id"), table_name="checkuse")
    op.drop_table("checkuse")
    op.drop_index("ix_sourcecheck_source", table_name="sourcecheck")
    op.drop_table("sourcecheck")
