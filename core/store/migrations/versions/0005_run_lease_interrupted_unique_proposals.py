"""run lease (take-overs fence the previous worker), interrupted runs hold their report,
one proposal per section and run

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_OPEN = "status IN ('running', 'cancelling', 'awaiting_review')"
OPEN = "status IN ('running', 'cancelling', 'interrupted', 'awaiting_review')"


def upgrade() -> None:
    # Two workers on one run could propose a section twice: keep the first of each.
    op.execute(
        sa.text(
            "DELETE FROM sectionproposal WHERE id NOT IN "
            "(SELECT MIN(id) FROM sectionproposal GROUP BY run_id, key)"
        )
    )
    op.create_index("ux_sectionproposal_run_key", "sectionproposal", ["run_id", "key"], unique=True)
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease", sa.Integer(), nullable=False, server_default="0"))
        batch_op.drop_index("ux_updaterun_one_open_per_report")
        batch_op.create_index(
            "ux_updaterun_one_open_per_report",
            ["report_id"],
            unique=True,
            sqlite_where=sa.text(OPEN),
            postgresql_where=sa.text(OPEN),
        )


def downgrade() -> None:
    # An interrupted run is not open before 0005: close it so the old index holds.
    op.execute(
        sa.text(
            "UPDATE updaterun SET status = 'failed', "
            "error = 'interrupted; closed by downgrade from 0005' WHERE status = 'interrupted'"
        )
    )
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.drop_index("ux_updaterun_one_open_per_report")
        batch_op.create_index(
            "ux_updaterun_one_open_per_report",
            ["report_id"],
            unique=True,
            sqlite_where=sa.text(OLD_OPEN),
            postgresql_where=sa.text(OLD_OPEN),
        )
        batch_op.drop_column("lease")
    op.drop_index("ux_sectionproposal_run_key", table_name="sectionproposal")
