"""Archiving a report: hidden from the Reports list and the update schedule, kept whole."""

from __future__ import annotations

from sqlmodel import Session, col, select

from core.dates import utcnow
from core.store.models import Report


def archived_report_ids(session: Session) -> set[int]:
    """The reports an analyst archived (hidden from the list, kept whole)."""
    stmt = select(Report.id).where(col(Report.archived_at).is_not(None))
    return {int(rid) for rid in session.exec(stmt) if rid is not None}


def archive_report(session: Session, report: Report) -> Report:
    """Hide the report from the Reports list and the update schedule; nothing is deleted.
    Archiving an archived report changes nothing."""
    if report.archived_at is None:
        report.archived_at = utcnow()
        session.add(report)
        session.flush()
    return report


def unarchive_report(session: Session, report: Report) -> Report:
    """Bring an archived report back to the list (and its schedule, if it has one)."""
    if report.archived_at is not None:
        report.archived_at = None
        session.add(report)
        session.flush()
    return report
