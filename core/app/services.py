"""Read models shared by the CLI and the app: what a list of reports shows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from core.dates import day, iso
from core.engine.costs import run_cost
from core.engine.run_liveness import run_state
from core.states import RunStatus
from core.store.models import PoolEntry, UpdateRun
from core.store.repository import latest_version, list_reports


def last_run(session: Session, report_id: int) -> UpdateRun | None:
    return session.exec(
        select(UpdateRun).where(UpdateRun.report_id == report_id).order_by(col(UpdateRun.id).desc())
    ).first()


def report_rows(session: Session) -> list[dict[str, Any]]:
    rows = []
    for report in list_reports(session):
        version = latest_version(session, report.id)
        run = last_run(session, report.id)
        sources = session.exec(
            select(func.count()).select_from(PoolEntry).where(PoolEntry.report_id == report.id)
        ).one()
        needs_review = (
            session.exec(
                select(func.count())
                .select_from(UpdateRun)
                .where(
                    UpdateRun.report_id == report.id, UpdateRun.status == RunStatus.AWAITING_REVIEW
                )
            ).one()
            > 0
        )
        rows.append(
            {
                "id": report.id,
                "title": report.title,
                "query": report.query,
                "source": report.source,
                "version": version.number if version else None,
                "as_of": day(version.as_of) if version else None,
                "last_update": iso(run.started_at) if run else None,
                "last_run_status": run_state(run) if run else None,
                "last_run_id": run.id if run else None,
                "sources": sources,
                "needs_review": needs_review,
                "status": "needs review" if needs_review else (run_state(run) if run else "new"),
                "last_cost": run_cost(session, run.id) if run else None,
            }
        )
    return rows
