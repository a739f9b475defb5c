"""state vocabularies: every state column accepts only its vocabulary (core.states)

Existing rows keep their values: a StrEnum member is its string, so nothing is rewritten.
The upgrade first checks that every stored value belongs to its vocabulary and stops with
one line naming the column and the values if one does not (nothing is changed then).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from core.errors import EvergreenError

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The vocabularies as they stand at this revision (a later value needs its own migration).
CHANGE_KINDS = ("new", "unchanged", "minor", "material", "changed", "gone", "imported")
VOCABULARIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("updaterun", "status"): (
        "running",
        "cancelling",
        "interrupted",
        "awaiting_review",
        "committed",
        "failed",
        "cancelled",
    ),
    ("updaterun", "kind"): ("create", "update", "rebuild", "import"),
    ("sectionproposal", "action"): ("keep", "revise", "extend", "add", "remove"),
    ("sectionproposal", "decision"): ("pending", "approved", "rejected"),
    ("snapshot", "change_kind"): CHANGE_KINDS,
    ("poolentry", "status"): (*CHANGE_KINDS, "error"),
    ("section", "status"): ("new", "kept", "revised", "extended", "added"),
    ("claim", "state"): ("supported", "unsupported", "unresolved", "stale"),
    ("sourcecheck", "outcome"): ("fetched", "not_modified", "gone", "error"),
}
OPEN = "status IN ('running', 'cancelling', 'interrupted', 'awaiting_review')"


def _listed(values: Sequence[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _check_existing_rows() -> None:
    conn = op.get_bind()
    for (table, column), values in VOCABULARIES.items():
        stray = conn.execute(
            sa.text(
                f"SELECT DISTINCT {column} FROM {table} "
                f"WHERE {column} IS NOT NULL AND {column} NOT IN ({_listed(values)})"
            )
        ).scalars()
        found = sorted(str(v) for v in stray)
        if found:
            raise EvergreenError(
                f"{table}.{column} holds values Evergreen does not know: {', '.join(found)}; "
                f"expected one of {', '.join(values)}. Nothing was changed."
            )


def upgrade() -> None:
    _check_existing_rows()
    tables: dict[str, list[str]] = {}
    for table, column in VOCABULARIES:
        tables.setdefault(table, []).append(column)
    for table, columns in tables.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            if table == "updaterun":  # SQLite rebuilds the table: keep its partial index
                batch_op.drop_index("ux_updaterun_one_open_per_report")
            for column in columns:
                batch_op.create_check_constraint(
                    f"ck_{table}_{column}", f"{column} IN ({_listed(VOCABULARIES[table, column])})"
                )
            if table == "updaterun":
                batch_op.create_index(
                    "ux_updaterun_one_open_per_report",
                    ["report_id"],
                    unique=True,
                    sqlite_where=sa.text(OPEN),
                    postgresql_where=sa.text(OPEN),
                )


def downgrade() -> None:
    tables: dict[str, list[str]] = {}
    for table, column in VOCABULARIES:
        tables.setdefault(table, []).append(column)
    for table, columns in tables.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            if table == "updaterun":
                batch_op.drop_index("ux_updaterun_one_open_per_report")
            for column in columns:
                batch_op.drop_constraint(f"ck_{table}_{column}", type_="check")
            if table == "updaterun":
                batch_op.create_index(
                    "ux_updaterun_one_open_per_report",
                    ["report_id"],
                    unique=True,
                    sqlite_where=sa.text(OPEN),
                    postgresql_where=sa.text(OPEN),
                )
