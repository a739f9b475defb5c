"""Read models shared by the CLI and the app: what a list of reports shows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from core.dates import day, iso
from core.models import CostEvent, PoolEntry, UpdateRun
from core.repository import latest_version, list_reports
from core.run_liveness import run_state
from core.source_spec import SourceSpec
from core.sources.corpus import Corpus
from core.sources.registry import providers_for
from core.states import RunStatus


def check_source(source: str | SourceSpec) -> str:
    """Validate a report's source setting before anything is written: it must parse, a
    corpus must exist, and the web needs its key and browser. Returns the string to store."""
    spec = SourceSpec.parse(source)
    if spec.kind == "web":
        providers_for(spec).close()  # a missing key or browser fails here, before any write
    elif spec.kind == "corpus":
        Corpus.open(str(spec.corpus)).close()
    return str(spec)


def last_run(session: Session, report_id: int) -> UpdateRun | None:
    return session.exec(
        select(UpdateRun).where(UpdateRun.report_id == report_id).order_by(col(UpdateRun.id).desc())
    ).first()


def run_cost(session: Session, run_id: int) -> dict[str, float]:
    row = session.exec(
        select(
            func.coalesce(func.sum(CostEvent.llm_calls), 0),
            func.coalesce(func.sum(CostEvent.tokens_in), 0),
            func.coalesce(func.sum(CostEvent.tokens_out), 0),
            func.coalesce(func.sum(CostEvent.searches), 0),
            func.coalesce(func.sum(CostEvent.fetches), 0),
            func.coalesce(func.sum(CostEvent.bytes), 0),
            func.coalesce(func.sum(CostEvent.not_modified), 0),
            func.coalesce(func.sum(CostEvent.shared_checks), 0),
            func.coalesce(func.sum(CostEvent.seconds), 0.0),
            func.coalesce(func.sum(CostEvent.usd), 0.0),
        ).where(CostEvent.run_id == run_id)
    ).one()
    keys = (
        "llm_calls",
        "tokens_in",
        "tokens_out",
        "searches",
        "fetches",
        "bytes",
        "not_modified",
        "shared_checks",
        "seconds",
        "usd",
    )
    return {
        k: (round(float(v), 3) if k in ("seconds", "usd") else int(v))
        for k, v in zip(keys, row, strict=True)
    }


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
