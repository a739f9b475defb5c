"""Read models for the app's screens (and any other door, such as the CLI).

Pure functions: each takes a Session (and ids), reads through the repository, and
returns plain dicts and lists — no Streamlit here. Functions whose name ends in
``_html`` return HTML in which *every* piece of text that came from a source, a
model or a person is escaped (``html.escape``) and every link is http(s) only, so
the app can show it with ``st.html`` without letting a fetched page run script.
"""

from __future__ import annotations

import html
import re
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from sqlmodel import Session, col, select

from core.citations import install, numbers_written, renumber_citations
from core.claim_words import claim_change_text, plain_reason, plain_unit
from core.costs import COST_FIELDS
from core.dates import as_utc, day, iso
from core.diffing import inline_html, side_by_side_html, word_diff
from core.errors import EvergreenError, NotFoundError
from core.labels import (
    change_kind_label,
    report_status_label,
    run_kind_label,
    run_status_label,
    section_status_label,
)
from core.models import (
    OPEN_RUN_STATUSES,
    Claim,
    Report,
    ReportVersion,
    Snapshot,
    Source,
    UpdateRun,
)
from core.pool import pool_of, snapshot_history
from core.report_settings import ReportSettings
from core.repository import get_version, load_doc, sections_of, versions_of
from core.run_liveness import run_state
from core.runs import open_run_for
from core.services import report_rows, run_cost
from core.source_spec import SourceSpec
from core.states import ChangeKind, ClaimState, RunStatus
from core.untrusted import clean_markdown, strip_bidi

EVIDENCE_KINDS = ("unchanged", "minor", "material", "changed", "gone", "new")
OPEN_STATUSES = OPEN_RUN_STATUSES
CLAIMS_SHOWN = 4  # changed claims listed per source before "n more"


# -- small helpers ---------------------------------------------------------------------
def esc(text: Any) -> str:
    """HTML-escape any value (None → ''), without bidi override characters."""
    return html.escape(strip_bidi("" if text is None else str(text)), quote=True)


_SAFE_URL = re.compile(r"^https?://[^\s\"'<>\\]+$", re.IGNORECASE)


def link_html(url: str | None, text: str | None = None) -> str:
    """An escaped link that opens in a new tab — only for http(s) URLs; else plain text."""
    label = esc(text or url or "")
    if url and _SAFE_URL.match(url):
        return f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer">{label}</a>'
    return label


def stamp(dt: datetime | None) -> str | None:
    """An instant for people: 'YYYY-MM-DD HH:MM UTC'."""
    return as_utc(dt).strftime("%Y-%m-%d %H:%M UTC") if dt else None


