"""Read models of the evidence: the rows of evidence changes behind a proposal as escaped
HTML, a report's pool of sources, and each source's snapshots and their diffs."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from core.app.view_text import esc, link_html, stamp
from core.dates import day
from core.domain.claim_words import plain_reason, plain_unit
from core.domain.diffing import inline_html, side_by_side_html, word_diff
from core.domain.labels import change_kind_label
from core.errors import NotFoundError
from core.states import ChangeKind
from core.store.models import Snapshot, Source
from core.store.pool import pool_of, snapshot_history

CLAIMS_SHOWN = 4  # changed claims listed per source before "n more"


def _fmt_sim(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


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
