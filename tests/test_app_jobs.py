"""Runs outside the page (core.engine.jobs), the update schedule (core.engine.schedule) and the
CLI doors onto them: `evergreen update --due` and `evergreen cancel`."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select

from core.app.importer import import_report, read_markdown_file
from core.dates import as_utc, parse_as_of, utcnow
from core.engine import jobs
from core.engine.schedule import due_reports, next_due, run_due, save_report_settings
from core.errors import EvergreenError
from core.store.db import session_scope
from core.store.models import Report, UpdateRun
from core.workspace import load_sample
from tests.conftest import run_cli as cli

SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"


@pytest.fixture
def sample(sample_workspace: Path) -> int:
    """The sample report (the workspace holds it already: load_sample finds it)."""
    with session_scope() as session:
        return load_sample(session)["report_id"]


def run_row(run_id: int) -> UpdateRun:
    with session_scope() as session:
        return session.get(UpdateRun, run_id)


def test_threaded_update_reaches_review_and_progress_is_in_the_db(sample: int) -> None:
    run_id = jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=False)
    assert jobs.wait(run_id, timeout=60) == "awaiting_review"
    run = run_row(run_id)
    assert run.progress == "awaiting review" and run.summary["actions"]
    for _ in range(100):  # the thread ends right after the status is committed
        if not jobs.is_working(run_id):
            break
        threading.Event().wait(0.02)
    assert not jobs.is_working(run_id)


def test_a_second_update_while_one_is_open_is_refused(sample: int) -> None:
    run_id = jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=True)
    with pytest.raises(EvergreenError, match=f"Run {run_id} .* awaiting review"):
        jobs.start_update(sample, sync=True)


def test_cancel_a_running_update(sample: int, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()

    def slow_refresh(session, report, cited, *, progress, **_):  # noqa: ANN001
        progress("checking source 1/2")
        gate.wait(30)
        progress("checking source 2/2")  # the checkpoint sees the cancel request
        return []

    monkeypatch.setattr("core.engine.stages.refresh", slow_refresh)
    run_id = jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=False)
    assert jobs.wait(run_id, timeout=30, until=("running",)) == "running"
    for _ in range(500):
        if run_row(run_id).progress == "checking source 1/2":
            break
        threading.Event().wait(0.02)
    assert run_row(run_id).progress == "checking source 1/2"
    assert jobs.is_working(run_id)
    with pytest.raises(EvergreenError, match="still being worked on"):
        jobs.abandon(run_id)
    assert jobs.cancel(run_id) == "cancelling"
    gate.set()
    assert jobs.wait(run_id, timeout=30) == "cancelled"
    assert "cancelled" in run_row(run_id).error
    # the report is free again
    assert jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=True)


def test_a_run_awaiting_review_is_dropped_by_cancel(sample: int) -> None:
    run_id = jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=True)
    assert jobs.cancel(run_id) == "cancelled"


def test_a_failure_before_the_engine_starts_is_recorded_on_the_run(workspace: Path) -> None:
    with session_scope() as session:
        report, _ = import_report(
            session,
            read_markdown_file(SAMPLE_REPORT),
            query="Storage?",
            as_of=parse_as_of("2026-01-15"),
            source="corpus:missing",  # the importer does not open the source; updates do
        )
        report_id = report.id
    run_id = jobs.start_update(report_id, sync=False)
    assert jobs.wait(run_id, timeout=30) == "failed"
    assert "No corpus named 'missing'" in run_row(run_id).error


def test_an_abandoned_run_frees_the_report(sample: int) -> None:
    from core.engine.update import begin_update

    run_id = begin_update(sample)  # registered, but no worker ever picks it up
    assert jobs.abandon(run_id) == "failed"
    assert "Abandoned" in run_row(run_id).error


def test_create_in_the_background_and_bad_input_at_once(workspace: Path) -> None:
    with pytest.raises(EvergreenError, match="question is empty"):
        jobs.start_create("  ", sync=False)
    with pytest.raises(EvergreenError, match="No corpus named 'missing'"):
        jobs.start_create("Battery storage?", source="corpus:missing", sync=False)
    assert jobs.start_create("Battery storage costs?", as_of=parse_as_of("2026-01-15")) is None
    deadline = 300
    while deadline:
        with session_scope() as session:
            run = session.exec(select(UpdateRun).where(UpdateRun.kind == "create")).first()
            if run is not None and run.status == "committed":
                break
        threading.Event().wait(0.05)
        deadline -= 1
    assert run is not None and run.status == "committed"


# -- the schedule -------------------------------------------------------------------------
def test_schedule_settings_are_validated(sample: int) -> None:
    with session_scope() as session:
        report = session.get(Report, sample)
        with pytest.raises(EvergreenError, match="between 0.5 and 1.0"):
            save_report_settings(session, report, tau=1.5)
        with pytest.raises(EvergreenError, match="every 1 to 365 days"):
            save_report_settings(session, report, every_days=400)
        with pytest.raises(EvergreenError, match="Unknown writer"):
            save_report_settings(session, report, writer="gpt")
        cfg = save_report_settings(session, report, every_days=7, concurrency=2, writer=None)
        assert cfg.every_days == 7 and cfg.concurrency == 2 and cfg.tau == 0.9
    with session_scope() as session:
        report = session.get(Report, sample)
        assert report.settings["every_days"] == 7
        save_report_settings(session, report, every_days=0)
        assert "every_days" not in report.settings


def test_due_reports_and_run_due(sample: int) -> None:
    with session_scope() as session:
        assert due_reports(session) == []  # no schedule
        report = session.get(Report, sample)
        save_report_settings(session, report, every_days=30)
    with session_scope() as session:
        report = session.get(Report, sample)
        due = next_due(session, report)
        runs = select(UpdateRun).where(UpdateRun.report_id == sample)
        last = session.exec(runs.order_by(UpdateRun.id.desc())).first()
        assert due == as_utc(last.started_at) + timedelta(days=30)  # 30 days after the last run
        assert due_reports(session, due - timedelta(days=1)) == []
        assert [r.id for r in due_reports(session, due + timedelta(days=1))] == [sample]
    rows = run_due(workers=2, now=utcnow() + timedelta(days=31))
    assert [(r["report_id"], r["status"], r["error"]) for r in rows] == [
        (sample, "awaiting_review", None)
    ]
    with session_scope() as session:  # awaiting review: not due again
        assert due_reports(session, utcnow() + timedelta(days=400)) == []


def test_cli_update_due_and_cancel(sample: int, sample_workspace: Path) -> None:
    r = cli(sample_workspace, "update", "--due", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []
    with session_scope() as session:
        save_report_settings(session, session.get(Report, sample), every_days=1)
        for run in session.exec(select(UpdateRun).where(UpdateRun.report_id == sample)):
            run.started_at = utcnow() - timedelta(days=2)  # the import was two days ago
            session.add(run)
    r = cli(sample_workspace, "update", "--due", "--workers", "2", "--json")
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)
    assert row["report_id"] == sample and row["status"] == "awaiting_review"
    r = cli(sample_workspace, "cancel", str(row["run_id"]))
    assert r.returncode == 0, r.stderr
    assert f"Run {row['run_id']}: cancelled." in r.stdout
    r = cli(sample_workspace, "cancel", str(row["run_id"]))
    assert r.returncode == 1 and "nothing to cancel" in r.stderr
    r = cli(sample_workspace, "update")
    assert r.returncode == 1 and "or use --due" in r.stderr
    r = cli(sample_workspace, "update", "1", "--due")
    assert r.returncode == 1 and "give no REPORT" in r.stderr


def test_resume_a_failed_update_in_the_background(
    sample: int,
    refresh_fails_once: list[int],  # noqa: ARG001 - used for its effect
) -> None:
    run_id = jobs.start_update(sample, as_of=parse_as_of("2026-04-15"), sync=True)
    assert run_row(run_id).status == "failed" and "network down" in run_row(run_id).error
    jobs.resume(run_id, sync=False)
    assert jobs.wait(run_id, timeout=60) == "awaiting_review"
    assert jobs.last_error(run_id) is None
