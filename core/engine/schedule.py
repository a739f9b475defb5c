"""Per-report update settings, the update schedule (``evergreen update --due``, or the
workers' periodic task on PostgreSQL) and update rounds (``evergreen update --all``).

A report with ``every_days = N`` in its settings is *due* when it is not archived, has
no open run (running or awaiting review) and its last run — of any kind, successful or not —
started at least N days ago; a failed run is therefore retried one period later, not
on every cron tick. ``run_due`` proposes an update for each due report; the runs
wait for an analyst's review in the app like any other.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from core.dates import as_utc, utcnow
from core.domain.report_settings import ReportSettings, settings_of
from core.engine.runs import open_run_for
from core.errors import EvergreenError
from core.states import RunStatus
from core.store.db import session_scope
from core.store.models import Report, UpdateRun
from core.store.repository import latest_version, list_reports


def every_days(report: Report) -> int | None:
    """The report's schedule in days (None: none); an invalid stored one raises."""
    return settings_of(report.settings).every_days


def next_due(session: Session, report: Report) -> datetime | None:
    """When the report next falls due (None: no schedule, or the report is archived)."""
    period = every_days(report)
    if not period or report.archived_at is not None:
        return None
    last = session.exec(
        select(UpdateRun).where(UpdateRun.report_id == report.id).order_by(col(UpdateRun.id).desc())
    ).first()
    if last is None:
        return utcnow()
    return as_utc(last.started_at) + timedelta(days=period)


def due_reports(session: Session, now: datetime | None = None) -> list[Report]:
    """Scheduled reports due at ``now``: not archived, a version to update, no open run,
    period elapsed. (A report whose stored settings cannot be read is not among them:
    ``unreadable_schedules`` lists it.)"""
    when = as_utc(now or utcnow())
    out = []
    for report in list_reports(session):
        try:
            due = next_due(session, report)  # None for an archived report
        except EvergreenError:
            continue
        if due is None or due > when:
            continue
        if latest_version(session, report.id) is None or open_run_for(session, report.id):
            continue
        out.append(report)
    return out


def unreadable_schedules(session: Session) -> list[dict[str, Any]]:
    """One row of a scheduled round per scheduled report (not archived) whose stored
    settings cannot be read: it is not started, and the row says why (``evergreen update
    --due`` prints it and exits 1) instead of the report silently dropping off the
    schedule."""
    rows = []
    for report in list_reports(session):
        if report.archived_at is not None or not (report.settings or {}).get("every_days"):
            continue
        try:
            settings_of(report.settings)
        except EvergreenError as exc:
            rows.append(
                {
                    "report_id": report.id,
                    "title": report.title,
                    "run_id": None,
                    "status": "not started",
                    "error": str(exc),
                }
            )
    return rows


def updatable_reports(session: Session) -> list[Report]:
    """Every report an update round covers (``evergreen update --all``): not archived, a
    version to update, no open run."""
    return [
        report
        for report in list_reports(session)
        if report.archived_at is None
        and latest_version(session, report.id) is not None
        and open_run_for(session, report.id) is None
    ]


def _scheduler_as_of(now: datetime | None) -> datetime | None:
    # as of the scheduler's clock, but never later than today (a test's or a catch-up
    # run's "now" may be ahead; sources cannot be read in the future)
    return None if now is None else min(as_utc(now), utcnow())


def run_due(*, workers: int = 1, now: datetime | None = None) -> list[dict[str, Any]]:
    """Propose an update (as of now) for every due report, ``workers`` at a time.

    Returns one row per report: report_id, run_id, status and error (None when fine).
    """
    if workers < 1:
        raise EvergreenError(f"--workers must be at least 1 (got {workers}).")
    with session_scope() as session:
        due = [(r.id, r.title) for r in due_reports(session, now)]
        unreadable = unreadable_schedules(session)
    return unreadable + run_updates(due, workers=workers, as_of=_scheduler_as_of(now))


def run_updates(
    reports: list[tuple[int, str]],
    *,
    workers: int = 1,
    as_of: datetime | None = None,
    force_recheck: bool = False,
) -> list[dict[str, Any]]:
    """Propose an update of each (report id, title) here, ``workers`` at a time; one row
    per report: report_id, title, run_id, status, error and actions."""
    from core.engine.jobs import work_on  # lazy: a cycle (jobs and the queue import the schedule)
    from core.engine.update import begin_update

    if workers < 1:
        raise EvergreenError(f"--workers must be at least 1 (got {workers}).")

    def one(item: tuple[int, str]) -> dict[str, Any]:
        report_id, title = item
        row: dict[str, Any] = {"report_id": report_id, "title": title, "run_id": None}
        try:
            row["run_id"] = begin_update(report_id, as_of=as_of, force_recheck=force_recheck)
        except EvergreenError as exc:
            return {**row, "status": "not started", "error": str(exc)}
        work_on(row["run_id"])  # never raises; failures are recorded on the run
        return {**row, **run_row(row["run_id"])}

    if not reports:
        return []
    with ThreadPoolExecutor(max_workers=min(workers, len(reports))) as pool:
        return list(pool.map(one, reports))


