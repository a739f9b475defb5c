"""State vocabularies: StrEnums in code, the same plain text in the database, nothing else
accepted, and existing workspaces upgrade with their rows as they were."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from sqlmodel import Session, select

from core.errors import EvergreenError
from core.states import (
    Action,
    ChangeKind,
    CheckOutcome,
    ClaimState,
    Decision,
    RunKind,
    RunStatus,
    SectionStatus,
)
from core.store.db import alembic_config, get_engine, migration_head, session_scope
from core.store.models import (
    Citation,
    Claim,
    CostEvent,
    PoolEntry,
    Report,
    ReportVersion,
    Section,
    SectionProposal,
    Snapshot,
    Source,
    SourceCheck,
    UpdateRun,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _fill(session: Session) -> None:
    """One row in every table with a state column, the rows other rows point at included."""
    report = Report(title="t", query="q")
    session.add(report)
    session.flush()
    run = UpdateRun(report_id=report.id, kind=RunKind.UPDATE, as_of=T0, status="committed")
    source = Source(url="https://example.org/a")
    session.add_all([run, source])
    session.flush()
    version = ReportVersion(report_id=report.id, number=1, as_of=T0, title="t", run_id=run.id)
    snap = Snapshot(source_id=source.id, content="A is B.", change_kind="material", run_id=run.id)
    session.add_all([version, snap])
    session.flush()
    section = Section(
        version_id=version.id,
        key="s",
        heading="S",
        level=2,
        order=0,
        body="A is B [1].",
        status="revised",
    )
    session.add(section)
    session.flush()
    session.add_all(
        [
            Citation(section_id=section.id, snapshot_id=snap.id, marker=1),
            Claim(
                section_id=section.id,
                position=0,
                sentence="A is B [1].",
                marker=1,
                snapshot_id=snap.id,
                state="stale",
            ),
            PoolEntry(report_id=report.id, source_id=source.id, marker=1, status="error"),
            SourceCheck(
                source_id=source.id,
                provider="corpus:x",
                outcome="not_modified",
                snapshot_id=snap.id,
                run_id=run.id,
            ),
            SectionProposal(
                run_id=run.id,
                key="s",
                action="revise",
                heading="S",
                level=2,
                order=0,
                decision="rejected",
            ),
            CostEvent(run_id=run.id, stage="refresh", fetches=1),
        ]
    )


def _states(session: Session) -> dict[str, object]:
    run = session.exec(select(UpdateRun)).one()
    proposal = session.exec(select(SectionProposal)).one()
    return {
        "run": (run.status, run.kind),
        "proposal": (proposal.action, proposal.decision),
        "snapshot": session.exec(select(Snapshot)).one().change_kind,
        "pool": session.exec(select(PoolEntry)).one().status,
        "section": session.exec(select(Section)).one().status,
        "claim": session.exec(select(Claim)).one().state,
        "check": session.exec(select(SourceCheck)).one().outcome,
    }


def _filled_at(url: str, revision: str) -> sa.Engine:
    """A database at schema ``revision`` holding ``_fill``'s rows: filled at head (the
    models are today's), then downgraded, as a workspace of that time would hold them."""
    cfg = alembic_config(url)
    command.upgrade(cfg, "head")
    engine = sa.create_engine(url)
    with Session(engine) as s:
        _fill(s)
        s.commit()
    command.downgrade(cfg, revision)
    return engine


EXPECTED = {
    "run": (RunStatus.COMMITTED, RunKind.UPDATE),
    "proposal": (Action.REVISE, Decision.REJECTED),
    "snapshot": ChangeKind.MATERIAL,
    "pool": ChangeKind.ERROR,
    "section": SectionStatus.REVISED,
    "claim": ClaimState.STALE,
    "check": CheckOutcome.NOT_MODIFIED,
}


def test_states_are_their_strings_and_read_back_as_members(workspace: Path) -> None:
    with session_scope() as s:
        _fill(s)
    with session_scope() as s:
        states = _states(s)
    assert states == EXPECTED
    run_status, _ = states["run"]
    assert isinstance(run_status, RunStatus) and run_status == "committed"
    assert f"{run_status}" == "committed"  # what messages and JSON show


def test_a_state_outside_its_vocabulary_is_refused_before_the_database(workspace: Path) -> None:
    with session_scope() as s:
        report = Report(title="t", query="q")
        s.add(report)
    with pytest.raises(EvergreenError, match="'awaiting' is not a RunStatus"), session_scope() as s:
        s.add(UpdateRun(report_id=report.id, kind="update", as_of=T0, status="awaiting"))
        s.flush()
    with session_scope() as s:
        assert s.exec(select(UpdateRun)).all() == []  # nothing half-written


def test_the_database_itself_refuses_a_stray_state(workspace: Path) -> None:
    """A write that bypasses the ORM (a SQL shell, another tool) meets the CHECK."""
    with session_scope() as s:
        _fill(s)
    engine = get_engine()
    for table, column in (
        ("updaterun", "status"),
        ("sectionproposal", "decision"),
        ("snapshot", "change_kind"),
        ("claim", "state"),
    ):
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(sa.text(f"UPDATE {table} SET {column} = 'bogus'"))
    with session_scope() as s:
        assert _states(s) == EXPECTED


def test_a_workspace_full_of_rows_upgrades_and_keeps_them(tmp_path: Path) -> None:
    """SQLite rebuilds a table to add a CHECK. With foreign keys enforced during the
    upgrade, dropping the old copy of a table other rows point at (runs, snapshots,
    sections) failed the whole upgrade: "FOREIGN KEY constraint failed"."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = _filled_at(url, "0007")
    old.dispose()
    engine = get_engine(url)  # opening it upgrades to head
    with engine.connect() as conn:
        version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        assert version == migration_head()
        assert conn.execute(sa.text("PRAGMA foreign_keys")).scalar() == 1  # on again
        assert conn.execute(sa.text("PRAGMA foreign_key_check")).all() == []
    with Session(engine) as s:
        assert _states(s) == EXPECTED
        assert len(s.exec(select(Citation)).all()) == 1
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:  # the index survived
        conn.execute(
            sa.text(
                "INSERT INTO updaterun (report_id, kind, as_of, status, progress, summary, "
                "timings, started_at, lease) SELECT report_id, 'update', as_of, 'running', '', "
                "'{}', '{}', started_at, 0 FROM updaterun UNION ALL SELECT report_id, 'update', "
                "as_of, 'running', '', '{}', '{}', started_at, 0 FROM updaterun"
            )
        )


def test_an_unknown_stored_state_stops_the_upgrade_with_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'odd.db'}"
    old = _filled_at(url, "0007")
    with old.begin() as conn:
        conn.execute(sa.text("UPDATE poolentry SET status = 'vanished'"))
    with pytest.raises(EvergreenError, match="poolentry.status holds values .*: vanished"):
        get_engine(url)
    with old.connect() as conn:  # nothing changed
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0007"
        assert conn.execute(sa.text("SELECT status FROM poolentry")).scalar() == "vanished"
