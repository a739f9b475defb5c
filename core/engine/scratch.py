"""What starting over would cost: the from-scratch baseline an update is compared with.

A committed create or rebuild run of the update's own day (the report's creation, else a
baseline report's rebuild) is the baseline; without one, an estimate from the report's
newest version, its time put at the update's own pace. The engine stores it with each
update when it finishes (``run.summary[SCRATCH_KEY]``), so a past run is compared with
what starting over cost then; ``core.app.cost_views`` reads it for the screens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.dates import as_utc
from core.domain.report_settings import ReportSettings
from core.engine.costs import METER_FIELDS
from core.errors import NotFoundError
from core.settings import get_settings
from core.states import RunStatus
from core.store.models import CostEvent, Report, UpdateRun
from core.store.pool import newest_snapshot, pool_of
from core.store.repository import citations_of, sections_of, versions_of


def _report(session: Session, report_id: int) -> Report:
    report = session.get(Report, int(report_id))
    if report is None:
        raise NotFoundError(f"No report {report_id}.")
    return report


def cost_by_stage(session: Session, run_id: int) -> list[dict[str, Any]]:
    """Per-stage cost of a run (stages summed over providers and models)."""
    rows: dict[str, dict[str, float]] = {}
    for ev in session.exec(select(CostEvent).where(CostEvent.run_id == run_id)):
        row = rows.setdefault(ev.stage, dict.fromkeys(METER_FIELDS, 0.0))
        for key in METER_FIELDS:
            row[key] += getattr(ev, key) or 0
    return [{"stage": stage, **vals} for stage, vals in sorted(rows.items())]


def _totals(stages: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    return {k: sum(s.get(k, 0) or 0 for s in stages) for k in METER_FIELDS}


def _scratch_run(
    session: Session, report: Report, as_of: datetime | None = None
) -> tuple[UpdateRun | None, str]:
    """The committed from-scratch run to compare with: with ``as_of``, only one researched
    as of that same day — the report's own creation, else its newest baseline's rebuild —
    since a report created years earlier is smaller and older than starting over then
    (the Swift report's 2025 update was set against its 2019 creation: "51.7 s more");
    without, the report's creation, else its newest baseline."""
    own = (
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report.id,
            col(UpdateRun.kind).in_(("create", "rebuild")),
            UpdateRun.status == RunStatus.COMMITTED,
        )
        .order_by(col(UpdateRun.id))
    )
    baselines = (
        select(UpdateRun)
        .join(Report, col(Report.id) == UpdateRun.report_id)
        .where(
            Report.baseline_of == report.id,
            col(UpdateRun.kind).in_(("create", "rebuild")),
            UpdateRun.status == RunStatus.COMMITTED,
        )
        .order_by(col(UpdateRun.id).desc())
    )
    for query, basis in (
        (own, "this report's from-scratch research (run {id})"),
        (baselines, "baseline report {report} (run {id})"),
    ):
        for run in session.exec(query):
            if as_of is None or _same_day(run.as_of, as_of):
                return run, basis.format(id=run.id, report=run.report_id)
    return None, ""


def _same_day(a: datetime, b: datetime) -> bool:
    return as_utc(a).date() == as_utc(b).date()


def scratch_cost(session: Session, report_id: int, as_of: datetime | None = None) -> dict[str, Any]:
    """What researching this report from scratch cost — as of ``as_of`` when given: a
    create or rebuild run of that day (``_scratch_run``) — or, when no run measured it,
    an estimate from the report's newest version, labelled as one.

    The estimate follows what ``core.engine.research`` does: one search per planning query
    and per section, a fetch per source in the evidence pool, a writer call to plan, one to outline
    and one per section; tokens ≈ characters / 4 of the sources read and the text
    written; dollars from the configured writer model's price when the writer is an
    LLM (the offline writer makes no LLM calls).
    """
    report = _report(session, report_id)
    run, basis = _scratch_run(session, report, as_of)
    if run is not None:
        return _measured_scratch(session, run, basis)
    return _estimated_scratch(session, report)


