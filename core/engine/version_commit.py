"""Committing a version: the next immutable version of a report, with its sections,
their citations and their anchored claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from core.dates import as_utc, day
from core.domain.report_state import SectionDoc
from core.engine.claims import (
    ClaimPlan,
    anchor_body,
    citation_snapshots,
    claim_counts,
    stale_count,
    write_claims,
)
from core.errors import EvergreenError
from core.store.models import Citation, Report, ReportVersion, Section, Snapshot, UpdateRun
from core.store.repository import latest_version


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
    committed_by: str | None = None,
) -> ReportVersion:
    """Write the next immutable version: sections, their citations and their claims.

    ``markers`` maps each citation marker to the newest snapshot id it may resolve to;
    every marker cited in a body must be there (no citation without evidence). A section's
    citation points at the snapshot its claims are anchored in, which is older than the
    newest when a stale claim still rests on it.
    """
    parent = _parent_for(session, report, as_of)
    number = (parent.number + 1) if parent else 1
    plans = _claim_plans(session, drafts, markers)
    version = ReportVersion(
        report_id=report.id,
        number=number,
        as_of=as_of,
        parent_id=parent.id if parent else None,
        run_id=run.id if run else None,
        title=title,
        metrics={**(metrics or {}), "claims": claim_counts(c.state for p in plans for c in p)},
        stale_citations=sum(stale_count(p) for p in plans),
        committed_by=committed_by,
    )
    session.add(version)
    session.flush()
    for order, (draft, claims) in enumerate(zip(drafts, plans, strict=True)):
        _write_section(session, version, order, draft, claims, markers)
    session.flush()
    if run is not None:
        run.version_id = version.id
        session.add(run)
    return version


def _parent_for(session: Session, report: Report, as_of: datetime) -> ReportVersion | None:
    """The report's latest version, the new one's parent (None for a first version);
    refused when ``as_of`` is earlier than the parent's."""
    parent = latest_version(session, report.id)
    if parent is not None and as_utc(as_of) < as_utc(parent.as_of):
        raise EvergreenError(
            f"As-of {day(as_of)} is earlier than version {parent.number}'s ({day(parent.as_of)})."
        )
    return parent


def _claim_plans(
    session: Session, drafts: Sequence[SectionDraft], markers: Mapping[int, int]
) -> list[list[ClaimPlan]]:
    """Each draft's claims: the ones it carries, or its cited sentences anchored in the
    snapshots their markers resolve to."""
    snaps = {m: session.get(Snapshot, sid) for m, sid in markers.items()}
    plans: list[list[ClaimPlan]] = []
    for d in drafts:
        if d.claims is not None:
            plans.append(list(d.claims))
        else:
            cited_here = {m: snaps[m] for m in d.doc.markers if snaps.get(m) is not None}
            plans.append(anchor_body(d.doc.body, cited_here, d.quotes))
    return plans


def _write_section(
    session: Session,
    version: ReportVersion,
    order: int,
    draft: SectionDraft,
    claims: list[ClaimPlan],
    markers: Mapping[int, int],
) -> None:
    """One section of the version, with its citations and its claims."""
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
            session.add(Citation(section_id=section.id, snapshot_id=cited[marker], marker=marker))
    write_claims(session, section.id, claims)
