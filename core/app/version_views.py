"""Read models of a report's versions: a committed version as safe HTML, the timeline of
versions, the section diff between two of them, and an export's bytes for download."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from sqlmodel import Session

from core.app.claim_notes import FLAGGED_STATES, claim_note, flagged_body_html
from core.app.export import claim_summary, export_version, version_line
from core.app.view_text import esc, link_html, markdown_html, stamp
from core.dates import day
from core.domain.citations import renumber_citations
from core.domain.diffing import side_by_side_html
from core.domain.labels import run_kind_label, section_status_label
from core.domain.report_render import strip_version_line
from core.domain.report_state import renumbered
from core.errors import EvergreenError
from core.store.models import Report, ReportVersion, UpdateRun
from core.store.repository import claims_of_version, get_version, load_doc, sections_of, versions_of


def version_claims(session: Session, version: ReportVersion) -> dict[str, Any]:
    """A version's claim counts (see ``core.app.export.claim_summary``) and a one-line
    summary: "Version 3 · as of 2026-07-15 · 36 claims, 0 stale"."""
    counts = claim_summary(session, version)
    committed = (version.committed_by, day(version.created_at)) if version.committed_by else None
    line = version_line(version.number, day(version.as_of), counts, committed).strip("_")
    return {"counts": counts, "line": line}


def version_html(session: Session, report: Report, number: int | None = None) -> str:
    """A committed version as safe HTML: sections, clickable [n] citations, a visible note
    after each sentence whose claim is stale or unsupported, and the References list
    (each entry anchored ``ref-n``, with its fetched date). Citations and References are
    numbered 1, 2, 3 … in reading order, as the exports number them."""
    version = get_version(session, report, number)
    doc, numbers = renumbered(load_doc(session, version))
    known = {r.marker for r in doc.references}
    flagged: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    for section, claim in claims_of_version(session, int(version.id or 0)):
        if claim.state in FLAGGED_STATES:
            short, long = claim_note(session, claim, numbers.get(claim.marker))
            by_sentence = flagged.setdefault(section.key, {})
            sentence = renumber_citations(claim.sentence, numbers)
            by_sentence.setdefault(sentence, []).append((claim.state, short, long))
    line = version_claims(session, version)["line"]
    parts = [
        f'<div class="eg-report"><h1>{esc(doc.title)}</h1>'
        f'<p class="eg-version-line">{esc(line)}</p>'
    ]
    for n, s in enumerate(doc.sections):
        if s.level >= 1:
            level = min(s.level + 1, 6)
            parts.append(f"<h{level}>{esc(s.heading)}</h{level}>")
        body = strip_version_line(s.body) if n == 0 and s.level == 0 else s.body
        notes = list(flagged.get(s.key, {}).items())
        parts.append(flagged_body_html(body, known, notes) if notes else markdown_html(body, known))
    if doc.references:
        parts.append('<h2>References</h2><ol class="eg-refs">')
        for r in doc.references:
            fetched = (
                f' <span class="eg-muted">— fetched {esc(r.fetched)}</span>' if r.fetched else ""
            )
            parts.append(
                f'<li id="ref-{r.marker}" value="{r.marker}">[{r.marker}] '
                f"{link_html(r.url, r.title or r.url)}{fetched}</li>"
            )
        parts.append("</ol>")
    parts.append("</div>")
    return "".join(parts)


def version_timeline(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Each committed version with the run that produced it and what changed."""
    out = []
    for v in versions_of(session, report_id):
        run = session.get(UpdateRun, v.run_id) if v.run_id else None
        statuses = Counter(s.status for s in sections_of(session, v.id))
        out.append(
            {
                "number": v.number,
                "as_of": day(v.as_of),
                "committed": stamp(v.created_at),
                "run_id": v.run_id,
                "kind": run.kind if run else "",
                "kind_label": run_kind_label(run.kind) if run else "",
                "sections": sum(statuses.values()),
                "statuses": dict(statuses),
                "status_labels": {section_status_label(k): n for k, n in statuses.items()},
                "stale_citations": v.stale_citations,
                "claims": version_claims(session, v)["counts"],
                "metrics": v.metrics or {},
            }
        )
    return out


def version_diff(session: Session, report: Report, a: int, b: int) -> list[dict[str, Any]]:
    """Section-by-section diff of version ``a`` → ``b`` (matched by section key)."""
    old = {s.key: s for s in sections_of(session, get_version(session, report, a).id)}
    new_sections = sections_of(session, get_version(session, report, b).id)
    new = {s.key: s for s in new_sections}
    out = []
    order = [s.key for s in new_sections] + [k for k in old if k not in new]
    for key in order:
        o, n = old.get(key), new.get(key)
        heading = (n or o).heading or "(opening paragraph)"  # type: ignore[union-attr]
        before, after = (o.body if o else ""), (n.body if n else "")
        if o is None:
            kind = "added"
        elif n is None:
            kind = "removed"
        elif before == after and o.heading == n.heading:
            kind = "unchanged"
        else:
            kind = "changed"
        out.append(
            {
                "key": key,
                "heading": heading,
                "kind": kind,
                "html": side_by_side_html(before, after) if kind != "unchanged" else "",
                "text": after or before,
            }
        )
    return out


def export_bytes(session: Session, report: Report, number: int | None, fmt: str) -> bytes:
    """The exported file's bytes, through the same ``export_version`` the CLI uses."""
    with tempfile.TemporaryDirectory(prefix="evergreen-export-") as tmp:
        path = export_version(session, report, Path(tmp) / f"report.{fmt}", fmt=fmt, number=number)
        data = path.read_bytes()
    if not data:
        raise EvergreenError(f"The {fmt} export came out empty; nothing to download.")
    return data
