"""Import a Markdown report written anywhere, so it can be kept current.

Each reference becomes a source in the report's evidence pool. From a temporal corpus,
the cited page is read as it stood at the reference's date (or the report's), and every
cited sentence is anchored to the passages that support it; a sentence whose support
can't be found is listed in the summary. From the web, the snapshot is a placeholder
(what the author cited, no content yet) and the first update fetches and anchors it.

The import run keeps a hash of the text it read, so the doors (CLI, app) can refuse the
same Markdown imported twice (``refuse_duplicate``: DuplicateImportError names the report
it made) and let a person confirm a second copy. An as-of later than today is refused
(``core.domain.validation.check_as_of``).

Limits (hostile or accidental input gets one clear refusal, and nothing is written):
at most MAX_IMPORT_BYTES of Markdown and MAX_SECTIONS sections, and references only to
http(s) pages (or ``local://`` corpus pages) — a ``javascript:``, ``file:`` or ``data:``
reference is refused. Private addresses are not refused here: an intranet source may be
allowed (EVERGREEN_FETCH_ALLOWLIST); the fetcher's address policy decides at update time.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session, col, select

from core.dates import day, parse_as_of, utcnow
from core.domain.hashing import content_hash
from core.domain.report_parse import parse_markdown
from core.domain.report_state import ReportDoc
from core.domain.validation import check_as_of, clean_question, clean_title
from core.engine.claims import claim_counts
from core.engine.version_commit import SectionDraft, commit_version
from core.errors import EvergreenError, NotFoundError
from core.source_spec import SourceSpec
from core.sources.base import FetchedPage
from core.sources.registry import providers_for
from core.states import ClaimState, RunKind, RunStatus, SectionStatus
from core.store.models import Report, Snapshot, UpdateRun
from core.store.pool import get_or_create_source, pool_entry
from core.store.repository import brief_title, claims_of_version
from core.store.snapshot_store import json_safe

MAX_IMPORT_BYTES = 2_000_000  # ~300,000 words: far beyond any report one reviews by section
MAX_SECTIONS = 300
REFERENCE_SCHEMES = ("http", "https", "local")
HASH_KEY = "markdown_sha256"  # in an import run's summary: the text it imported


class DuplicateImportError(EvergreenError):
    """The same Markdown was imported before; ``report_id`` is the report it made."""

    def __init__(self, report_id: int, title: str, when: str, archived: bool) -> None:
        where = "archived report" if archived else "report"
        super().__init__(
            f"This file was already imported as {where} {report_id} "
            f"({brief_title(title)!r}, {when})."
        )
        self.report_id = report_id


def markdown_hash(text: str) -> str:
    """The identity of an imported text: the same file read twice (any line endings, a
    byte-order mark or trailing spaces aside) hashes the same."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    canonical = "\n".join(line.rstrip() for line in lines).strip()
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def find_duplicate(session: Session, text: str) -> Report | None:
    """The report an earlier import of the same text made (the oldest still kept), if any."""
    digest = markdown_hash(text)
    runs = session.exec(
        select(UpdateRun).where(UpdateRun.kind == RunKind.IMPORT).order_by(col(UpdateRun.id))
    )
    for run in runs:
        if (run.summary or {}).get(HASH_KEY) == digest:
            return session.get(Report, run.report_id)
    return None


def _refuse_duplicate(session: Session, text: str) -> None:
    report = find_duplicate(session, text)
    if report is not None:
        raise DuplicateImportError(
            int(report.id or 0),
            report.title,
            day(report.created_at),
            report.archived_at is not None,
        )


def _check_size(size: int, name: str) -> None:
    if size > MAX_IMPORT_BYTES:
        raise EvergreenError(
            f"{name} is {size:,} bytes; Evergreen imports reports of up to "
            f"{MAX_IMPORT_BYTES:,} bytes. Split it into several reports."
        )


def read_markdown_file(path: str | Path) -> str:
    file = Path(path).expanduser()
    if not file.is_file():
        raise NotFoundError(f"No such file: {file}")
    _check_size(file.stat().st_size, file.name)  # before reading any of it
    return decode_markdown(file.read_bytes(), file.name)