def _measured_scratch(session: Session, run: UpdateRun, basis: str) -> dict[str, Any]:
    """The from-scratch cost a committed create or rebuild run measured."""
    stages = cost_by_stage(session, run.id)
    totals = _totals(stages)
    totals["writer_calls"] = int((run.summary or {}).get("writer_calls", 0))
    return {"estimated": False, "basis": basis, "stages": stages, "totals": totals}


def _estimated_scratch(session: Session, report: Report) -> dict[str, Any]:
    """The from-scratch cost of a report no run researched from scratch, estimated from
    its newest version (see ``scratch_cost``)."""
    cfg, _problems = ReportSettings.salvage(report.settings)  # an estimate to show
    versions = versions_of(session, report.id)
    if not versions:
        zero = dict.fromkeys((*METER_FIELDS, "writer_calls"), 0)
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
    writer = cfg.writer or settings.llm
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
         "searches": 0, "fetches": 0, "usd": 0.0, "writer_calls": 1},
        {"stage": "search", "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
         "searches": cfg.queries + len(sections), "fetches": 0, "usd": 0.0},
        {"stage": "fetch", "llm_calls": 0, "tokens_in": 0, "tokens_out": 0,
         "searches": 0, "fetches": max(len(cited), pool), "usd": 0.0},
        {"stage": "write", "llm_calls": (calls - 1) if llm else 0, "tokens_in": tokens_in,
         "tokens_out": tokens_out, "searches": 0, "fetches": 0, "usd": usd,
         "writer_calls": calls - 1},
    ]  # fmt: skip
    for stage in stages:  # not measured: ``scratch_baseline`` puts it at a run's pace
        stage["seconds"] = 0.0
    totals = _totals(stages)
    totals["writer_calls"] = calls
    return {
        "estimated": True,
        "basis": f"estimate for {len(sections)} sections and {pool} sources in the pool",
        "stages": stages,
        "totals": totals,
    }


SCRATCH_KEY = "scratch"  # in an update run's summary: the from-scratch baseline at its end


def _pace(stages: Sequence[Mapping[str, Any]], writer_calls: int) -> dict[str, float] | None:
    """A run's seconds per fetch, per search and per writer call (None: nothing measured)."""
    fetch = [s for s in stages if s.get("fetches")]
    search = [s for s in stages if s.get("searches") and not s.get("fetches")]
    other = [s for s in stages if s not in fetch and s not in search]
    fetches = sum(s["fetches"] for s in fetch)
    searches = sum(s["searches"] for s in search)
    if not (fetches or searches or writer_calls):
        return None
    return {
        "fetches": sum(s["seconds"] for s in fetch) / fetches if fetches else 0.0,
        "searches": sum(s["seconds"] for s in search) / searches if searches else 0.0,
        "writer_calls": sum(s["seconds"] for s in other) / writer_calls if writer_calls else 0.0,
    }


def scratch_baseline(session: Session, run: UpdateRun) -> dict[str, Any]:
    """The from-scratch baseline for ``run``, as it stands now: ``scratch_cost``, with an
    estimate's time put at this run's own pace (seconds per fetch, search, writer call)."""
    scratch = scratch_cost(session, run.report_id, run.as_of)
    if scratch["estimated"]:
        writer_calls = int((run.summary or {}).get("writer_calls", 0))
        pace = _pace(cost_by_stage(session, run.id), writer_calls)
        if pace is not None:
            for stage in scratch["stages"]:
                stage["seconds"] = round(sum(stage.get(k, 0) * v for k, v in pace.items()), 3)
            scratch["totals"]["seconds"] = round(sum(s["seconds"] for s in scratch["stages"]), 3)
            scratch["basis"] += ", its time at this update's pace"
    return scratch