def run_row(run_id: int) -> dict[str, Any]:
    """A run as one row of an update round: status, error (failed or cancelled) and the
    section actions it proposed."""
    with session_scope() as session:
        run = session.get(UpdateRun, run_id)
        status = run.status if run else "failed"
        error = run.error if run and status in (RunStatus.FAILED, RunStatus.CANCELLED) else None
        actions = (run.summary or {}).get("actions", {}) if run else {}
    return {"status": status, "error": error, "actions": actions}


def enqueue_updates(
    reports: list[tuple[int, str]],
    *,
    as_of: datetime | None = None,
    force_recheck: bool = False,
) -> list[dict[str, Any]]:
    """Register an update of each (report id, title) and queue them all for the workers
    (PostgreSQL, ``core.engine.queue``); the rows say ``queued`` (or why one did not start)."""
    from core.engine.queue import (
        enqueue_runs,  # lazy: a cycle (jobs and the queue import the schedule)
    )
    from core.engine.update import begin_update

    rows: list[dict[str, Any]] = []
    for report_id, title in reports:
        row: dict[str, Any] = {"report_id": report_id, "title": title, "run_id": None}
        try:
            row["run_id"] = begin_update(report_id, as_of=as_of, force_recheck=force_recheck)
        except EvergreenError as exc:
            rows.append({**row, "status": "not started", "error": str(exc)})
            continue
        rows.append({**row, "status": "queued", "error": None})
    started = [r["run_id"] for r in rows if r["run_id"]]
    if started:
        try:
            enqueue_runs(started)
        except BaseException as exc:  # registered runs must not hang open
            from core.engine.runs import end_failed

            for run_id in started:
                end_failed(run_id, f"It could not be queued: {exc}")
            raise
    return rows


def enqueue_due(now: datetime | None = None) -> list[dict[str, Any]]:
    """Queue an update for every due report (the workers' schedule; ``update --due`` on
    PostgreSQL with workers). Two of these at once give one run per report: a report
    with an open run is not due, and the database allows one open run per report."""
    with session_scope() as session:
        due = [(r.id, r.title) for r in due_reports(session, now)]
        unreadable = unreadable_schedules(session)
    return unreadable + enqueue_updates(due, as_of=_scheduler_as_of(now))


def update_round(
    *,
    as_of: datetime | None = None,
    workers: int = 1,
    queue: bool = False,
    force_recheck: bool = False,
) -> list[dict[str, Any]]:
    """An update of every report (``updatable_reports``): queued for the workers, or
    done here ``workers`` at a time."""
    with session_scope() as session:
        reports = [(r.id, r.title) for r in updatable_reports(session)]
    if queue:
        return enqueue_updates(reports, as_of=as_of, force_recheck=force_recheck)
    return run_updates(reports, workers=workers, as_of=as_of, force_recheck=force_recheck)


def save_report_settings(
    session: Session,
    report: Report,
    *,
    tau: float | None = None,
    concurrency: int | None = None,
    max_sections: int | None = None,
    writer: str | None | type[Ellipsis] = ...,  # type: ignore[valid-type]
    every_days: int | None | type[Ellipsis] = ...,  # type: ignore[valid-type]
    max_sources: int | None = None,
    max_section_words: int | None = None,
) -> ReportSettings:
    """Validate and store per-report settings (``ReportSettings``: the app's Settings
    screen and ``evergreen settings`` both call this); returns the effective settings.

    Arguments left out (``None`` for numbers, ``...`` for writer and every_days) keep
    their current value; ``writer=None`` (or ``"default"``) is the configured default;
    ``every_days=None`` or 0 turns the schedule off. A stored value that is invalid is
    replaced by its default unless this call sets it. Nothing is stored when any value is
    refused (``ReportSettingsError``, one line).
    """
    current, _problems = ReportSettings.salvage(report.settings)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("tau", tau),
            ("concurrency", concurrency),
            ("max_sections", max_sections),
            ("max_sources", max_sources),
            ("max_section_words", max_section_words),
        )
        if value is not None
    }
    if writer is not ...:
        changes["writer"] = writer
    if every_days is not ...:
        changes["every_days"] = every_days
    new = current.changed(**changes)
    report.settings = new.to_stored(report.settings)  # a new dict, so the JSON column is written
    session.add(report)
    session.flush()
    return new