def decode_markdown(data: bytes, name: str) -> str:
    """The text of an uploaded or read Markdown file, or one clear refusal."""
    _check_size(len(data), name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvergreenError(
            f"{name} is not UTF-8 text (bad byte at offset {exc.start}); "
            "re-save it as UTF-8 and import again."
        ) from None
    if not text.strip():
        raise EvergreenError(f"{name} is empty: nothing to import.")
    return text


def import_report(
    session: Session,
    text: str,
    *,
    query: str,
    as_of: datetime | None = None,
    source: str = "sample",
    default_title: str = "Imported report",
    refuse_duplicate: bool = False,
) -> tuple[Report, dict[str, Any]]:
    """Create a report whose version 1 is the parsed Markdown; return it and a summary.

    Raises DuplicateImportError, with ``refuse_duplicate``, when the same text was imported
    before (a person's import; a script may import one text into several reports);
    EvergreenError for an as-of after today or bad Markdown. Nothing is written then."""
    query = clean_question(query)
    as_of = check_as_of(as_of)
    doc = _checked_markdown(text, default_title)
    if refuse_duplicate:
        _refuse_duplicate(session, text)
    when = as_of or utcnow()
    report = Report(title=clean_title(doc.title), query=query, source=source)
    session.add(report)
    session.flush()
    run = UpdateRun(
        report_id=report.id,
        kind=RunKind.IMPORT,
        as_of=when,
        status=RunStatus.COMMITTED,
        summary={HASH_KEY: markdown_hash(text)},
    )
    session.add(run)
    session.flush()
    pages = _resolve(doc, source, when)
    markers, untracked = _reference_snapshots(session, report, run, doc, pages, when)
    cited = {m for s in doc.sections for m in s.markers}
    drafts = [SectionDraft(doc=s, status=SectionStatus.NEW) for s in doc.sections]
    version = commit_version(
        session, report, title=report.title, drafts=drafts, as_of=when, markers=markers, run=run
    )
    run.finished_at = utcnow()
    session.add(run)
    claims = claims_of_version(session, version.id)
    temporal = SourceSpec.parse(source).temporal
    return report, {
        "report_id": report.id,
        "version": version.number,
        "sections": len(doc.sections),
        "references": len(doc.references),
        "uncited_references": sorted(set(markers) - cited),
        "untracked_references": untracked,
        "claims": claim_counts(claim.state for _section, claim in claims),
        "unsupported_claims": _unsupported(claims),
        "unresolved_references": sorted(
            m for m in markers if m not in pages and m in cited and temporal
        ),
    }


def _checked_markdown(text: str, default_title: str) -> ReportDoc:
    """The report parsed, refused with one line when too big, too many sections or with a
    reference Evergreen cannot check (not a web address)."""
    _check_size(len(text.encode("utf-8", "surrogatepass")), "The Markdown file")
    doc: ReportDoc = parse_markdown(text, default_title=default_title)
    if len(doc.sections) > MAX_SECTIONS:
        raise EvergreenError(
            f"The Markdown file has {len(doc.sections):,} sections; Evergreen imports reports "
            f"of up to {MAX_SECTIONS:,} sections (each is reviewed on its own). Merge "
            "sections or split the report."
        )
    bad = [
        f"[{r.marker}] {r.url[:80]}"
        for r in doc.references
        if r.url and urlsplit(r.url).scheme.lower() not in REFERENCE_SCHEMES
    ]
    if bad:
        what = "Reference" if len(bad) == 1 else "References"
        raise EvergreenError(
            f"{what} {', '.join(bad)}: not a web address; only http(s) references (or "
            "local:// corpus pages) can be imported and checked. Fix or remove them."
        )
    return doc


def _reference_snapshots(
    session: Session,
    report: Report,
    run: UpdateRun,
    doc: ReportDoc,
    pages: dict[int, FetchedPage],
    when: datetime,
) -> tuple[dict[int, int], list[int]]:
    """A pool entry and an imported snapshot per reference with an address (marker →
    snapshot id), and the markers of those without one (a book, a paper: untracked)."""
    markers: dict[int, int] = {}
    untracked: list[int] = []
    for ref in doc.references:
        if not ref.url:  # a book or a paper with no address: nothing Evergreen can re-check
            untracked.append(ref.marker)
            continue
        src = get_or_create_source(session, ref.url, ref.title)
        pool_entry(session, report, src, marker=ref.marker)
        fetched = parse_as_of(ref.fetched) if ref.fetched else None
        page = pages.get(ref.marker)
        snap = Snapshot(
            source_id=src.id,
            title=(page.title if page else "") or ref.title,
            content=page.content if page else None,
            content_hash=content_hash(page.content) if page else None,
            as_of=fetched or when,
            published=page.published if page else None,
            meta=json_safe(page.meta) if page else {},
            fetched_at=fetched or when,
            change_kind="imported",
            run_id=run.id,
        )
        session.add(snap)
        session.flush()
        markers[ref.marker] = snap.id
    return markers, untracked


def _unsupported(claims: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Each imported sentence whose cited page does not say it, with what is missing."""
    return [
        {
            "section": section.heading,
            "marker": claim.marker,
            "sentence": claim.sentence,
            "missing": claim.detail.get("missing", []),
        }
        for section, claim in claims
        if claim.state == ClaimState.UNSUPPORTED
    ]


def _resolve(doc: ReportDoc, source: str, when: datetime) -> dict[int, FetchedPage]:
    """The cited pages as they stood at the report's date, when the source can say so
    (a temporal corpus); the web is fetched on the first update instead."""
    if not SourceSpec.parse(source).temporal or not any(r.url for r in doc.references):
        return {}
    try:
        providers = providers_for(source)
    except EvergreenError:
        return {}  # an unknown or damaged corpus: the first update says so, on its run
    pages: dict[int, FetchedPage] = {}
    try:
        if not providers.temporal:
            return {}
        for ref in doc.references:
            if not ref.url:
                continue
            at = parse_as_of(ref.fetched) if ref.fetched else when
            try:
                pages[ref.marker] = providers.fetcher.fetch(ref.url, at)
            except EvergreenError:
                continue  # not in the corpus at that date: checked (and flagged) on update
    finally:
        providers.close()
    return pages
