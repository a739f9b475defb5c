"""A new report's creation as a run: validate the question and register the report with
its create (or rebuild) run, do the research (``core.engine.research``) and commit version 1,
and read a create done elsewhere back as its result."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.dates import as_utc, utcnow
from core.domain.report_settings import ReportSettings, settings_of
from core.domain.validation import check_as_of, clean_question, clean_title
from core.engine.costs import run_cost
from core.engine.research import research
from core.engine.run_work import run_work
from core.engine.runs import start_run
from core.errors import EvergreenError
from core.sources.registry import Providers, check_source, providers_for
from core.states import RunStatus
from core.store.db import session_scope
from core.store.models import Report, ReportVersion, UpdateRun
from core.writers import get_writer


def _short(question: str, limit: int = 120) -> str:
    """A question as a default title: whole, or cut after a word with an ellipsis."""
    if len(question) <= limit:
        return question
    return question[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def create_report(
    question: str,
    *,
    title: str | None = None,
    as_of: datetime | None = None,
    source: str = "sample",
    settings: dict[str, Any] | None = None,
    baseline_of: int | None = None,
) -> dict[str, Any]:
    """Research a new report from scratch and commit version 1 (CLI `create`)."""
    run_id = begin_create(
        question,
        title=title,
        as_of=as_of,
        source=source,
        settings=settings,
        baseline_of=baseline_of,
    )
    return execute_create(run_id)


def begin_create(
    question: str,
    *,
    title: str | None = None,
    as_of: datetime | None = None,
    source: str = "sample",
    settings: dict[str, Any] | None = None,
    baseline_of: int | None = None,
) -> int:
    """Validate, then register the new report and its create (or rebuild) run; returns
    the run's id at once (work not started: ``execute_create`` does it, here or on a
    worker). The report is listed from now on, with its run's progress."""
    question = clean_question(question)
    source = check_source(source)
    stored = ReportSettings.parse(settings or {}).to_stored(settings)
    when = check_as_of(as_of) or utcnow()
    with session_scope() as session:
        report = Report(
            title=clean_title(title or _short(question)),
            query=question,
            source=source,
            settings=stored,
            baseline_of=baseline_of,
        )
        session.add(report)
        session.flush()
        report_id = report.id
    return start_run(report_id, "rebuild" if baseline_of else "create", when, None)


def execute_create(run_id: int, *, lease: int | None = None) -> dict[str, Any]:
    """Do the research of a registered create run and commit version 1. ``lease``: the
    one the worker took the run with (a worker that took it over since wins). Creation
    has no checkpoints to resume from: a create whose worker died starts over on the same
    report (pages it fetched are stored once)."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        report_id, when = run.report_id, as_utc(run.as_of)
        source = session.get(Report, report_id).source
    providers: Providers | None = None
    try:
        with run_work(run_id, lease) as (session, run, meter):
            providers = providers_for(source)  # a provider failure fails the run, visibly
            report = session.get(Report, report_id)
            writer = get_writer(settings_of(report.settings).writer)
            result = research(session, report, run, meter, providers, writer, when)
            run.summary = {
                **run.summary,
                "created": {"sections": result["sections"], "sources": result["sources"]},
            }
            cost = meter.totals()
    finally:
        if providers is not None:
            providers.close()
    return {**result, "cost": cost}


def create_result(run_id: int) -> dict[str, Any]:
    """What ``create_report`` returns, read back from the database for a create done
    elsewhere (a queue worker): the CLI's `create --json` contract."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        if run.status != RunStatus.COMMITTED or run.version_id is None:
            raise EvergreenError(run.error or f"Run {run_id} is {run.status}.")
        version = session.get(ReportVersion, run.version_id)
        created = (run.summary or {}).get("created", {})
        totals = run_cost(session, run.id)
        return {
            "report_id": run.report_id,
            "version": version.number,
            "sections": created.get("sections"),
            "sources": created.get("sources"),
            "run_id": run.id,
            "claims": (version.metrics or {}).get("claims"),
            "cost": {
                k: totals[k]
                for k in ("llm_calls", "tokens_in", "tokens_out", "searches", "fetches", "seconds")
            },
        }
