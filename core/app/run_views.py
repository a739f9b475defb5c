"""Read models of update runs: a run as the screens list it, one run's details, and the
runs of a report or awaiting review."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from core.dates import day, iso
from core.domain.labels import run_kind_label, run_status_label
from core.engine.run_liveness import run_state
from core.errors import NotFoundError
from core.store.models import Report, ReportVersion, UpdateRun


def run_brief(run: UpdateRun | None) -> dict[str, Any] | None:
    """A run as the screens list it; ``status_label`` / ``kind_label`` are what to show."""
    if run is None:
        return None
    status = run_state(run)  # a run whose worker is gone reads "interrupted"
    return {
        "id": run.id,
        "report_id": run.report_id,
        "kind": run.kind,
        "kind_label": run_kind_label(run.kind),
        "status": status,
        "status_label": run_status_label(status),
        "progress": run.progress,
        "error": run.error,
        "as_of": day(run.as_of),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "version_id": run.version_id,
    }


def run_info(session: Session, run_id: int) -> dict[str, Any]:
    run = session.get(UpdateRun, int(run_id))
    if run is None:
        raise NotFoundError(f"No run {run_id}.")
    report = session.get(Report, run.report_id)
    version = session.get(ReportVersion, run.version_id) if run.version_id else None
    return {
        **(run_brief(run) or {}),
        "report_title": report.title if report else "",
        "summary": run.summary or {},
        "version": version.number if version else None,
    }


def runs_of(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Every run of a report, newest first."""
    runs = session.exec(
        select(UpdateRun).where(UpdateRun.report_id == report_id).order_by(col(UpdateRun.id).desc())
    )
    return [run_brief(r) for r in runs]  # type: ignore[misc]
