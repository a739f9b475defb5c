"""Schema migrations and the immutability of committed versions."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from core.dates import parse_as_of
from core.db import get_engine, session_scope
from core.errors import EvergreenError
from core.models import Report, ReportVersion


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
