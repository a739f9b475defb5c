"""The shared evidence pool's checks: one look at a source serves every report citing it.

A corpus page is looked at once per as-of (and per revision of the corpus: an import
that changes pages makes earlier looks stale); a web page once per freshness window
(``recheck_hours``). A web look older than the window still helps: its validators
(ETag / Last-Modified) make the next look a conditional request, and a 304 serves the
text stored with it, with no body transferred.

Every look is a ``SourceCheck`` naming the snapshot that holds the text it saw; every
report it served is a ``CheckUse``. The run that made the look pays for the request;
a run it serves later counts a shared check and no fetch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from core.dates import as_utc, utcnow
from core.settings import get_settings
from core.source_spec import SourceSpec
from core.sources.base import FetchedPage, Fetcher, Validators
from core.states import ChangeKind, CheckOutcome
from core.store.models import (
    CheckUse,
    Citation,
    Report,
    ReportVersion,
    Section,
    Snapshot,
    Source,
    SourceCheck,
    UpdateRun,
)


@dataclass
class FetchOutcome:
    """What a look at one page gave: the page (None: gone or unreadable), why not, and —
    when the text is one already stored — the snapshot holding it and the check it came
    from (another run's look, or the earlier look a 304 confirmed)."""

    page: FetchedPage | None
    error: str | None = None
    gone: bool = False
    not_modified: bool = False  # the server answered 304 to a conditional request
    snapshot: Snapshot | None = None
    check: SourceCheck | None = None  # set when the look is another run's, reused

    @property
    def reused(self) -> bool:
        return self.check is not None


def page_of(snapshot: Snapshot, url: str) -> FetchedPage:
    """A stored snapshot as the page a fetch would have returned."""
    return FetchedPage(
        url=url,
        title=snapshot.title,
        content=snapshot.content or "",
        fetched_at=snapshot.fetched_at,
        as_of=snapshot.as_of,
        published=snapshot.published,
        meta=dict(snapshot.meta or {}),
    )


def provider_key(fetcher: Fetcher) -> str:
    revision = str(getattr(fetcher, "revision", "") or "")
    return f"{fetcher.name}@{revision}" if revision else fetcher.name


class SharedChecks:
    """The checks one run of one report reads and adds to."""

    def __init__(
        self,
        session: Session,
        fetcher: Fetcher,
        *,
        temporal: bool,
        report_id: int,
        run_id: int | None,
        force: bool = False,
        window: timedelta | None = None,
    ) -> None:
        if window is None:
            window = timedelta(hours=get_settings().recheck_hours)
        self.session, self.temporal, self.force, self.window = session, temporal, force, window
        self.report_id, self.run_id = report_id, run_id
        self.provider = provider_key(fetcher)
        self._asked: dict[int, SourceCheck] = {}  # source id → the look whose validators went

    # -- before fetching -------------------------------------------------------------------
    def fresh(self, sources: Mapping[str, Source], as_of: datetime) -> dict[str, FetchOutcome]:
        """The pages a still-fresh look of any run serves (url → outcome): the same as-of
        of a temporal corpus, or a web look within the window. None under force."""
        if self.force or not sources:
            return {}
        latest = self._latest(sources.values(), as_of if self.temporal else None)
        since = utcnow() - self.window
        out: dict[str, FetchOutcome] = {}
        for url, source in sources.items():
            check = latest.get(int(source.id))
            if check is None or check.outcome == CheckOutcome.ERROR:
                continue
            if not self.temporal and as_utc(check.checked_at) <= since:
                continue
            outcome = self._served(check, url)
            if outcome is not None:
                out[url] = outcome
        return out

    def validators(self, sources: Mapping[str, Source]) -> dict[str, Validators]:
        """For the live web: the validators of each page's last look that read it (url →
        validators), so the fetch asks conditionally. Nothing for a temporal corpus, nor
        under force (a forced re-check reads every page whole)."""
        if self.temporal or self.force or not sources:
            return {}
        latest = self._latest(sources.values(), None, readable=True)
        out: dict[str, Validators] = {}
        for url, source in sources.items():
            check = latest.get(int(source.id))
            if check is None or not (check.etag or check.last_modified):
                continue
            snapshot = self.session.get(Snapshot, check.snapshot_id) if check.snapshot_id else None
            if snapshot is None or snapshot.content is None:
                continue
            self._asked[int(source.id)] = check
            out[url] = Validators(check.etag, check.last_modified)
        return out

    def settle(self, source: Source, outcome: FetchOutcome) -> FetchOutcome:
        """A 304 becomes the text the look it confirmed had stored."""
        if not outcome.not_modified:
            return outcome
        confirmed = self._asked[int(source.id)]
        snapshot = self.session.get(Snapshot, confirmed.snapshot_id)
        return FetchOutcome(page_of(snapshot, source.url), not_modified=True, snapshot=snapshot)

    # -- after checking ----------------------------------------------------------------------
    def record(
        self,
        source: Source,
        as_of: datetime,
        outcome: FetchOutcome,
        current: Snapshot | None,
    ) -> SourceCheck:
        """Note the look (or, for a reused look, that it served this report too)."""
        if outcome.check is not None:
            self._use(outcome.check)
            return outcome.check
        page = outcome.page
        if outcome.not_modified:
            kind = "not_modified"
            asked = self._asked[int(source.id)]
            etag, modified = asked.etag, asked.last_modified
        else:
            kind = "fetched" if page is not None else "gone" if outcome.gone else "error"
            valid = page.validators if page is not None else None
            etag, modified = (valid.etag, valid.last_modified) if valid else (None, None)
        check = SourceCheck(
            source_id=int(source.id),
            provider=self.provider,
            as_of=as_of,
            outcome=kind,
            snapshot_id=current.id if current is not None and page is not None else None,
            etag=etag,
            last_modified=modified,
            bytes=len(page.content.encode("utf-8")) if kind == "fetched" and page else 0,
            run_id=self.run_id,
            error=outcome.error,
        )
        self.session.add(check)
        self.session.flush()
        self._use(check)
        return check

    # -- helpers -------------------------------------------------------------------------------
    def _latest(
        self, sources: Iterable[Source], as_of: datetime | None, *, readable: bool = False
    ) -> dict[int, SourceCheck]:
        ids = sorted({int(s.id) for s in sources})
        query = (
            select(SourceCheck)
            .where(col(SourceCheck.source_id).in_(ids), SourceCheck.provider == self.provider)
            .order_by(col(SourceCheck.checked_at).desc(), col(SourceCheck.id).desc())
        )
        if as_of is not None:
            query = query.where(SourceCheck.as_of == as_utc(as_of))
        if readable:
            query = query.where(col(SourceCheck.snapshot_id).is_not(None))
        out: dict[int, SourceCheck] = {}
        for check in self.session.exec(query):
            out.setdefault(int(check.source_id), check)
        return out

    def _served(self, check: SourceCheck, url: str) -> FetchOutcome | None:
        if check.outcome == CheckOutcome.GONE:
            return FetchOutcome(None, check.error or f"{url} is gone.", gone=True, check=check)
        snapshot = self.session.get(Snapshot, check.snapshot_id) if check.snapshot_id else None
        if snapshot is None or snapshot.content is None:
            return None
        return FetchOutcome(page_of(snapshot, url), snapshot=snapshot, check=check)

    def _use(self, check: SourceCheck) -> None:
        self.session.add(CheckUse(check_id=check.id, report_id=self.report_id, run_id=self.run_id))


# -- what the screens read ---------------------------------------------------------------
def _provider_matches(check: SourceCheck, name: str) -> bool:
    return check.provider == name or check.provider.startswith(f"{name}@")


def source_use(session: Session, source_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Per source: the reports whose current version cites it (id, title) and its last
    look by any report's run (when, what it found, for which report)."""
    ids = sorted({int(i) for i in source_ids})
    out: dict[int, dict[str, Any]] = {i: {"reports": [], "last_check": None} for i in ids}
    if not ids:
        return out
    for source_id, report_id, title in session.exec(
        select(Snapshot.source_id, Report.id, Report.title)
        .join(Citation, col(Citation.snapshot_id) == Snapshot.id)
        .join(Section, col(Section.id) == Citation.section_id)
        .join(ReportVersion, col(ReportVersion.id) == Section.version_id)
        .join(Report, col(Report.id) == ReportVersion.report_id)
        .where(col(Snapshot.source_id).in_(ids), col(ReportVersion.id).in_(_current_versions()))
        .distinct()
        .order_by(col(Report.id))
    ):
        out[int(source_id)]["reports"].append({"id": int(report_id), "title": title})
    checks = session.exec(
        select(SourceCheck)
        .where(col(SourceCheck.source_id).in_(ids))
        .order_by(col(SourceCheck.checked_at).desc(), col(SourceCheck.id).desc())
    )
    for check in checks:
        slot = out[int(check.source_id)]
        if slot["last_check"] is None:
            run = session.get(UpdateRun, check.run_id) if check.run_id else None
            slot["last_check"] = {
                "checked_at": check.checked_at,
                "outcome": check.outcome,
                "report_id": run.report_id if run else None,
                "served": session.exec(
                    select(func.count()).select_from(CheckUse).where(CheckUse.check_id == check.id)
                ).one(),
            }
    return out


def news_since_versions(session: Session) -> dict[int, list[dict[str, Any]]]:
    """Per report: the sources its current version cites that a later look — by any
    report's run — found changed or gone (the shared pool's news for it): a web look
    after the version was made, a corpus look at a later as-of."""
    cited = _cited_now(session)
    if not cited:
        return {}
    by_source = _readable_looks(session, cited)
    hashes: dict[int, str | None] = {}
    out: dict[int, list[dict[str, Any]]] = {}
    for (report_id, source_id), (version, spec, marker, snap) in sorted(cited.items()):
        look = _later_look(by_source.get(source_id, []), spec, version)
        if look is None:
            continue
        if look.outcome == CheckOutcome.GONE:
            kind = ChangeKind.GONE
        else:
            if look.snapshot_id not in hashes:
                seen = session.get(Snapshot, look.snapshot_id) if look.snapshot_id else None
                hashes[look.snapshot_id] = seen.content_hash if seen else None
            if hashes[look.snapshot_id] in (None, snap.content_hash):
                continue
            kind = ChangeKind.CHANGED
        out.setdefault(report_id, []).append(
            {"marker": marker, "title": snap.title, "kind": kind, "checked_at": look.checked_at}
        )
    return out


def _cited_now(
    session: Session,
) -> dict[tuple[int, int], tuple[ReportVersion, str, int, Snapshot]]:
    """(report id, source id) → (current version, report's source setting, marker, cited
    snapshot) for each source a live report's current version cites (one citation each)."""
    rows = session.exec(
        select(ReportVersion, Report.source, Citation.marker, Snapshot)
        .join(Report, col(Report.id) == ReportVersion.report_id)
        .join(Section, col(Section.version_id) == ReportVersion.id)
        .join(Citation, col(Citation.section_id) == Section.id)
        .join(Snapshot, col(Snapshot.id) == Citation.snapshot_id)
        .where(col(ReportVersion.id).in_(_current_versions()), col(Report.archived_at).is_(None))
    ).all()
    cited: dict[tuple[int, int], tuple[ReportVersion, str, int, Snapshot]] = {}
    for version, spec, marker, snap in rows:
        key = (int(version.report_id), int(snap.source_id))
        cited.setdefault(key, (version, spec, marker, snap))
    return cited


def _readable_looks(
    session: Session, cited: Mapping[tuple[int, int], Any]
) -> dict[int, list[SourceCheck]]:
    """Per cited source: its looks that read the page or found it gone, newest first."""
    by_source: dict[int, list[SourceCheck]] = {}
    for check in session.exec(
        select(SourceCheck)
        .where(
            col(SourceCheck.source_id).in_({s for _, s in cited}),
            col(SourceCheck.outcome).in_(("fetched", "not_modified", "gone")),
        )
        .order_by(col(SourceCheck.checked_at).desc(), col(SourceCheck.id).desc())
    ):
        by_source.setdefault(int(check.source_id), []).append(check)
    return by_source


def _later_look(
    looks: Iterable[SourceCheck], spec: str, version: ReportVersion
) -> SourceCheck | None:
    """The newest look by the report's own fetcher made after ``version``: at a later
    as-of for a temporal corpus, later in time for the web."""
    source = SourceSpec.parse(spec)
    temporal = source.temporal
    name = source.fetcher_name  # what SourceCheck.provider starts with
    return next(
        (
            c
            for c in looks
            if _provider_matches(c, name)
            and (
                (temporal and c.as_of is not None and as_utc(c.as_of) > as_utc(version.as_of))
                or (not temporal and as_utc(c.checked_at) > as_utc(version.created_at))
            )
        ),
        None,
    )


def _current_versions() -> Any:
    """The id of each report's newest version (a subquery)."""
    newest = (
        select(ReportVersion.report_id, func.max(ReportVersion.number).label("n"))
        .group_by(col(ReportVersion.report_id))
        .subquery()
    )
    return select(ReportVersion.id).join(
        newest,
        (col(ReportVersion.report_id) == newest.c.report_id)
        & (col(ReportVersion.number) == newest.c.n),
    )
