"""Deleting a report for good: what it owns, what other reports still use, the rows
removed in the order the foreign keys allow, and the confirmation it shows first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, update
from sqlmodel import Session, col, select

from core.engine.run_liveness import run_state
from core.errors import EvergreenError
from core.states import RunStatus
from core.store.models import (
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
from core.store.repository import brief_title


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
    ORM delete (core.store.db), and a whole report leaving is the one time they go."""
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
