"""Import a Markdown report written anywhere, so it can be kept current.

Each reference becomes a source in the report's evidence pool with a
placeholder snapshot (what the author cited, with no content yet); the first
update fetches them, as the paper's Single-Step Task does.

Limits (hostile or accidental input gets one clear refusal, and nothing is written):
at most MAX_IMPORT_BYTES of Markdown and MAX_SECTIONS sections, and references only to
http(s) pages (or ``local://`` corpus pages) — a ``javascript:``, ``file:`` or ``data:``
reference is refused. Private addresses are not refused here: an intranet source may be
allowed (EVERGREEN_FETCH_ALLOWLIST); the fetcher's address policy decides at update time.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session

from core.dates import parse_published, utcnow
from core.errors import EvergreenError, NotFoundError
from core.models import Report, Snapshot, UpdateRun
from core.report_state import ReportDoc, parse_markdown
from core.repository import SectionDraft, commit_version, get_or_create_source, pool_entry
from core.validation import clean_question, clean_title

MAX_IMPORT_BYTES = 2_000_000  # ~300,000 words: far beyond any report one reviews by section
MAX_SECTIONS = 300
REFERENCE_SCHEMES = ("http", "https", "local")


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
) -> tuple[Report, dict[str, Any]]:
    """Create a report whose version 1 is the parsed Markdown; return it and a summary."""
    query = clean_question(query)
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
    when = as_of or utcnow()
    report = Report(title=clean_title(doc.title), query=query, source=source)
    session.add(report)
    session.flush()
    run = UpdateRun(report_id=report.id, kind="import", as_of=when, status="committed")
    session.add(run)
    session.flush()
    markers: dict[int, int] = {}
    untracked: list[int] = []
    for ref in doc.references:
        if not ref.url:  # a book or a paper with no address: nothing Evergreen can re-check
            untracked.append(ref.marker)
            continue
        src = get_or_create_source(session, ref.url, ref.title)
        pool_entry(session, report, src, marker=ref.marker)
        fetched = parse_published(ref.fetched) if ref.fetched else None
        snap = Snapshot(
            source_id=src.id,
            title=ref.title,
            content=None,
            as_of=fetched,
            fetched_at=fetched or when,
            change_kind="imported",
            run_id=run.id,
        )
        session.add(snap)
        session.flush()
        markers[ref.marker] = snap.id
    cited = {m for s in doc.sections for m in s.markers}
    drafts = [SectionDraft(doc=s, status="new") for s in doc.sections]
    version = commit_version(
        session, report, title=report.title, drafts=drafts, as_of=when, markers=markers, run=run
    )
    run.finished_at = utcnow()
    session.add(run)
    uncited = sorted(set(markers) - cited)
    return report, {
        "report_id": report.id,
        "version": version.number,
        "sections": len(doc.sections),
        "references": len(doc.references),
        "uncited_references": uncited,
        "untracked_references": untracked,
    }