def _fmt_sim(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


# -- reports ---------------------------------------------------------------------------
def run_brief(run: UpdateRun | None) -> dict[str, Any] | None:
    """A run as the screens list it; ``status_label`` / ``kind_label`` are what to show."""
    if run is None:
        return None
    status = run_state(run)  # a run whose worker is gone reads "interrupted"
    return {
        "id": run.id,
        "report_id": run.report_id,
        "kind": run.kind,
        "kind_label": run_kind_label(run.kind),
        "status": status,
        "status_label": run_status_label(status),
        "progress": run.progress,
        "error": run.error,
        "as_of": day(run.as_of),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "version_id": run.version_id,
    }


def report_cards(session: Session) -> list[dict[str, Any]]:
    """What the Reports screen lists: report_rows plus the open run and the schedule."""
    from core.schedule import next_due

    cards = []
    for row in report_rows(session):
        report = session.get(Report, row["id"])
        run = open_run_for(session, row["id"])
        if run is None:  # a create run (no version yet) is not an "open" update run
            latest = session.exec(
                select(UpdateRun)
                .where(UpdateRun.report_id == row["id"])
                .order_by(col(UpdateRun.id).desc())
            ).first()
            run = latest if latest is not None and latest.status in OPEN_STATUSES else None
        try:
            due = next_due(session, report)
        except EvergreenError:  # unreadable stored settings: the Settings screen says why
            due = None
        last = row["last_update"]
        cards.append(
            {
                **row,
                "status_label": report_status_label(row.get("status")),
                "last_run_status_label": run_status_label(row.get("last_run_status")),
                "last_update": f"{last[:10]} {last[11:16]} UTC" if last else None,
                "open_run": run_brief(run),
                "every_days": ReportSettings.salvage(report.settings)[0].every_days,
                "next_due": day(due) if due else None,
                "temporal": temporal_source(row["source"]),
            }
        )
    return cards


def temporal_source(source: str) -> bool:
    """Can the source read pages as of a past date? (False for a setting that does not
    parse: the screens offer it no dates.)"""
    try:
        return SourceSpec.parse(source).temporal
    except EvergreenError:
        return False


def source_choices() -> list[str]:
    """Sources a new report can use: the sample, each local corpus, the web."""
    from core.sources.corpus import list_corpora

    sample = SourceSpec("sample")
    corpora = [
        SourceSpec.of_corpus(c["name"])
        for c in list_corpora()
        if c["name"] != sample.corpus_name and not c.get("error")
    ]
    return [str(spec) for spec in (sample, *corpora, SourceSpec("web"))]


def as_of_choices(source: str, after: datetime | None = None) -> list[str]:
    """Snapshot dates (YYYY-MM-DD) a temporal corpus offers as "as of" choices, later
    than ``after``; [] for a source that is not a temporal corpus."""
    from core.sources.corpus import Corpus

    try:
        name = SourceSpec.parse(source).corpus_name
    except EvergreenError:
        return []
    if name is None:  # the web: pages only as they are now
        return []
    try:
        corpus = Corpus.open(name)
    except EvergreenError:
        return []
    try:
        stamps = corpus.snapshot_dates()
    finally:
        corpus.close()
    out: list[str] = []
    for stamp in stamps:
        when = as_utc(datetime.fromisoformat(stamp.replace("Z", "+00:00")))
        if after is not None and when.date() <= as_utc(after).date():
            continue
        if day(when) not in out:
            out.append(day(when))
    return out


def update_as_of_choices(session: Session, report_id: int) -> list[str]:
    """As-of choices for "Update now": snapshot dates after the current version."""
    report = report_of(session, report_id)
    versions = versions_of(session, report_id)
    after = versions[-1].as_of if versions else None
    return as_of_choices(report.source, after)


def report_of(session: Session, report_id: int) -> Report:
    report = session.get(Report, int(report_id))
    if report is None:
        raise NotFoundError(f"No report {report_id}.")
    return report


# -- runs ------------------------------------------------------------------------------
def run_info(session: Session, run_id: int) -> dict[str, Any]:
    run = session.get(UpdateRun, int(run_id))
    if run is None:
        raise NotFoundError(f"No run {run_id}.")
    report = session.get(Report, run.report_id)
    version = session.get(ReportVersion, run.version_id) if run.version_id else None
    return {
        **(run_brief(run) or {}),
        "report_title": report.title if report else "",
        "summary": run.summary or {},
        "version": version.number if version else None,
    }


def runs_of(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Every run of a report, newest first."""
    runs = session.exec(
        select(UpdateRun).where(UpdateRun.report_id == report_id).order_by(col(UpdateRun.id).desc())
    )
    return [run_brief(r) for r in runs]  # type: ignore[misc]


def runs_awaiting_review(session: Session) -> list[dict[str, Any]]:
    runs = session.exec(
        select(UpdateRun)
        .where(UpdateRun.status == RunStatus.AWAITING_REVIEW)
        .order_by(col(UpdateRun.id).desc())
    )
    return [run_brief(r) for r in runs]  # type: ignore[misc]


# -- review ----------------------------------------------------------------------------
def _claim_items(claims: list[dict[str, Any]]) -> list[str]:
    """One escaped word diff per changed claim of a source, in plain text (no Markdown,
    table or link syntax); claims whose only change was that syntax are left out."""
    items = []
    for c in claims:
        before, after = plain_unit(c.get("before")), plain_unit(c.get("after"))
        if before == after:
            continue
        items.append(f"<li>{inline_html(word_diff(before, after))}</li>")
    return items


def _claims_cell(claims: list[dict[str, Any]]) -> str:
    items = _claim_items(claims)
    if not items:
        return "formatting only" if claims else "—"
    shown = "<ul>" + "".join(items[:CLAIMS_SHOWN]) + "</ul>"
    if len(items) > CLAIMS_SHOWN:
        shown += (
            f"<details><summary>{len(items) - CLAIMS_SHOWN} more changed claim(s)</summary>"
            f"<ul>{''.join(items[CLAIMS_SHOWN:])}</ul></details>"
        )
    return shown


def snapshot_dates(old: str | None, new: str | None, kind: str | None) -> str:
    """The snapshots an evidence row compares, for people: "2026-01-15 → 2026-04-15",
    "new on 2026-04-15", "2026-01-15, then removed"."""
    if kind == ChangeKind.GONE:
        return f"{old}, then removed" if old else "removed"
    if not old:
        return f"new on {new}" if new else "—"
    if not new or new == old:
        return str(old)
    return f"{old} → {new}"


def evidence_rows_html(rows: list[dict[str, Any]]) -> str:
    """The evidence changes behind one proposal as an escaped HTML table, in plain words:
    change kinds by their labels, reasons without category words, claims without Markdown
    or table syntax."""
    if not rows:
        return '<p class="eg-muted">No evidence changes behind this section.</p>'
    out = [
        '<table class="eg-ev"><thead><tr><th class="eg-w-n">[n]</th><th class="eg-w-s">Source'
        '</th><th class="eg-w-d">Snapshots</th><th class="eg-w-x">Similarity</th>'
        '<th class="eg-w-k">Change</th><th>Changed claims (before → after)</th></tr>'
        "</thead><tbody>"
    ]
    for r in rows:
        reasons = [plain_reason(x) for x in r.get("reasons") or []]
        dates = snapshot_dates(r.get("old_date"), r.get("new_date"), r.get("kind"))
        extra = "".join(f'<div class="eg-muted">{esc(x)}</div>' for x in reasons)
        if r.get("error"):
            extra += f'<div class="eg-muted">{esc(r["error"])}</div>'
        kind = r.get("kind")
        out.append(
            "<tr>"
            f"<td>[{esc(r.get('marker'))}]</td>"
            f"<td>{link_html(r.get('url'), r.get('title') or r.get('url'))}"
            f'<div class="eg-url">{esc(r.get("url"))}</div></td>'
            f"<td>{esc(dates)}</td>"
            f"<td>{esc(_fmt_sim(r.get('similarity')))}</td>"
            f'<td><span class="eg-kind eg-kind-{esc(kind)}">{esc(change_kind_label(kind))}'
            f"</span>{extra}</td>"
            f"<td>{_claims_cell(list(r.get('claims') or []))}</td>"
            "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


# -- reading a version -----------------------------------------------------------------
_MD = install(MarkdownIt("commonmark", {"html": False}).enable("table").disable("image"))


def _citation_html(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A citation (core.citations) as written, each number a link to its References entry
    when every marker it names has one (``env["eg_known"]``); else plain text."""
    token = tokens[idx]
    group = token.content
    if not set(token.meta["markers"]) <= env.get("eg_known", set()):
        return esc(group)
    pieces, pos = [], 0
    for start, end, n in numbers_written(group):
        pieces += [esc(group[pos:start]), f'<a class="eg-cite" href="#ref-{n}">{n}</a>']
        pos = end
    return "".join([*pieces, esc(group[pos:])])


_MD.add_render_rule("citation", _citation_html)


def markdown_html(text: str, known_markers: set[int] | None = None) -> str:
    """Markdown → HTML with raw HTML and images off (all text escaped) and ``[n]``
    citations linked to ``#ref-n``: the one place the app renders a body. The body is
    made inert first (``core.untrusted.clean_markdown``: no links, images, autolinks or
    raw HTML from a model, a page or an import), so its only links are the citations."""
    return _MD.render(clean_markdown(text or ""), {"eg_known": known_markers or set()})


# private-use characters: a note's place in a body survives Markdown rendering as text
_NOTE_OPEN, _NOTE_CLOSE = "\ue000", "\ue001"
_NOTE = re.compile(f"{_NOTE_OPEN}(\\d+){_NOTE_CLOSE}")
FLAGGED_STATES = ("stale", "unsupported")


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def claim_note(session: Session, claim: Claim, number: int | None = None) -> tuple[str, str]:
    """(short note, longer explanation) for a stale or unsupported claim, in plain words;
    ``number``: the source's number as the reader sees it (default: the stored marker)."""
    marker = claim.marker if number is None else number
    detail = claim.detail or {}
    if claim.state == ClaimState.STALE:
        snap = session.get(Snapshot, claim.snapshot_id) if claim.snapshot_id else None
        since = f" since {day(snap.as_of)}" if snap is not None and snap.as_of else ""
        passages = list(detail.get("passages") or [])
        change = claim_change_text({"outcome": detail.get("outcome"), "passages": passages})
        now = [p.get("new") for p in passages if p.get("new")]
        long = (
            f"The source [{marker}] now says: “{_clip(plain_unit(now[0]), 400)}”"
            if now
            else f"The passage of source [{marker}] this sentence relied on is gone."
        )
        long += f" This sentence still cites the source as it was{since}."
        return f"stale: source [{marker}] changed{since} ({_clip(change)})", long
    missing = [str(m) for m in detail.get("missing") or []]
    short = f"unsupported: not found in source [{marker}]"
    if missing:
        short += f" ({_clip(', '.join(missing), 80)} missing)"
    return short, "The cited source does not appear to say this; check the sentence."


def _note_html(notes: list[tuple[str, str, str]]) -> str:
    return "".join(
        f'<span class="eg-flag eg-flag-{esc(state)}" title="{esc(long)}">⚠ {esc(short)}</span>'
        for state, short, long in notes
    )


def _sentence_pattern(sentence: str) -> re.Pattern[str] | None:
    words = sentence.split()
    if not words or sentence.lstrip().startswith("|"):  # a table row: note it below
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words))


