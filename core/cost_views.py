"""Read models of what a run cost: per stage, in total, and beside what researching the
report from scratch cost (its own create run, a baseline report's, or an estimate)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from core.costs import COST_FIELDS
from core.errors import NotFoundError
from core.models import CostEvent, Report, UpdateRun
from core.repository import citations_of, pool_of, sections_of, versions_of
from core.runs import settings_of
from core.services import run_cost
from core.views import report_of


def cost_by_stage(session: Session, run_id: int) -> list[dict[str, Any]]:
    """Per-stage cost of a run (stages summed over providers and models)."""
    rows: dict[str, dict[str, float]] = {}
    for ev in session.exec(select(CostEvent).where(CostEvent.run_id == run_id)):
        row = rows.setdefault(ev.stage, dict.fromkeys((*COST_FIELDS, "seconds"), 0.0))
        for key in (*COST_FIELDS, "seconds"):
            row[key] += getattr(ev, key) or 0
    return [{"stage": stage, **vals} for stage, vals in sorted(rows.items())]


def _scratch_run(session: Session, report: Report) -> tuple[UpdateRun | None, str]:
    create = session.exec(
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report.id,
            col(UpdateRun.kind).in_(("create", "rebuild")),
            UpdateRun.status == "committed",
        )
        .order_by(col(UpdateRun.id))
    ).first()
    if create is not None:
        return create, f"this report's from-scratch research (run {create.id})"
    baseline = session.exec(
        select(UpdateRun)
        .join(Report, col(Report.id) == UpdateRun.report_id)
        .where(
            Report.baseline_of == report.id,
            col(UpdateRun.kind).in_(("create", "rebuild")),
            UpdateRun.status == "committed",
        )
        .order_by(col(UpdateRun.id).desc())
    ).first()
    if baseline is not None:
        return baseline, f"baseline report {baseline.report_id} (run {baseline.id})"
    return None, ""


def scratch_cost(session: Session, report_id: int) -> dict[str, Any]:
    """What researching this report from scratch cost (its create run, or a baseline
    report's rebuild) — or, for an imported report, an estimate.

    The estimate follows what ``core.research`` does: one search per planning query
    and per section, a fetch per source in the evidence pool, a writer call to plan, one to outline
    and one per section; tokens ≈ characters / 4 of the sources read and the text
    written; dollars from the configured writer model's price when the writer is an
    LLM (the offline writer makes no LLM calls).
    """
    report = report_of(session, report_id)
    run, basis = _scratch_run(session, report)
    if run is not None:
        stages = cost_by_stage(session, run.id)
        totals = {k: sum(s[k] for s in stages) for k in COST_FIELDS}
        return {"estimated": False, "basis": basis, "stages": stages, "totals": totals}
    from core.repository import newest_snapshot
    from core.settings import get_settings

    cfg = settings_of(report.settings)
    versions = versions_of(session, report.id)
    if not versions:
        zero = dict.fromkeys(COST_FIELDS, 0)
        return {"estimated": True, "basis": "no version yet", "stages": [], "totals": zero}
    version = versions[-1]
    sections = [s for s in sections_of(session, version.id) if s.level >= 1]
    cited = citations_of(session, version.id)
    pool = len(pool_of(session, report.id))  # a rebuild finds and fetches about the pool
    source_chars = 0
    for snap in cited.values():
        newest = newest_snapshot(session, snap.source_id)
        source_chars += len((newest.content if newest else snap.content) or "")
    written = sum(len(s.body) for s in sections)
    settings = get_settings()
    writer = cfg.get("writer") or settings.llm
    llm = writer != "offline"
    calls = 2 + len(sections)
    tokens_in = (source_chars + 2000 * calls) // 4 if llm else 0
    tokens_out = written // 4 if llm else 0
    usd = 0.0
    if llm:
        price = settings.price_for(settings.model_writer)
        usd = round((tokens_in * price.input + tokens_out * price.output) / 1e6, 4)
    stages = [
        {"stage": "plan", "llm_calls": 1 if llm else 0, "tokens_in": 0, "tokens_out": 0,
         "searches": 0, "fetches": 0, "usd": 0.0},
        {"stage": "search", "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
         "searches": int(cfg["queries"]) + len(sections), "fetches": 0, "usd": 0.0},
        {"stage": "fetch", "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
         "searches": 0, "fetches": max(len(cited), pool), "usd": 0.0},
        {"stage": "write", "llm_calls": (calls - 1) if llm else 0, "tokens_in": tokens_in,
         "tokens_out": tokens_out, "searches": 0, "fetches": 0, "usd": usd},
    ]  # fmt: skip
    totals = {k: sum(s[k] for s in stages) for k in COST_FIELDS}
    return {
        "estimated": True,
        "basis": f"estimate for {len(sections)} sections and {pool} sources in the pool",
        "stages": stages,
        "totals": totals,
    }


def run_costs(session: Session, run_id: int) -> dict[str, Any]:
    """A run's cost by stage and in total, with the from-scratch comparison."""
    run = session.get(UpdateRun, int(run_id))
    if run is None:
        raise NotFoundError(f"No run {run_id}.")
    stages = cost_by_stage(session, run.id)
    totals = run_cost(session, run.id)
    totals["writer_calls"] = int((run.summary or {}).get("writer_calls", 0))
    return {"stages": stages, "totals": totals, "scratch": scratch_cost(session, run.report_id)}
