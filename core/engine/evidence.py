"""The evidence pool: refresh what a report cites (discovering what is new:
``core.engine.discovery``; fetching pages: ``core.engine.fetching``; storing them:
``core.store.snapshot_store``).

Refresh re-fetches each cited source once, concurrently: an identical hash is
``unchanged`` (no similarity, no diff); otherwise the change is classified
(changed / material / minor) with a claim-level diff; a missing page is
``gone``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session

from core.dates import as_utc, day, iso, utcnow
from core.domain.changes import ChangeResult, classify_change
from core.domain.claim_diff import ClaimChange
from core.domain.hashing import content_hash
from core.domain.report_settings import DEFAULT_TAU
from core.engine.checks import FetchOutcome, SharedChecks
from core.engine.costs import CostMeter
from core.engine.fetching import looks
from core.sources.base import (
    Fetcher,
)
from core.states import ChangeKind
from core.store.models import PoolEntry, Report, Snapshot, Source, UpdateRun
from core.store.pool import pool_entry
from core.store.snapshot_store import json_safe, run_snapshots, store_snapshot
from core.writers.base import Evidence

Progress = Callable[[str], None]


@dataclass
class Checked:
    """One cited source after refresh."""

    marker: int
    source: Source
    previous: Snapshot | None  # what the report cited
    current: Snapshot | None  # newest snapshot (None when gone and never fetched)
    kind: str  # unchanged | minor | material | changed | gone | new | error
    change: ChangeResult | None = None
    error: str | None = None

    def evidence(self) -> Evidence | None:
        if self.current is None or self.current.content is None or self.kind == ChangeKind.GONE:
            return None
        return Evidence(self.marker, self.source.url, self.current.title, self.current.content)

    def as_dict(self) -> dict[str, Any]:
        prev, cur = self.previous, self.current
        return {
            "marker": self.marker,
            "url": self.source.url,
            "title": (cur or prev).title if (cur or prev) else self.source.title,
            "kind": self.kind,
            "similarity": self.change.similarity if self.change else None,
            "reasons": list(self.change.reasons[:12]) if self.change else [],
            "claims": [c.as_dict() for c in self.change.claims[:12]] if self.change else [],
            "old_snapshot_id": prev.id if prev else None,
            "new_snapshot_id": cur.id if cur else None,
            "old_date": day(prev.as_of) if prev else None,
            "new_date": day(cur.as_of) if cur else None,
            "error": self.error,
        }


@dataclass
class Found:
    """A page new to the pool, with the section it fits (None: fits none)."""

    evidence: Evidence
    snapshot: Snapshot
    section_key: str | None = None
    score: float = 0.0


def _stored_change(snap: Snapshot) -> ChangeResult:
    return ChangeResult(
        kind=snap.change_kind,  # type: ignore[arg-type]
        similarity=snap.similarity,
        claims=[ClaimChange.from_dict(c) for c in snap.claim_diff],
        reasons=list(snap.reasons),
    )


def refresh(
    session: Session,
    report: Report,
    cited: dict[int, Snapshot],
    *,
    base_as_of: datetime | None,
    as_of: datetime,
    fetcher: Fetcher,
    temporal: bool,
    meter: CostMeter,
    run_id: int | None,
    tau: float = DEFAULT_TAU,
    concurrency: int = 8,
    progress: Progress | None = None,
    force: bool = False,
) -> list[Checked]:
    """Re-check every cited source as of ``as_of`` and classify how it changed.

    A source another report's run looked at recently enough (``core.engine.checks``: the same
    as-of of a corpus, the freshness window of the web) is not fetched again unless
    ``force``; a web page with validators from its last look is asked conditionally.

    Each cited page is fetched once, and stored as it arrives. A citation imported from
    someone's report with no content yet (its page could not be read at import) is
    resolved from the same fetch when a temporal corpus says the page has not changed
    since the report's date; only a page that changed since is also read as it stood
    then (stage ``resolve``), so the change can be classified and its claims re-checked.
    A resumed run reuses what it already fetched and checked (no second fetch for those).
    """
    resolve_at = base_as_of if temporal else None
    job = _Refresh(session, report, cited, as_of, resolve_at, run_id, tau, progress)
    checks = SharedChecks(
        session, fetcher, temporal=temporal, report_id=int(report.id), run_id=run_id, force=force
    )
    pending = job.pending()
    sources = {url: job.sources[marker] for url, marker in pending.items()}
    later: dict[str, FetchOutcome] = {}
    for url, outcome in looks(
        checks, fetcher, sources, as_of, meter, concurrency=concurrency, stage="refresh"
    ):
        marker = pending[url]
        if _needs_base(job.cited[marker], outcome, resolve_at):
            later[url] = outcome
        else:
            job.check(marker, outcome)
            checks.record(sources[url], as_of, outcome, job.results[marker].current)
    if later:
        job.resolve(later, pending, checks, fetcher, meter, concurrency)
        for url, outcome in later.items():
            checks.record(sources[url], as_of, outcome, job.results[pending[url]].current)
    session.flush()
    return [job.results[m] for m in sorted(job.results)]


def _needs_base(prev: Snapshot, outcome: FetchOutcome, base_as_of: datetime | None) -> bool:
    """Must an unresolved citation also be read as of the report's date? Not when the
    page fetched now has been the same since then (the corpus dates each version), nor
    when it could not be read now (unreachable: nothing to compare)."""
    if prev.content is not None or base_as_of is None:
        return False
    page = outcome.page
    if page is None:
        return outcome.gone
    return page.published is None or as_utc(page.published) > as_utc(base_as_of)


def _at(snapshot: Snapshot, when: datetime) -> bool:
    return snapshot.as_of is not None and as_utc(snapshot.as_of) == as_utc(when)


def _same_step(session: Session, snapshot: Snapshot | None, prev: Snapshot) -> bool:
    """Is ``snapshot`` a stored change from ``prev``'s text (another report's look, from
    its own copy of the same text), so that its classified diff is this one too?"""
    if snapshot is None or snapshot.id == prev.id or snapshot.previous_id is None:
        return False
    if snapshot.change_kind in ("new", "imported"):
        return False
    if snapshot.previous_id == prev.id:
        return True
    before = session.get(Snapshot, snapshot.previous_id)
    return (
        before is not None
        and before.content_hash == prev.content_hash
        and (before.meta or {}) == (prev.meta or {})
    )


class _Refresh:
    """The state of one refresh: the cited snapshots, what a resumed run already did, and
    the result per marker."""

    def __init__(
        self,
        session: Session,
        report: Report,
        cited: dict[int, Snapshot],
        as_of: datetime,
        resolve_at: datetime | None,
        run_id: int | None,
        tau: float,
        progress: Progress | None,
    ) -> None:
        self.session, self.report, self.cited = session, report, cited
        self.as_of, self.run_id, self.tau, self.progress = as_of, run_id, tau, progress
        self.resolve_at = resolve_at  # the report's date, when its pages can be read then
        self.run = session.get(UpdateRun, run_id) if run_id is not None else None
        # sources this run already checked without storing a snapshot (unchanged, gone, error)
        self.seen: dict[str, str] = (
            dict((self.run.summary or {}).get("refreshed", {})) if self.run else {}
        )
        self.reuse = run_snapshots(session, run_id)
        self.sources = {m: session.get(Source, snap.source_id) for m, snap in cited.items()}
        self.results: dict[int, Checked] = {}
        if resolve_at is not None:  # a resumed run: what it already resolved stays resolved
            for m, snap in list(cited.items()):
                again = self.reuse.get((self.sources[m].id, iso(resolve_at) or ""))
                if snap.content is None and again is not None:
                    cited[m] = again

    def pending(self) -> dict[str, int]:
        """The cited pages still to fetch (url → marker); the others are checked from what
        this run already did."""
        pending: dict[str, int] = {}
        for marker, prev in sorted(self.cited.items()):
            source = self.sources[marker]
            pool_entry(self.session, self.report, source, marker=marker)
            again = self.reuse.get((source.id, iso(self.as_of) or ""))
            if again is not None and again.id != prev.id:
                kind = ChangeKind.NEW if prev.content is None else again.change_kind
                change = None if kind == ChangeKind.NEW else _stored_change(again)
                self.results[marker] = Checked(marker, source, prev, again, kind, change)
            elif str(source.id) in self.seen:
                current = prev if prev.content else None
                self.results[marker] = Checked(
                    marker, source, prev, current, self.seen[str(source.id)]
                )
            else:
                pending[source.url] = marker
        return pending

    def resolve(
        self,
        later: dict[str, FetchOutcome],
        pending: dict[str, int],
        checks: SharedChecks,
        fetcher: Fetcher,
        meter: CostMeter,
        concurrency: int,
    ) -> None:
        """Read the unresolved citations whose page changed as they stood at the report's
        date, then check each against the page fetched now."""
        base_as_of = self.resolve_at or self.as_of
        sources = {url: self.sources[pending[url]] for url in later}
        with meter.stage("resolve"):
            for n, (url, outcome) in enumerate(
                looks(
                    checks,
                    fetcher,
                    sources,
                    base_as_of,
                    meter,
                    concurrency=concurrency,
                    stage="resolve",
                )
            ):
                marker = pending[url]
                base: Snapshot | None = None
                if outcome.snapshot is not None and _at(outcome.snapshot, base_as_of):
                    base = outcome.snapshot  # another report resolved it already
                elif outcome.page is not None:
                    base = store_snapshot(
                        self.session,
                        self.sources[marker],
                        outcome.page,
                        as_of=base_as_of,
                        run_id=self.run_id,
                    )
                if base is not None:
                    self.cited[marker] = base
                checks.record(sources[url], base_as_of, outcome, base)
                if self.progress:
                    self.progress(f"resolving cited source {n + 1}/{len(later)}")
                self.check(marker, later[url])

    def check(self, marker: int, outcome: FetchOutcome) -> None:
        """Classify one cited page fetched now against what the report cited."""
        session, source = self.session, self.sources[marker]
        prev = self.cited[marker]
        entry = pool_entry(session, self.report, source, marker=marker)
        if outcome.page is None:
            # gone: the page no longer exists; error: unreachable now, text kept and flagged
            kind = ChangeKind.GONE if outcome.gone else ChangeKind.ERROR
            checked = Checked(marker, source, prev, prev if prev.content else None, kind)
            checked.error = outcome.error
        elif (
            prev.content is None
            and self.resolve_at is not None
            and not _needs_base(prev, outcome, self.resolve_at)
        ):
            # an unresolved citation whose page has not changed since the report's date
            snap = store_snapshot(
                session, source, outcome.page, as_of=self.resolve_at, run_id=self.run_id
            )
            self.cited[marker] = snap
            checked = Checked(marker, source, snap, snap, "unchanged")
        elif prev.content is None:
            snap = store_snapshot(
                session, source, outcome.page, as_of=self.as_of, run_id=self.run_id
            )
            checked = Checked(marker, source, prev, snap, "new")
        elif content_hash(outcome.page.content) == prev.content_hash and (
            json_safe(outcome.page.meta) == (prev.meta or {})
        ):
            checked = Checked(marker, source, prev, prev, "unchanged")
        elif _same_step(session, outcome.snapshot, prev):
            # another report's look already stored this text after the same snapshot,
            # with its change classified: no second copy, no second diff
            snap = outcome.snapshot
            checked = Checked(marker, source, prev, snap, snap.change_kind, _stored_change(snap))
        else:
            change = classify_change(
                prev.content,
                outcome.page.content,
                self.tau,
                old_meta=prev.meta or {},
                new_meta=outcome.page.meta,
            )
            snap = store_snapshot(
                session,
                source,
                outcome.page,
                as_of=self.as_of,
                run_id=self.run_id,
                previous=prev,
                change=change,
            )
            checked = Checked(marker, source, prev, snap, change.kind, change)
        self._record(entry, checked)

    def _record(self, entry: PoolEntry, checked: Checked) -> None:
        entry.last_checked = utcnow()
        entry.status = checked.kind
        if checked.current is not None and checked.kind != ChangeKind.GONE:
            entry.latest_snapshot_id = checked.current.id
        self.session.add(entry)
        self.results[checked.marker] = checked
        if self.run is not None and checked.kind in (
            ChangeKind.UNCHANGED,
            ChangeKind.GONE,
            ChangeKind.ERROR,
        ):
            self.seen[str(checked.source.id)] = checked.kind
            self.run.summary = {**(self.run.summary or {}), "refreshed": dict(self.seen)}
            self.session.add(self.run)
        if self.progress:
            self.progress(f"checking source {len(self.results)}/{len(self.cited)}")


def pool_summary(checked: Sequence[Checked], found: Sequence[Found]) -> dict[str, int]:
    counts = {
        "checked": len(checked),
        "unchanged": 0,
        "minor": 0,
        "material": 0,
        "changed": 0,
        "gone": 0,
        "new": len(found),
    }
    for c in checked:
        if c.kind in counts and c.kind != ChangeKind.NEW:
            counts[c.kind] += 1
        elif c.kind == ChangeKind.NEW:
            counts["changed"] += 0  # first fetch of an imported citation: nothing to compare
    return counts
