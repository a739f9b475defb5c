"""run heartbeat and one open run per report

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = "status IN ('running', 'cancelling', 'awaiting_review')"


def upgrade() -> None:
    # A database from before this rule may hold several open runs of one report: keep the
    # newest open, close the others (with a reason) so the unique index can be built.
    op.execute(
        sa.text(
            "UPDATE updaterun SET status = 'failed', "
            "error = 'closed by upgrade 0002: a newer run of this report was open' "
            f"WHERE {OPEN} AND id NOT IN "
            f"(SELECT MAX(id) FROM updaterun WHERE {OPEN} GROUP BY report_id)"
        )
    )
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("heartbeat_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )
        batch_op.add_column(sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_index(
            "ux_updaterun_one_open_per_report",
            ["report_id"],
            unique=True,
            sqlite_where=sa.text(OPEN),
            postgresql_where=sa.text(OPEN),
        )


def downgrade() -> None:
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.drop_index("ux_updaterun_one_open_per_report")
        batch_op.drop_column("worker")
        batch_op.drop_column("heartbeat_at")
