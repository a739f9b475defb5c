"""Reading report state: reports and their versions ⇄ ReportDoc.

The one place that knows how a committed version's sections and citations come back
as a report; research, update, review and the doors (CLI, app) read through here
(the evidence pool: ``core.store.pool``; writing a version: ``core.engine.version_commit``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlmodel import Session, col, select

from core.dates import day
from core.domain.report_state import RefEntry, ReportDoc, SectionDoc
from core.errors import NotFoundError
from core.store.models import Citation, Claim, Report, ReportVersion, Section, Snapshot, Source


# -- reports and versions ------------------------------------------------------------
def get_report(session: Session, ref: int | str) -> Report:
    """A report by id (or exact title); a clear error otherwise."""
    report: Report | None = None
    text = str(ref).strip()
    if text.isdigit():
        report = session.get(Report, int(text))
    if report is None:
        report = session.exec(select(Report).where(Report.title == text)).first()
    if report is None:
        raise NotFoundError(f"No report {text!r}. `evergreen list` shows the reports.")
    return report


def list_reports(session: Session, *, include_baselines: bool = False) -> list[Report]:
    stmt = select(Report).order_by(col(Report.id))
    if not include_baselines:
        stmt = stmt.where(col(Report.baseline_of).is_(None))
    return list(session.exec(stmt))


def versions_of(session: Session, report_id: int) -> list[ReportVersion]:
    return list(
        session.exec(
            select(ReportVersion)
            .where(ReportVersion.report_id == report_id)
            .order_by(col(ReportVersion.number))
        )
    )


def latest_version(session: Session, report_id: int) -> ReportVersion | None:
    return session.exec(
        select(ReportVersion)
        .where(ReportVersion.report_id == report_id)
        .order_by(col(ReportVersion.number).desc())
    ).first()


def get_version(session: Session, report: Report, number: int | None = None) -> ReportVersion:
    if number is None:
        version = latest_version(session, report.id)
        if version is None:
            raise NotFoundError(f"Report {report.id} has no committed version yet.")
        return version
    version = session.exec(
        select(ReportVersion).where(
            ReportVersion.report_id == report.id, ReportVersion.number == number
        )
    ).first()
    if version is None:
        numbers = [v.number for v in versions_of(session, report.id)]
        raise NotFoundError(f"Report {report.id} has no version {number} (versions: {numbers}).")
    return version


def sections_of(session: Session, version_id: int) -> list[Section]:
    return list(
        session.exec(
            select(Section).where(Section.version_id == version_id).order_by(col(Section.order))
        )
    )


def citations_of(session: Session, version_id: int) -> dict[int, Snapshot]:
    """marker → the snapshot the version cites for it (the oldest, when a stale claim in
    one section still rests on an older snapshot than another section cites)."""
    rows = session.exec(
        select(Citation.marker, Snapshot)
        .join(Section, col(Section.id) == Citation.section_id)
        .join(Snapshot, col(Snapshot.id) == Citation.snapshot_id)
        .where(Section.version_id == version_id)
        .order_by(col(Snapshot.id).desc())
    ).all()
    return {marker: snap for marker, snap in rows}


def reference_for(session: Session, marker: int, snap: Snapshot) -> RefEntry:
    source = session.get(Source, snap.source_id)
    assert source is not None
    return RefEntry(
        marker=marker,
        url=source.url,
        title=snap.title or source.title or source.url,
        fetched=day(snap.as_of) or None,
    )


def load_doc(session: Session, version: ReportVersion) -> ReportDoc:
    """The structured state of a committed version."""
    sections = [
        SectionDoc(key=s.key, heading=s.heading, level=s.level, body=s.body)
        for s in sections_of(session, version.id)
    ]
    refs = [
        reference_for(session, m, snap)
        for m, snap in sorted(citations_of(session, version.id).items())
    ]
    return ReportDoc(title=version.title, sections=sections, references=refs)


def claims_of_version(session: Session, version_id: int) -> list[tuple[Section, Claim]]:
    """Every claim of a committed version, with its section, in reading order. The
    sections are read once, not once per claim: a row per claim carrying its section's
    body made reading a 10,000-claim version quadratic (minutes, gigabytes)."""
    sections = {
        s.id: s for s in session.exec(select(Section).where(Section.version_id == version_id))
    }
    claims = session.exec(
        select(Claim)
        .join(Section, col(Claim.section_id) == Section.id)
        .where(Section.version_id == version_id)
        .order_by(col(Section.order), col(Claim.position), col(Claim.marker))
    ).all()
    return [(sections[claim.section_id], claim) for claim in claims]


def outline_of(sections: Iterable[SectionDoc]) -> list[tuple[int, str]]:
    return [(s.level, s.heading) for s in sections if s.level >= 1]


def brief_title(title: str, limit: int = 50) -> str:
    """A report's title for a one-line message: cut after a whole word, with "…"."""
    if len(title) <= limit:
        return title
    head = title[: limit + 1].rsplit(" ", 1)[0] if " " in title[:limit] else title[:limit]
    return head.rstrip(" ,;:-–—") + "…"
