"""Read models of reports: the Reports screen's cards, the sources and "as of" dates a
report can use, and what the Settings screen shows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.app.run_views import run_brief
from core.app.services import report_rows
from core.dates import as_utc, day
from core.domain.labels import report_status_label, run_status_label
from core.domain.report_settings import ReportSettings
from core.engine.runs import open_run_for
from core.engine.schedule import next_due
from core.errors import EvergreenError, NotFoundError
from core.source_spec import SourceSpec
from core.sources.corpus import Corpus, list_corpora
from core.states import OPEN_RUN_STATUSES
from core.store.models import Report, UpdateRun
from core.store.repository import versions_of

OPEN_STATUSES = OPEN_RUN_STATUSES


def report_of(session: Session, report_id: int) -> Report:
    report = session.get(Report, int(report_id))
    if report is None:
        raise NotFoundError(f"No report {report_id}.")
    return report


def report_cards(session: Session) -> list[dict[str, Any]]:
    """What the Reports screen lists: report_rows plus the open run and the schedule."""
    cards = []
    for row in report_rows(session):
        report = session.get(Report, row["id"])
        run = open_run_for(session, row["id"])
        if run is None:  # a create run (no version yet) is not an "open" update run
            latest = session.exec(
                select(UpdateRun)
                .where(UpdateRun.report_id == row["id"])
                .order_by(col(UpdateRun.id).desc())
            ).first()
            run = latest if latest is not None and latest.status in OPEN_STATUSES else None
        try:
            due = next_due(session, report)
        except EvergreenError:  # unreadable stored settings: the Settings screen says why
            due = None
        last = row["last_update"]
        cards.append(
            {
                **row,
                "status_label": report_status_label(row.get("status")),
                "last_run_status_label": run_status_label(row.get("last_run_status")),
                "last_update": f"{last[:10]} {last[11:16]} UTC" if last else None,
                "open_run": run_brief(run),
                "every_days": ReportSettings.salvage(report.settings)[0].every_days,
                "next_due": day(due) if due else None,
                "temporal": temporal_source(row["source"]),
            }
        )
    return cards


def temporal_source(source: str) -> bool:
    """Can the source read pages as of a past date? (False for a setting that does not
    parse: the screens offer it no dates.)"""
    try:
        return SourceSpec.parse(source).temporal
    except EvergreenError:
        return False


def source_choices() -> list[str]:
    """Sources a new report can use: the sample, each local corpus, the web."""
    sample = SourceSpec("sample")
    corpora = [
        SourceSpec.of_corpus(c["name"])
        for c in list_corpora()
        if c["name"] != sample.corpus_name and not c.get("error")
    ]
    return [str(spec) for spec in (sample, *corpora, SourceSpec("web"))]


def as_of_choices(source: str, after: datetime | None = None) -> list[str]:
    """Snapshot dates (YYYY-MM-DD) a temporal corpus offers as "as of" choices, later
    than ``after``; [] for a source that is not a temporal corpus."""
    try:
        name = SourceSpec.parse(source).corpus_name
    except EvergreenError:
        return []
    if name is None:  # the web: pages only as they are now
        return []
    try:
        corpus = Corpus.open(name)
    except EvergreenError:
        return []
    try:
        stamps = corpus.snapshot_dates()
    finally:
        corpus.close()
    out: list[str] = []
    for stamp in stamps:
        when = as_utc(datetime.fromisoformat(stamp.replace("Z", "+00:00")))
        if after is not None and when.date() <= as_utc(after).date():
            continue
        if day(when) not in out:
            out.append(day(when))
    return out


def update_as_of_choices(session: Session, report_id: int) -> list[str]:
    """As-of choices for "Update now": snapshot dates after the current version."""
    report = report_of(session, report_id)
    versions = versions_of(session, report_id)
    after = versions[-1].as_of if versions else None
    return as_of_choices(report.source, after)


def providers_of(source: str) -> dict[str, str]:
    """Which search provider and fetcher a report's source uses (for display)."""
    try:
        spec = SourceSpec.parse(source)
    except EvergreenError:
        return {"search": "none", "fetch": "none"}
    if spec.kind == "web":
        return {"search": "Tavily web search", "fetch": "crawl4ai / HTTP"}
    name = spec.corpus_name
    return {"search": f"local corpus '{name}' (BM25, as of a date)", "fetch": "local corpus"}


def report_settings(session: Session, report_id: int) -> dict[str, Any]:
    """What the Settings screen shows for a report: its settings (an invalid stored value
    at its default), ``problems`` (one line per invalid stored value, the same lines
    ``evergreen settings`` prints), the source and its providers."""
    report = report_of(session, report_id)
    settings, problems = ReportSettings.salvage(report.settings)
    return {
        **settings.model_dump(),
        "problems": problems,
        "source": report.source,
        "providers": providers_of(report.source),
    }
