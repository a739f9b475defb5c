"""Reading and writing report state: versions ⇄ ReportDoc, the evidence pool.

The one place that knows how a version's sections, citations and the pool's
stable markers fit together; research, update, review and the doors (CLI, app)
all go through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from core.claims import (
    ClaimPlan,
    anchor_body,
    citation_snapshots,
    claim_counts,
    stale_count,
    write_claims,
)
from core.dates import as_utc, day
from core.errors import EvergreenError, NotFoundError
from core.models import (
    Citation,
    Claim,
    PoolEntry,
    Report,
    ReportVersion,
    Section,
    Snapshot,
    Source,
    UpdateRun,
)
from core.report_state import RefEntry, ReportDoc, SectionDoc
from core.sources.base import canonical_url


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


# -- the evidence pool ----------------------------------------------------------------
def get_or_create_source(session: Session, url: str, title: str = "") -> Source:
    url = canonical_url(url)
    source = session.exec(select(Source).where(Source.url == url)).first()
    if source is None:
        source = Source(url=url, title=title)
        session.add(source)
        session.flush()
    elif title and not source.title:
        source.title = title
    return source


def pool_of(session: Session, report_id: int) -> list[PoolEntry]:
    return list(
        session.exec(
            select(PoolEntry)
            .where(PoolEntry.report_id == report_id)
            .order_by(col(PoolEntry.marker))
        )
    )


def pool_snapshots(session: Session, report_id: int, as_of: datetime) -> dict[int, int]:
    """marker → the newest snapshot (with content) of that source as of ``as_of``."""
    out: dict[int, int] = {}
    for entry in pool_of(session, report_id):
        snap = session.exec(
            select(Snapshot)
            .where(
                Snapshot.source_id == entry.source_id,
                col(Snapshot.content).is_not(None),
                col(Snapshot.as_of) <= as_of,
            )
            .order_by(col(Snapshot.as_of).desc(), col(Snapshot.id).desc())
        ).first()
        if snap is not None:
            out[entry.marker] = snap.id
    return out


def pool_entry(
    session: Session, report: Report, source: Source, marker: int | None = None
) -> PoolEntry:
    """The source's place in the report's pool, allocating a stable marker once."""
    entry = session.exec(
        select(PoolEntry).where(PoolEntry.report_id == report.id, PoolEntry.source_id == source.id)
    ).first()
    if entry is None:
        if marker is None:
            marker = report.next_marker
        entry = PoolEntry(report_id=report.id, source_id=source.id, marker=marker)
        report.next_marker = max(report.next_marker, marker + 1)
        session.add(entry)
        session.add(report)
        session.flush()
    return entry


def newest_snapshot(session: Session, source_id: int) -> Snapshot | None:
    return session.exec(
        select(Snapshot)
        .where(Snapshot.source_id == source_id, col(Snapshot.content).is_not(None))
        .order_by(col(Snapshot.id).desc())
    ).first()


def snapshot_history(session: Session, source_id: int) -> list[Snapshot]:
    return list(
        session.exec(
            select(Snapshot).where(Snapshot.source_id == source_id).order_by(col(Snapshot.id))
        )
    )


# -- committing a version --------------------------------------------------------------
@dataclass
class SectionDraft:
    """A section as it will be committed, with the status against the parent.

    ``claims`` are the section's anchored claims when the caller already knows them (an
    update carries checked claims forward); otherwise every cited sentence is anchored in
    the snapshot its marker resolves to, using the writer's ``quotes`` as hints.
    """

    doc: SectionDoc
    status: str = "new"
    claims: list[ClaimPlan] | None = None
    quotes: list[dict[str, Any]] = field(default_factory=list)


def commit_version(
    session: Session,
    report: Report,
    *,
    title: str,
    drafts: Sequence[SectionDraft],
    as_of: datetime,
    markers: Mapping[int, int],
    run: UpdateRun | None = None,
    metrics: dict[str, Any] | None = None,
) -> ReportVersion:
    """Write the next immutable version: sections, their citations and their claims.

    ``markers`` maps each citation marker to the newest snapshot id it may resolve to;
    every marker cited in a body must be there (no citation without evidence). A section's
    citation points at the snapshot its claims are anchored in, which is older than the
    newest when a stale claim still rests on it.
    """
    parent = latest_version(session, report.id)
    if parent is not None and as_utc(as_of) < as_utc(parent.as_of):
        raise EvergreenError(
            f"As-of {day(as_of)} is earlier than version {parent.number}'s ({day(parent.as_of)})."
        )
    number = (parent.number + 1) if parent else 1
    snaps = {m: session.get(Snapshot, sid) for m, sid in markers.items()}
    plans: list[list[ClaimPlan]] = []
    for d in drafts:
        if d.claims is not None:
            plans.append(list(d.claims))
        else:
            cited_here = {m: snaps[m] for m in d.doc.markers if snaps.get(m) is not None}
            plans.append(anchor_body(d.doc.body, cited_here, d.quotes))
    version = ReportVersion(
        report_id=report.id,
        number=number,
        as_of=as_of,
        parent_id=parent.id if parent else None,
        run_id=run.id if run else None,
        title=title,
        metrics={**(metrics or {}), "claims": claim_counts(c.state for p in plans for c in p)},
        stale_citations=sum(stale_count(p) for p in plans),
    )
    session.add(version)
    session.flush()
    for order, (draft, claims) in enumerate(zip(drafts, plans, strict=True)):
        section = Section(
            version_id=version.id,
            key=draft.doc.key,
            heading=draft.doc.heading,
            level=draft.doc.level,
            order=order,
            body=draft.doc.body,
            status=draft.status,
        )
        session.add(section)
        session.flush()
        cited = citation_snapshots(claims, markers)
        for marker in draft.doc.markers:
            if marker in cited:  # a bare [n] with no reference stays text, as parsed
                session.add(
                    Citation(section_id=section.id, snapshot_id=cited[marker], marker=marker)
                )
        write_claims(session, section.id, claims)
    session.flush()
    if run is not None:
        run.version_id = version.id
        session.add(run)
    return version


def claims_of_version(session: Session, version_id: int) -> list[tuple[Section, Claim]]:
    """Every claim of a committed version, with its section, in reading order."""
    rows = session.exec(
        select(Section, Claim)
        .join(Claim, col(Claim.section_id) == Section.id)
        .where(Section.version_id == version_id)
        .order_by(col(Section.order), col(Claim.position), col(Claim.marker))
    ).all()
    return [(section, claim) for section, claim in rows]


def outline_of(sections: Iterable[SectionDoc]) -> list[tuple[int, str]]:
    return [(s.level, s.heading) for s in sections if s.level >= 1]
