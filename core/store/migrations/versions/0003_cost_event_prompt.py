"""cost event prompt (template@version of the model call)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "prompt", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=""
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.drop_column("prompt")
