"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "report",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=True),
        sa.Column("baseline_of", sa.Integer(), nullable=True),
        sa.Column("next_marker", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["baseline_of"],
            ["report.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("report", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_report_baseline_of"), ["baseline_of"], unique=False)

    op.create_table(
        "source",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("url"),
    )
    op.create_table(
        "reportversion",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("as_of", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("stale_citations", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["parent_id"],
            ["reportversion.id"],
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["report.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("report_id", "number"),
    )
    with op.batch_alter_table("reportversion", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reportversion_report_id"), ["report_id"], unique=False)

    op.create_table(
        "section",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("heading", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("order", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["reportversion.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("section", schema=None) as batch_op:
        batch_op.create_index("ix_section_version_order", ["version_id", "order"], unique=False)

    op.create_table(
        "updaterun",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("as_of", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("base_version_id", sa.Integer(), nullable=True),
        sa.Column("version_id", sa.Integer(), nullable=True),
        sa.Column("progress", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("timings", sa.JSON(), nullable=True),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["base_version_id"],
            ["reportversion.id"],
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["report.id"],
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["reportversion.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_updaterun_report_id"), ["report_id"], unique=False)

    op.create_table(
        "costevent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("stage", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("provider", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("llm_calls", sa.Integer(), nullable=False),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("searches", sa.Integer(), nullable=False),
        sa.Column("fetches", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("usd", sa.Float(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["updaterun.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_costevent_run_id"), ["run_id"], unique=False)

    op.create_table(
        "sectionproposal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("heading", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("order", sa.Integer(), nullable=False),
        sa.Column("old_text", sa.Text(), nullable=True),
        sa.Column("new_text", sa.Text(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("evidence", sa.JSON(), nullable=True),
        sa.Column("citations", sa.JSON(), nullable=True),
        sa.Column("decision", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("analyst_text", sa.Text(), nullable=True),
        sa.Column("flags", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["updaterun.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sectionproposal_run_id"), ["run_id"], unique=False)

    op.create_table(
        "snapshot",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("content", sa.Text(), nullable=True),
        sa.Column("content_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("fetched_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("as_of", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("published", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("previous_id", sa.Integer(), nullable=True),
        sa.Column("change_kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=True),
        sa.Column("claim_diff", sa.JSON(), nullable=True),
        sa.Column("reasons", sa.JSON(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["previous_id"],
            ["snapshot.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["updaterun.id"],
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["source.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("snapshot", schema=None) as batch_op:
        batch_op.create_index("ix_snapshot_source_asof", ["source_id", "as_of"], unique=False)

    op.create_table(
        "citation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("marker", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["section_id"],
            ["section.id"],
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshot.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("citation", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_citation_section_id"), ["section_id"], unique=False)

    op.create_table(
        "poolentry",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("marker", sa.Integer(), nullable=False),
        sa.Column("latest_snapshot_id", sa.Integer(), nullable=True),
        sa.Column("last_checked", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(
            ["latest_snapshot_id"],
            ["snapshot.id"],
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["report.id"],
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["source.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("report_id", "source_id"),
    )
    with op.batch_alter_table("poolentry", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_poolentry_report_id"), ["report_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("poolentry", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_poolentry_report_id"))

    op.drop_table("poolentry")
    with op.batch_alter_table("citation", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_citation_section_id"))

    op.drop_table("citation")
    with op.batch_alter_table("snapshot", schema=None) as batch_op:
        batch_op.drop_index("ix_snapshot_source_asof")

    op.drop_table("snapshot")
    with op.batch_alter_table("sectionproposal", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sectionproposal_run_id"))

    op.drop_table("sectionproposal")
    with op.batch_alter_table("costevent", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_costevent_run_id"))

    op.drop_table("costevent")
    with op.batch_alter_table("updaterun", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_updaterun_report_id"))

    op.drop_table("updaterun")
    with op.batch_alter_table("section", schema=None) as batch_op:
        batch_op.drop_index("ix_section_version_order")

    op.drop_table("section")
    with op.batch_alter_table("reportversion", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reportversion_report_id"))

    op.drop_table("reportversion")
    op.drop_table("source")
    with op.batch_alter_table("report", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_report_baseline_of"))

    op.drop_table("report")
