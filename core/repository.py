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

from sqlalchemy import delete, func, update
from sqlmodel import Session, col, select

from core.claims import (
    ClaimPlan,
    anchor_body,
    citation_snapshots,
    claim_counts,
    stale_count,
    write_claims,
)
from core.dates import as_utc, day, utcnow
from core.errors import EvergreenError, NotFoundError
from core.models import (
    CheckUse,
    Citation,
    Claim,
    CostEvent,
    PoolEntry,
    Report,
    ReportVersion,
    Section,
    SectionProposal,
    Snapshot,
    Source,
    SourceCheck,
    UpdateRun,
)
from core.report_state import RefEntry, ReportDoc, SectionDoc
from core.sources.base import canonical_url
from core.states import RunStatus


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


# -- archiving and deleting a report ---------------------------------------------------
def archived_report_ids(session: Session) -> set[int]:
    """The reports an analyst archived (hidden from the list, kept whole)."""
    stmt = select(Report.id).where(col(Report.archived_at).is_not(None))
    return {int(rid) for rid in session.exec(stmt) if rid is not None}


def archive_report(session: Session, report: Report) -> Report:
    """Hide the report from the Reports list and the update schedule; nothing is deleted.
    Archiving an archived report changes nothing."""
    if report.archived_at is None:
        report.archived_at = utcnow()
        session.add(report)
        session.flush()
    return report


def unarchive_report(session: Session, report: Report) -> Report:
    """Bring an archived report back to the list (and its schedule, if it has one)."""
    if report.archived_at is not None:
        report.archived_at = None
        session.add(report)
        session.flush()
    return report


def _with_baselines(session: Session, report_id: int) -> list[int]:
    """The report and every from-scratch baseline rebuilt for it (and theirs)."""
    ids = [report_id]
    frontier = [report_id]
    while frontier:
        found = session.exec(select(Report.id).where(col(Report.baseline_of).in_(frontier)))
        frontier = [int(i) for i in found if i is not None and i not in ids]
        ids += frontier
    return ids


def _refuse_working_runs(session: Session, report: Report, report_ids: list[int]) -> None:
    """One clear refusal when a worker is still on a run of these reports."""
    from core.run_liveness import run_state

    runs = session.exec(
        select(UpdateRun).where(
            col(UpdateRun.report_id).in_(report_ids),
            col(UpdateRun.status).in_((RunStatus.RUNNING, RunStatus.CANCELLING)),
        )
    )
    for run in runs:
        if run_state(run) in (RunStatus.RUNNING, RunStatus.CANCELLING):
            whose = "" if run.report_id == report.id else f" (its baseline {run.report_id})"
            raise EvergreenError(
                f"Run {run.id} of report {report.id}{whose} is in progress: cancel it or "
                "wait for it to finish, then delete the report."
            )


def _ids(session: Session, stmt: Any) -> set[int]:
    return {int(i) for i in session.exec(stmt) if i is not None}


def _snapshots_still_used(session: Session, candidates: set[int]) -> set[int]:
    """Of ``candidates`` (snapshots the deleted runs made), those something outside them
    still points at — another report's claims, citations or pool — with the earlier
    snapshots they descend from."""
    if not candidates:
        return set()
    kept = _ids(session, select(Claim.snapshot_id).where(col(Claim.snapshot_id).in_(candidates)))
    kept |= _ids(
        session, select(Citation.snapshot_id).where(col(Citation.snapshot_id).in_(candidates))
    )
    kept |= _ids(
        session,
        select(PoolEntry.latest_snapshot_id).where(
            col(PoolEntry.latest_snapshot_id).in_(candidates)
        ),
    )
    kept |= _ids(
        session,
        select(Snapshot.previous_id).where(
            col(Snapshot.previous_id).in_(candidates), col(Snapshot.id).not_in(candidates)
        ),
    )
    frontier = set(kept)
    while frontier:  # a kept snapshot keeps the one it was compared with
        parents = _ids(session, select(Snapshot.previous_id).where(col(Snapshot.id).in_(frontier)))
        frontier = (parents & candidates) - kept
        kept |= frontier
    return kept


def _delete_rows(session: Session, model: Any, where: Any) -> int:
    """Delete rows through the table, not the ORM: a committed version's rows refuse an
    ORM delete (core.db), and a whole report leaving is the one time they go."""
    result = session.execute(delete(model.__table__).where(where))
    return int(result.rowcount or 0)


