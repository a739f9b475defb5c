"""No dead ends: an as-of after today is refused, a file imported twice is caught, reports
can be archived (kept, hidden, not scheduled) and deleted (after a confirmation; never
while a run is in progress; sources and snapshots another report uses stay), and a
report can be rebuilt from scratch from the app."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, text
from sqlmodel import Session, col, select
from streamlit.testing.v1 import AppTest

from core.app.export import version_markdown
from core.app.importer import DuplicateImportError, import_report, markdown_hash, read_markdown_file
from core.app.report_deletion import delete_report, deletion_message, deletion_preview
from core.dates import parse_as_of, utcnow
from core.domain.validation import check_as_of
from core.engine.schedule import due_reports, next_due, save_report_settings
from core.engine.update import begin_update, execute_update, update_report
from core.errors import EvergreenError
from core.store.db import get_engine, session_scope
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
    UpdateRun,
)
from core.store.report_archive import archive_report, archived_report_ids, unarchive_report
from core.store.repository import get_report
from core.workspace import load_sample
from tests.conftest import run_cli as cli

SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"
QUESTION = "Where does battery storage stand?"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
def sample(sample_workspace: Path) -> int:
    """The sample report (the workspace holds it already: load_sample finds it)."""
    with session_scope() as session:
        return load_sample(session)["report_id"]


def second_copy(as_of: str = "2026-01-15") -> int:
    """The sample report imported again (same sources, its own pool and runs)."""
    with session_scope() as session:
        report, _ = import_report(
            session,
            read_markdown_file(SAMPLE_REPORT),
            query=QUESTION,
            as_of=parse_as_of(as_of),
            source="sample",
        )
        return int(report.id)


def count(session: Session, model: type, *where: object) -> int:
    return int(session.exec(select(func.count()).select_from(model).where(*where)).one())


# -- as-of dates after today ---------------------------------------------------------------
def test_an_as_of_after_today_is_refused_with_one_message() -> None:
    with pytest.raises(EvergreenError, match=r"As-of 2099-01-01 is in the future \(today is "):
        check_as_of(parse_as_of("2099-01-01"), now=NOW)
    with pytest.raises(EvergreenError, match="in the future"):
        check_as_of(parse_as_of("2026-12-02"), now=NOW)


def test_today_means_now_and_earlier_dates_stay() -> None:
    assert check_as_of(None, now=NOW) is None
    assert check_as_of(parse_as_of("2026-12-01"), now=NOW) == NOW  # end of today → now
    past = parse_as_of("2026-01-15")
    assert check_as_of(past, now=NOW) == past


def test_importing_with_a_future_as_of_writes_nothing(workspace: Path) -> None:
    with session_scope() as session, pytest.raises(EvergreenError, match="in the future"):
        import_report(session, "# T\n\nText.\n", query="Q?", as_of=parse_as_of("2099-01-01"))
    with session_scope() as session:
        assert count(session, Report) == 0


def test_the_cli_refuses_a_future_as_of_for_import_create_update_and_rebuild(
    sample: int, sample_workspace: Path
) -> None:
    future = (utcnow() + timedelta(days=400)).date().isoformat()
    for args in (
        ("import-report", str(SAMPLE_REPORT), "--query", "q", "--as-of", future),
        ("create", "What do grid batteries cost?", "--as-of", future),
        ("update", str(sample), "--as-of", future),
        ("rebuild", str(sample), "--as-of", future),
    ):
        r = cli(sample_workspace, *args)
        assert r.returncode == 1, args
        assert f"As-of {future} is in the future" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    with session_scope() as session:
        assert count(session, Report) == 1 and count(session, UpdateRun) == 1


# -- the same file imported twice ------------------------------------------------------------
def test_a_duplicate_import_is_refused_when_asked_and_names_the_first_report(sample: int) -> None:
    crlf = read_markdown_file(SAMPLE_REPORT).replace("\n", "\r\n")
    with session_scope() as session, pytest.raises(DuplicateImportError) as caught:
        import_report(session, crlf, query=QUESTION, refuse_duplicate=True)
    assert caught.value.report_id == sample
    assert str(caught.value) == (
        f"This file was already imported as report {sample} "
        f"('Grid-Scale Battery Energy Storage in the Halvard…', {utcnow().date()})."
    )
    with session_scope() as session:
        assert count(session, Report) == 1  # nothing written
    assert markdown_hash("# A\n\nB  \n") == markdown_hash("\ufeff# A\r\n\r\nB\r\n")
    assert markdown_hash("# A\n\nB\n") != markdown_hash("# A\n\nC\n")


def test_the_cli_refuses_a_duplicate_unless_allowed(workspace: Path) -> None:
    first = cli(workspace, "import-report", str(SAMPLE_REPORT), "--query", "q", "--json")
    assert first.returncode == 0, first.stderr
    again = cli(workspace, "import-report", str(SAMPLE_REPORT), "--query", "q")
    assert again.returncode == 1
    assert "already imported as report 1" in again.stderr and "--allow-duplicate" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    forced = cli(
        workspace, "import-report", str(SAMPLE_REPORT), "--query", "q", "--allow-duplicate"
    )
    assert forced.returncode == 0 and "Imported report 2" in forced.stdout
    cli(workspace, "archive", "1")
    archived = cli(workspace, "import-report", str(SAMPLE_REPORT), "--query", "q")
    assert "already imported as archived report 1" in archived.stderr


# -- archiving -----------------------------------------------------------------------------
def test_an_archived_report_is_kept_but_not_scheduled(sample: int) -> None:
    later = utcnow() + timedelta(days=8)
    with session_scope() as session:
        report = get_report(session, sample)
        save_report_settings(session, report, every_days=7)
        assert [r.id for r in due_reports(session, later)] == [sample]
        archive_report(session, report)
        assert archived_report_ids(session) == {sample}
        assert due_reports(session, later) == [] and next_due(session, report) is None
        assert version_markdown(session, report).startswith("# Grid-Scale")  # kept whole
        unarchive_report(session, report)
        assert [r.id for r in due_reports(session, later)] == [sample]
        assert archived_report_ids(session) == set()


def test_cli_archive_hides_from_list_and_unarchive_brings_back(
    sample: int, sample_workspace: Path
) -> None:
    r = cli(sample_workspace, "archive", str(sample))
    assert r.returncode == 0 and f"evergreen unarchive {sample}" in r.stdout
    assert json.loads(cli(sample_workspace, "list", "--json").stdout) == []
    rows = json.loads(cli(sample_workspace, "list", "--archived", "--json").stdout)
    assert [(row["id"], row["status"]) for row in rows] == [(sample, "archived")]
    assert cli(sample_workspace, "unarchive", str(sample)).returncode == 0
    assert [row["id"] for row in json.loads(cli(sample_workspace, "list", "--json").stdout)] == [
        sample
    ]
    missing = cli(sample_workspace, "archive", "42")
    assert missing.returncode == 1 and "No report '42'" in missing.stderr


# -- deleting --------------------------------------------------------------------------------
def test_delete_removes_the_report_and_everything_only_it_uses(sample: int) -> None:
    other = second_copy()
    update_report(sample, as_of=parse_as_of("2026-04-15"), approve_all=True)
    update_report(sample, as_of=parse_as_of("2026-07-15"))  # a run awaiting review
    with session_scope() as session:
        run_ids = [
            r.id for r in session.exec(select(UpdateRun).where(UpdateRun.report_id == sample))
        ]
        assert count(session, SectionProposal, col(SectionProposal.run_id).in_(run_ids)) > 0
        assert count(session, CostEvent, col(CostEvent.run_id).in_(run_ids)) > 0
        before = version_markdown(session, get_report(session, other), with_version_line=True)
        theirs = {
            e.source_id for e in session.exec(select(PoolEntry).where(PoolEntry.report_id == other))
        }
        found_by_update = count(session, Source) - len(theirs)
        deleted = delete_report(session, get_report(session, sample))
    assert deleted["reports"] == 1 and deleted["versions"] == 2 and deleted["runs"] == 3
    assert found_by_update > 0 and deleted["sources"] == found_by_update
    with session_scope() as session:
        assert session.get(Report, sample) is None
        assert count(session, ReportVersion, ReportVersion.report_id == sample) == 0
        assert count(session, UpdateRun, col(UpdateRun.id).in_(run_ids)) == 0
        assert count(session, SectionProposal, col(SectionProposal.run_id).in_(run_ids)) == 0
        assert count(session, CostEvent, col(CostEvent.run_id).in_(run_ids)) == 0
        assert count(session, PoolEntry, PoolEntry.report_id == sample) == 0
        assert count(session, Snapshot, col(Snapshot.run_id).in_(run_ids)) == 0
        assert set(session.exec(select(Source.id))) == theirs  # shared ones stay, the rest go
        after = version_markdown(session, get_report(session, other), with_version_line=True)
        assert after == before
        assert_no_dangling_rows(session)
    result = update_report(other, as_of=parse_as_of("2026-04-15"))  # the other goes on
    assert result["run_id"]


def test_delete_keeps_a_snapshot_another_report_still_points_at(sample: int) -> None:
    other = second_copy()
    with session_scope() as session:
        made = session.exec(
            select(Snapshot)
            .join(UpdateRun, col(UpdateRun.id) == Snapshot.run_id)
            .where(UpdateRun.report_id == sample)
            .order_by(col(Snapshot.id))
        ).all()
        shared, parent = made[0], made[1]
        entry = session.exec(select(PoolEntry).where(PoolEntry.report_id == other)).first()
        entry.latest_snapshot_id = shared.id  # the other report's pool reached it
        child = session.exec(
            select(Snapshot)
            .join(UpdateRun, col(UpdateRun.id) == Snapshot.run_id)
            .where(UpdateRun.report_id == other)
        ).first()
        child.previous_id = parent.id  # and one of its snapshots descends from another
        session.add_all([entry, child])
        shared_id, parent_id, kept_total = shared.id, parent.id, len(made)
    with session_scope() as session:
        deleted = delete_report(session, get_report(session, sample))
    assert deleted["snapshots"] == kept_total - 2
    with session_scope() as session:
        for snap_id in (shared_id, parent_id):
            snap = session.get(Snapshot, snap_id)
            assert snap is not None and snap.run_id is None
        assert_no_dangling_rows(session)


def test_delete_takes_the_baselines_rebuilt_for_the_report(sample: int) -> None:
    from core.engine.creation import create_report

    with session_scope() as session:
        report = get_report(session, sample)
        spec = (report.query, report.source, report.settings)
    made = create_report(
        spec[0],
        title="Baseline",
        as_of=parse_as_of("2026-04-15"),
        source=spec[1],
        settings=spec[2],
        baseline_of=sample,
    )
    with session_scope() as session:
        report = get_report(session, sample)
        preview = deletion_preview(session, report)
        assert preview == {"versions": 2, "runs": 2, "sources": preview["sources"], "baselines": 1}
        message = deletion_message(report, preview)
        assert message.startswith(
            f"Deleting report {sample} ('Grid-Scale Battery Energy Storage in the…') removes "
        )
        assert f"removes 2 versions, 2 runs, {preview['sources']} pooled sources and 1 " in message
        assert message.endswith("1 baseline for good (pages other reports cite stay).")
        deleted = delete_report(session, report)
    assert deleted["reports"] == 2
    with session_scope() as session:
        assert session.get(Report, made["report_id"]) is None
        assert count(session, Report) == 0 and count(session, Source) == 0
        assert count(session, Snapshot) == 0
        assert_no_dangling_rows(session)


def test_a_report_with_a_run_in_progress_is_not_deleted(sample: int) -> None:
    run_id = begin_update(sample, as_of=parse_as_of("2026-04-15"))  # this process holds it
    with session_scope() as session, pytest.raises(EvergreenError) as caught:
        delete_report(session, get_report(session, sample))
    assert str(caught.value) == (
        f"Run {run_id} of report {sample} is in progress: cancel it or wait for it to finish, "
        "then delete the report."
    )
    with session_scope() as session:
        assert session.get(Report, sample) is not None and session.get(UpdateRun, run_id)
    execute_update(run_id)  # finished: it waits for review, and that does not hold it
    with session_scope() as session:
        assert session.get(UpdateRun, run_id).status == "awaiting_review"
        delete_report(session, get_report(session, sample))
    with session_scope() as session:
        assert session.get(Report, sample) is None


def test_cli_delete_asks_for_yes_then_deletes(sample: int, sample_workspace: Path) -> None:
    r = cli(sample_workspace, "delete", str(sample))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith(f"Error: Deleting report {sample} ('Grid-Scale Battery Energy")
    assert r.stderr.rstrip().endswith("(pages other reports cite stay). Add --yes to confirm.")
    assert [row["id"] for row in json.loads(cli(sample_workspace, "list", "--json").stdout)] == [
        sample
    ]
    r = cli(sample_workspace, "delete", str(sample), "--yes", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["report_id"] == sample and out["deleted"]["versions"] == 1
    assert json.loads(cli(sample_workspace, "list", "--archived", "--json").stdout) == []


def assert_no_dangling_rows(session: Session) -> None:
    """Every reference between the tables still points at a row."""
    checks = [
        (Claim, Claim.section_id, Section),
        (Claim, Claim.snapshot_id, Snapshot),
        (Citation, Citation.section_id, Section),
        (Citation, Citation.snapshot_id, Snapshot),
        (Section, Section.version_id, ReportVersion),
        (ReportVersion, ReportVersion.report_id, Report),
        (PoolEntry, PoolEntry.report_id, Report),
        (PoolEntry, PoolEntry.source_id, Source),
        (PoolEntry, PoolEntry.latest_snapshot_id, Snapshot),
        (Snapshot, Snapshot.source_id, Source),
        (Snapshot, Snapshot.previous_id, Snapshot),
        (Snapshot, Snapshot.run_id, UpdateRun),
        (UpdateRun, UpdateRun.report_id, Report),
        (SectionProposal, SectionProposal.run_id, UpdateRun),
        (CostEvent, CostEvent.run_id, UpdateRun),
    ]
    for model, column, target in checks:
        ids = select(target.id)  # type: ignore[attr-defined]
        dangling = count(
            session, model, col(column).is_not(None), col(column).not_in(ids.scalar_subquery())
        )
        assert dangling == 0, f"{model.__name__}.{column.key} → missing {target.__name__}"
    if get_engine().dialect.name == "sqlite":
        assert session.exec(text("PRAGMA foreign_key_check")).all() == []


# -- the Reports screen ------------------------------------------------------------------------
def test_app_archive_hides_the_report_and_show_archived_brings_it_back(app: AppTest) -> None:
    app.button(key="archive_1").click().run()
    assert not app.exception
    assert any("Archived report 1" in s.value for s in app.success)
    assert not [b for b in app.button if b.key == "update_1"]  # hidden from the list
    assert any("Every report is archived" in i.value for i in app.info)
    app.toggle(key="show_archived").set_value(True).run()
    assert app.button(key="unarchive_1").label == "Unarchive"
    assert not [b for b in app.button if b.key == "update_1"]  # archived: not updated
    app.button(key="unarchive_1").click().run()
    assert any("Report 1 is back in the list" in s.value for s in app.success)
    assert app.button(key="update_1").label == "Update now"


def test_app_delete_asks_first_and_keep_it_keeps_it(app: AppTest) -> None:
    app.button(key="delete_1").click().run()
    assert any(
        "Deleting report 1 (" in w.value and "cannot be undone" in w.value for w in app.warning
    )
    app.button(key="delete_cancel_1").click().run()
    assert not app.warning and app.button(key="update_1")
    app.button(key="delete_1").click().run()
    app.button(key="delete_confirm_1").click().run()
    assert not app.exception
    assert any("Deleted report 1" in s.value for s in app.success)
    assert any("No reports yet" in i.value for i in app.info)
    with session_scope() as session:
        assert count(session, Report) == 0


def test_app_delete_with_a_run_in_progress_says_so(app: AppTest) -> None:
    run_id = begin_update(1, as_of=parse_as_of("2026-04-15"))
    app.run()
    app.button(key="delete_1").click().run()
    app.button(key="delete_confirm_1").click().run()
    assert any(f"Run {run_id} of report 1 is in progress" in e.value for e in app.error)
    assert not any("Deleted report 1" in s.value for s in app.success)
    with session_scope() as session:  # nothing deleted: the report, its versions, its run
        assert count(session, Report, col(Report.id) == 1) == 1
        assert count(session, ReportVersion, col(ReportVersion.report_id) == 1) >= 1
        assert count(session, Section) > 0 and count(session, PoolEntry) > 0
        assert session.get(UpdateRun, run_id).status == "running"


def test_app_rebuild_makes_a_baseline_and_keeps_the_list(app: AppTest) -> None:
    assert "2026-04-15" in app.selectbox(key="rebuild_asof_1").options
    app.selectbox(key="rebuild_asof_1").select("2026-04-15").run()
    app.button(key="rebuild_1").click().run()
    assert not app.exception
    assert any(
        "Rebuilt report 1 from scratch as of 2026-04-15: baseline report 2" in s.value
        for s in app.success
    )
    with session_scope() as session:
        assert get_report(session, 2).baseline_of == 1
    assert not [b for b in app.button if b.key == "update_2"]  # a baseline is not listed


def test_app_duplicate_import_warns_and_imports_only_when_confirmed(app: AppTest) -> None:
    app.file_uploader(key="import_file").upload(
        "my-report.md", SAMPLE_REPORT.read_bytes(), "text/markdown"
    )
    app.text_area(key="import_question").input(QUESTION)
    app.button(key="import").click().run()
    assert any("already imported as report 1" in w.value for w in app.warning)
    with session_scope() as session:
        assert count(session, Report) == 1
    app.button(key="import_anyway").click().run()
    assert not app.exception
    assert any("Imported report 2" in s.value for s in app.success)
    with session_scope() as session:
        assert count(session, Report) == 2


def test_app_import_with_a_future_as_of_is_refused(app: AppTest) -> None:
    app.file_uploader(key="import_file").upload("notes.md", b"# Notes\n\nText.\n", "text/markdown")
    app.text_area(key="import_question").input(QUESTION)
    app.text_input(key="import_as_of").input("2099-01-01")
    app.button(key="import").click().run()
    assert any("As-of 2099-01-01 is in the future" in e.value for e in app.error)
    with session_scope() as session:
        assert count(session, Report) == 1