def flagged_body_html(
    body: str, known: set[int], flagged: list[tuple[str, list[tuple[str, str, str]]]]
) -> str:
    """A section body as safe HTML with a note after each flagged sentence; notes whose
    sentence cannot be found in the body are listed under it."""
    marked, leftovers = body, []
    notes: list[str] = []
    for sentence, sentence_notes in flagged:
        pattern = _sentence_pattern(sentence)
        m = pattern.search(marked) if pattern else None
        if m is None:
            leftovers.append((sentence, sentence_notes))
            continue
        notes.append(_note_html(sentence_notes))
        token = f"{_NOTE_OPEN}{len(notes) - 1}{_NOTE_CLOSE}"
        marked = marked[: m.end()] + token + marked[m.end() :]
    rendered = markdown_html(marked, known)
    rendered = _NOTE.sub(lambda m: " " + notes[int(m.group(1))], rendered)
    rendered = rendered.replace(_NOTE_OPEN, "").replace(_NOTE_CLOSE, "")
    if leftovers:
        rendered += (
            '<ul class="eg-flag-list">'
            + "".join(f"<li>“{esc(sentence)}” {_note_html(n)}</li>" for sentence, n in leftovers)
            + "</ul>"
        )
    return rendered


def version_claims(session: Session, version: ReportVersion) -> dict[str, Any]:
    """A version's claim counts (see ``core.export.claim_summary``) and a one-line
    summary: "Version 3 · as of 2026-07-15 · 36 claims, 0 stale"."""
    from core.export import claim_summary, version_line

    counts = claim_summary(session, version)
    line = version_line(version.number, day(version.as_of), counts).strip("_")
    return {"counts": counts, "line": line}