@dataclass
class _Owned:
    """The rows a set of reports owns, by id: what deleting them takes."""

    reports: list[int]
    versions: set[int]
    sections: set[int]
    runs: set[int]
    snapshots: set[int]  # made by the runs (some may stay: another report uses them)
    sources: set[int]  # in the pools or behind those snapshots (some may stay)


def _runless_in_use(session: Session, report_ids: list[int], sections: set[int]) -> set[int]:
    """The snapshots the reports use that no run owns any more (their run's report was
    deleted while these reports still used them), with the run-less ones they descend
    from: the reports now own them, so deleting the last of them leaves nothing behind."""
    used = _ids(session, select(Citation.snapshot_id).where(col(Citation.section_id).in_(sections)))
    used |= _ids(session, select(Claim.snapshot_id).where(col(Claim.section_id).in_(sections)))
    used |= _ids(
        session,
        select(PoolEntry.latest_snapshot_id).where(col(PoolEntry.report_id).in_(report_ids)),
    )
    found: set[int] = set()
    frontier = used - {0}
    while frontier:
        rows = session.exec(
            select(Snapshot.id, Snapshot.previous_id).where(
                col(Snapshot.id).in_(frontier), col(Snapshot.run_id).is_(None)
            )
        ).all()
        found |= {int(i) for i, _ in rows}
        frontier = {int(p) for _, p in rows if p is not None} - found
    return found


def _owned(session: Session, report_ids: list[int]) -> _Owned:
    versions = _ids(
        session, select(ReportVersion.id).where(col(ReportVersion.report_id).in_(report_ids))
    )
    runs = _ids(session, select(UpdateRun.id).where(col(UpdateRun.report_id).in_(report_ids)))
    made = _ids(session, select(Snapshot.id).where(col(Snapshot.run_id).in_(runs)))
    sections = _ids(session, select(Section.id).where(col(Section.version_id).in_(versions)))
    made |= _runless_in_use(session, report_ids, sections)
    sources = _ids(
        session, select(PoolEntry.source_id).where(col(PoolEntry.report_id).in_(report_ids))
    )
    sources |= _ids(session, select(Snapshot.source_id).where(col(Snapshot.id).in_(made)))
    return _Owned(
        reports=report_ids,
        versions=versions,
        sections=sections,
        runs=runs,
        snapshots=made,
        sources=sources,
    )


def delete_report(session: Session, report: Report) -> dict[str, int]:
    """Delete a report for good: its versions (sections, citations, claims), runs (their
    proposals and cost events), evidence pool, the snapshots its runs fetched that no other
    report uses, sources left with nothing, and the baselines rebuilt for it.

    Refused while a worker is on one of its runs (one clear message, nothing deleted).
    Returns how many reports, versions, runs, snapshots and sources were deleted."""
    report_ids = _with_baselines(session, int(report.id or 0))
    _refuse_working_runs(session, report, report_ids)
    owned = _owned(session, report_ids)
    session.flush()
    _delete_content(session, owned)  # in the order the foreign keys allow
    _delete_checks(session, owned)
    snapshots = _delete_snapshots(session, owned.snapshots)
    runs = _delete_runs(session, owned.runs)
    versions = _delete_rows(session, ReportVersion, col(ReportVersion.id).in_(owned.versions))
    reports = _delete_rows(session, Report, col(Report.id).in_(report_ids))
    sources = _delete_orphan_sources(session, owned.sources)
    session.expunge_all()  # deleted under the ORM's feet: nothing stale stays in the session
    return {
        "reports": reports,
        "versions": versions,
        "runs": runs,
        "snapshots": snapshots,
        "sources": sources,
    }


def _delete_content(session: Session, owned: _Owned) -> None:
    """The versions' claims, citations and sections, and the reports' pool entries."""
    _delete_rows(session, Claim, col(Claim.section_id).in_(owned.sections))
    _delete_rows(session, Citation, col(Citation.section_id).in_(owned.sections))
    _delete_rows(session, Section, col(Section.id).in_(owned.sections))
    _delete_rows(session, PoolEntry, col(PoolEntry.report_id).in_(owned.reports))


