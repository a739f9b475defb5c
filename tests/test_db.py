"""Schema migrations and the immutability of committed versions."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from core.dates import parse_as_of
from core.errors import EvergreenError
from core.store.db import get_engine, session_scope
from core.store.models import Report, ReportVersion


def test_migrations_match_models(workspace: Path) -> None:
    engine = get_engine()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    assert diff == []  # a model change without a migration fails here


def test_plain_path_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVERGREEN_DB", str(tmp_path / "x.db"))
    with session_scope() as s:
        s.add(Report(title="t", query="q"))
    assert (tmp_path / "x.db").exists()


def test_committed_version_is_immutable(workspace: Path) -> None:
    with session_scope() as s:
        report = Report(title="t", query="q")
        s.add(report)
        s.flush()
        s.add(
            ReportVersion(report_id=report.id, number=1, as_of=parse_as_of("2024-01-01"), title="t")
        )
    with pytest.raises(EvergreenError, match="cannot change"), session_scope() as s:
        version = s.get(ReportVersion, 1)
        version.title = "rewritten"
        s.flush()
    with session_scope() as s:
        assert s.get(ReportVersion, 1).title == "t"


def test_upgrade_closes_duplicate_open_runs(tmp_path: Path) -> None:
    """A 0001 database with two open runs of one report upgrades cleanly."""
    import sqlalchemy as sa
    from alembic import command

    from core.store.db import alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0001")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO report (id, title, query, source, settings, next_marker, created_at) "
                "VALUES (1, 't', 'q', 'sample', '{}', 1, '2024-01-01 00:00:00')"
            )
        )
        for run_id in (1, 2):
            conn.execute(
                sa.text(
                    "INSERT INTO updaterun (id, report_id, kind, as_of, status, progress, summary, "
                    "timings, started_at) VALUES (:i, 1, 'update', '2024-01-01 00:00:00', "
                    "'running', '', '{}', '{}', '2024-01-01 00:00:00')"
                ),
                {"i": run_id},
            )
    command.upgrade(alembic_config(url), "head")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, status FROM updaterun ORDER BY id")).all()
    assert rows == [(1, "failed"), (2, "running")]


def test_the_migration_files_name_the_head_alembic_names() -> None:
    from alembic.script import ScriptDirectory

    from core.store.db import alembic_config, migration_head

    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert migration_head() == head


def test_an_up_to_date_database_opens_without_alembic(tmp_path: Path) -> None:
    """Every command opens the database: one at the newest schema is checked by its
    ``alembic_version`` row, and alembic is loaded only for a database to migrate."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'e.db'}"
    probe = (
        "import sys; from core.store.db import get_engine; get_engine({url!r}); "
        "print('alembic' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe.format(url=url)],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for _ in range(2)
    ]
    assert runs == ["True", "False"]  # made and migrated; then only opened