def version_html(session: Session, report: Report, number: int | None = None) -> str:
    """A committed version as safe HTML: sections, clickable [n] citations, a visible note
    after each sentence whose claim is stale or unsupported, and the References list
    (each entry anchored ``ref-n``, with its fetched date). Citations and References are
    numbered 1, 2, 3 … in reading order, as the exports number them."""
    from core.report_render import strip_version_line
    from core.report_state import renumbered
    from core.repository import claims_of_version

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
    from core.export import export_version

    with tempfile.TemporaryDirectory(prefix="evergreen-export-") as tmp:
        path = export_version(session, report, Path(tmp) / f"report.{fmt}", fmt=fmt, number=number)
        data = path.read_bytes()
    if not data:
        raise EvergreenError(f"The {fmt} export came out empty; nothing to download.")
    return data


# -- evidence --------------------------------------------------------------------------
def evidence_pool(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Each source in the report's pool with its last check and change kind."""
    out = []
    for entry in pool_of(session, report_id):
        source = session.get(Source, entry.source_id)
        history = snapshot_history(session, entry.source_id)
        latest = history[-1] if history else None
        out.append(
            {
                "marker": entry.marker,
                "source_id": entry.source_id,
                "url": source.url if source else "",
                "title": (latest.title if latest and latest.title else None)
                or (source.title if source else ""),
                "last_checked": stamp(entry.last_checked),
                "status": entry.status,
                "status_label": change_kind_label(entry.status),
                "snapshots": len(history),
                "latest_as_of": day(latest.as_of) if latest else "",
            }
        )
    return out


def snapshot_rows(session: Session, source_id: int) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "as_of": day(s.as_of),
            "fetched_at": stamp(s.fetched_at),
            "published": day(s.published),
            "title": s.title,
            "change_kind": s.change_kind,
            "kind_label": change_kind_label(s.change_kind),
            "similarity": s.similarity,
            "reasons": list(s.reasons or []),
            "reason_texts": [plain_reason(r) for r in s.reasons or []],
            "claims": list(s.claim_diff or []),
            "has_content": s.content is not None,
            "chars": len(s.content or ""),
        }
        for s in snapshot_history(session, source_id)
    ]