def _delete_checks(session: Session, owned: _Owned) -> None:
    """The shared pool's record of the reports: what their checks served them goes; a
    check they made that another report used stays (no longer tied to a run) unless the
    snapshot it names goes too."""
    _delete_rows(session, CheckUse, col(CheckUse.report_id).in_(owned.reports))
    _delete_rows(session, CheckUse, col(CheckUse.run_id).in_(owned.runs))
    doomed = owned.snapshots - _snapshots_still_used(session, owned.snapshots)
    gone = _ids(session, select(SourceCheck.id).where(col(SourceCheck.snapshot_id).in_(doomed)))
    _delete_rows(session, CheckUse, col(CheckUse.check_id).in_(gone))
    _delete_rows(session, SourceCheck, col(SourceCheck.id).in_(gone))
    session.execute(
        update(SourceCheck.__table__)
        .where(col(SourceCheck.run_id).in_(owned.runs))
        .values(run_id=None)
    )


def _delete_runs(session: Session, run_ids: set[int]) -> int:
    """The runs with their proposals and cost events; returns how many runs."""
    _delete_rows(session, SectionProposal, col(SectionProposal.run_id).in_(run_ids))
    _delete_rows(session, CostEvent, col(CostEvent.run_id).in_(run_ids))
    return _delete_rows(session, UpdateRun, col(UpdateRun.id).in_(run_ids))


def _delete_snapshots(session: Session, made: set[int]) -> int:
    """Delete the snapshots the deleted runs made, except those another report still uses:
    those stay, no longer tied to a run. Returns how many were deleted."""
    kept = _snapshots_still_used(session, made)
    if kept:
        session.execute(
            update(Snapshot.__table__).where(col(Snapshot.id).in_(kept)).values(run_id=None)
        )
    return _delete_rows(session, Snapshot, col(Snapshot.id).in_(made - kept))


def _delete_orphan_sources(session: Session, source_ids: set[int]) -> int:
    """Delete, of ``source_ids``, the sources no snapshot and no pool entry points at
    (with the checks of them that read nothing: a page gone or unreachable)."""
    if not source_ids:
        return 0
    used = _ids(session, select(Snapshot.source_id).where(col(Snapshot.source_id).in_(source_ids)))
    used |= _ids(
        session, select(PoolEntry.source_id).where(col(PoolEntry.source_id).in_(source_ids))
    )
    orphans = source_ids - used
    checks = _ids(session, select(SourceCheck.id).where(col(SourceCheck.source_id).in_(orphans)))
    _delete_rows(session, CheckUse, col(CheckUse.check_id).in_(checks))
    _delete_rows(session, SourceCheck, col(SourceCheck.id).in_(checks))
    return _delete_rows(session, Source, col(Source.id).in_(orphans))


def deletion_preview(session: Session, report: Report) -> dict[str, int]:
    """What deleting the report would remove: its versions, runs, pool sources and the
    baselines rebuilt for it (for a confirmation message)."""
    report_ids = _with_baselines(session, int(report.id or 0))

    def count(model: Any, column: Any) -> int:
        stmt = select(func.count()).select_from(model).where(col(column).in_(report_ids))
        return int(session.exec(stmt).one())

    return {
        "versions": count(ReportVersion, ReportVersion.report_id),
        "runs": count(UpdateRun, UpdateRun.report_id),
        "sources": count(PoolEntry, PoolEntry.report_id),
        "baselines": len(report_ids) - 1,
    }


def brief_title(title: str, limit: int = 50) -> str:
    """A report's title for a one-line message: cut after a whole word, with "…"."""
    if len(title) <= limit:
        return title
    head = title[: limit + 1].rsplit(" ", 1)[0] if " " in title[:limit] else title[:limit]
    return head.rstrip(" ,;:-–—") + "…"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def deletion_message(report: Report, preview: Mapping[str, int]) -> str:
    """One sentence saying what deleting ``report`` removes (``deletion_preview``)."""
    parts = [
        _count(preview["versions"], "version"),
        _count(preview["runs"], "run"),
        _count(preview["sources"], "pooled source"),
    ]
    if preview["baselines"]:
        parts.append(_count(preview["baselines"], "baseline"))
    return (
        f"Deleting report {report.id} ({brief_title(report.title, 40)!r}) removes "
        f"{', '.join(parts[:-1])} and {parts[-1]} for good (pages other reports cite stay)."
    )
