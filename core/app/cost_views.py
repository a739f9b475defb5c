"""Read models of what a run cost: per stage, in total, and beside what researching the
report from scratch cost (its own create run, a baseline report's, or an estimate).

The from-scratch baseline (``core.engine.scratch``) is stored with each update when it finishes
(``run.summary["scratch"]``), so a past run is compared with what starting over cost
then, not with today's pool. ``core.app.cost_display`` turns the numbers into what the
screens show (``run_costs`` uses it for the meters, the savings and the writer note).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from core.app.cost_display import headline, saved, visible_fields, writer_note
from core.app.report_views import report_of
from core.domain.report_settings import ReportSettings
from core.engine.costs import METER_FIELDS, run_cost
from core.engine.scratch import SCRATCH_KEY, cost_by_stage, scratch_baseline, scratch_cost
from core.errors import NotFoundError
from core.settings import get_settings
from core.states import RunKind
from core.store.models import UpdateRun

__all__ = [
    "SCRATCH_KEY",
    "cost_by_stage",
    "run_costs",
    "scratch_cost",
    "scratch_for_run",
    "update_costs",
    "writer_is_llm",
    "writer_of",
]


def scratch_for_run(session: Session, run: UpdateRun) -> dict[str, Any]:
    """The baseline stored with the run when it finished; for a run that has none (older,
    or still running), today's — said so in its basis."""
    stored = (run.summary or {}).get(SCRATCH_KEY)
    if stored:
        return {**stored, "stored": True}
    scratch = scratch_baseline(session, run)
    if run.finished_at is not None and run.kind == RunKind.UPDATE:
        scratch["basis"] += " (computed today: this run stored none)"
    return {**scratch, "stored": False}


def run_costs(session: Session, run_id: int) -> dict[str, Any]:
    """A run's cost by stage and in total, with the from-scratch comparison, what was
    saved, which meters to show for the report's writer, and a note on writer calls."""
    run = session.get(UpdateRun, int(run_id))
    if run is None:
        raise NotFoundError(f"No run {run_id}.")
    stages = cost_by_stage(session, run.id)
    totals = run_cost(session, run.id)
    totals["writer_calls"] = int((run.summary or {}).get("writer_calls", 0))
    scratch = scratch_for_run(session, run)
    # the run's own calls say which writer it had; the report's setting, what it has now
    llm = int(totals.get("llm_calls", 0)) > 0 or writer_is_llm(session, run.report_id)
    fields = visible_fields(llm, totals, scratch["totals"])
    return {
        "stages": stages,
        "totals": totals,
        "scratch": scratch,
        "fields": fields,
        "saved": saved(totals, scratch["totals"], fields),
        "headline": headline(totals, scratch["totals"], fields),
        "writer_note": writer_note(llm, totals["writer_calls"], int(totals.get("llm_calls", 0))),
    }


def update_costs(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Per update run of the report that made a version: its cost (time included) beside
    the from-scratch baseline stored with it (History's bars)."""
    runs = session.exec(
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report_id,
            UpdateRun.kind == RunKind.UPDATE,
            col(UpdateRun.version_id).is_not(None),
        )
        .order_by(col(UpdateRun.id))
    ).all()
    out = []
    for run in runs:
        scratch = scratch_for_run(session, run)
        out.append(
            {
                "run_id": run.id,
                "cost": {k: run_cost(session, run.id).get(k, 0) for k in METER_FIELDS},
                "scratch": {k: scratch["totals"].get(k, 0) for k in METER_FIELDS},
                "estimated": bool(scratch["estimated"]),
                "stored": bool(scratch["stored"]),
                "basis": scratch["basis"],
            }
        )
    return out


def writer_of(session: Session, report_id: int) -> str:
    """The report's writer (its setting, else the configured default)."""
    report = report_of(session, report_id)
    shown, _problems = ReportSettings.salvage(report.settings)  # for the screens
    return shown.writer or get_settings().llm


def writer_is_llm(session: Session, report_id: int) -> bool:
    return writer_of(session, report_id) != "offline"