def snapshot_diff_html(session: Session, old_id: int, new_id: int) -> str:
    old, new = session.get(Snapshot, old_id), session.get(Snapshot, new_id)
    if old is None or new is None:
        raise NotFoundError("No such snapshot.")
    return side_by_side_html(old.content or "", new.content or "")


def snapshot_claims_html(session: Session, snapshot_id: int) -> str:
    snap = session.get(Snapshot, snapshot_id)
    if snap is None:
        raise NotFoundError(f"No snapshot {snapshot_id}.")
    items = _claim_items(list(snap.claim_diff or []))
    return f"<ul>{''.join(items)}</ul>" if items else ""


# -- history ---------------------------------------------------------------------------
def history(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Per committed version: continuity, cost, sections changed, evidence changes."""
    rows = []
    previous_keys: set[str] = set()
    for v in versions_of(session, report_id):
        sections = sections_of(session, v.id)
        keys = {s.key for s in sections}
        statuses = Counter(s.status for s in sections)
        run = session.get(UpdateRun, v.run_id) if v.run_id else None
        evidence = (run.summary or {}).get("evidence", {}) if run else {}
        cost = run_cost(session, run.id) if run else dict.fromkeys(COST_FIELDS, 0)
        rows.append(
            {
                "number": v.number,
                "as_of": day(v.as_of),
                "kind": run.kind if run else "",
                "kind_label": run_kind_label(run.kind) if run else "",
                "run_id": run.id if run else None,
                "metrics": v.metrics or {},
                "cost": {k: cost.get(k, 0) for k in COST_FIELDS},
                "writer_calls": int((run.summary or {}).get("writer_calls", 0)) if run else 0,
                "sections": {
                    "revised": statuses.get("revised", 0),
                    "extended": statuses.get("extended", 0),
                    "added": statuses.get("added", 0),
                    "removed": len(previous_keys - keys) if previous_keys else 0,
                    "kept": statuses.get("kept", 0),
                },
                "evidence": {k: int(evidence.get(k, 0)) for k in EVIDENCE_KINDS},
                "stale_citations": v.stale_citations,
                "claims": version_claims(session, v)["counts"],
            }
        )
        previous_keys = keys
    return rows


# -- settings --------------------------------------------------------------------------
def providers_of(source: str) -> dict[str, str]:
    """Which search provider and fetcher a report's source uses (for display)."""
    try:
        spec = SourceSpec.parse(source)
    except EvergreenError:
        return {"search": "none", "fetch": "none"}
    if spec.kind == "web":
        return {"search": "Tavily web search", "fetch": "crawl4ai / HTTP"}
    name = spec.corpus_name
    return {"search": f"local corpus '{name}' (BM25, as of a date)", "fetch": "local corpus"}


def report_settings(session: Session, report_id: int) -> dict[str, Any]:
    """What the Settings screen shows for a report: its settings (an invalid stored value
    at its default), ``problems`` (one line per invalid stored value, the same lines
    ``evergreen settings`` prints), the source and its providers."""
    report = report_of(session, report_id)
    settings, problems = ReportSettings.salvage(report.settings)
    return {
        **settings.model_dump(),
        "problems": problems,
        "source": report.source,
        "providers": providers_of(report.source),
    }
