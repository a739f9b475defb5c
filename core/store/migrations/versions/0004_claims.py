"""claims: every cited sentence anchored to its passages; proposals carry claim checks;
snapshots keep their source's metadata

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "claim",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("sentence", sa.Text(), nullable=False),
        sa.Column("marker", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=True),
        sa.Column("selectors", sa.JSON(), nullable=True),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["section_id"], ["section.id"]),
        sa.ForeignKeyConstraint(["snapshot_id"], ["snapshot.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_claim_section", "claim", ["section_id", "position"], unique=False)
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claims", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("quotes", sa.JSON(), nullable=True))
    with op.batch_alter_table("snapshot", schema=None) as batch_op:
        batch_op.add_column(sa.Column("meta", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshot", schema=None) as batch_op:
        batch_op.drop_column("meta")
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.drop_column("quotes")
        batch_op.drop_column("claims")
    op.drop_index("ix_claim_section", table_name="claim")
    op.drop_table("claim")
