"""Read models of the Review cards: one card per section proposal, with the claims of the
section whose source passage was edited or is gone, what changed in plain words, and the
same as escaped HTML."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from core.claim_words import claim_change_text
from core.diffing import diff_stats, inline_html, side_by_side_html, word_diff
from core.models import Snapshot, Source
from core.views import esc, evidence_rows_html


def _cited_keys(body: str) -> set[tuple[str, int]]:
    """(sentence, marker) pairs of a body, compared as a commit compares them."""
    from core.anchors import sentence_key
    from core.claims import cited_sentences

    return {
        (sentence_key(sentence), marker)
        for _, sentence, markers in cited_sentences(body)
        for marker in markers
    }


def _source_title(
    session: Session, marker: int, check: dict[str, Any], titles: dict[int, str]
) -> str:
    if titles.get(marker):
        return str(titles[marker])
    for key in ("old_snapshot_id", "new_snapshot_id", "snapshot_id"):
        snap = session.get(Snapshot, check[key]) if check.get(key) else None
        if snap is not None and snap.title:
            return snap.title
        if snap is not None:
            source = session.get(Source, snap.source_id)
            if source is not None and (source.title or source.url):
                return source.title or source.url
    return f"source [{marker}]"


def claim_changes(
    session: Session, checks: list[dict[str, Any]], proposed: str, titles: dict[int, str]
) -> list[dict[str, Any]]:
    """The claims of a section whose passage was edited or is gone, each with the source,
    what changed, and whether the proposed text still says the same sentence."""
    from core.anchors import sentence_key

    kept = _cited_keys(proposed)
    out = []
    for check in checks:
        if check.get("outcome") not in ("edited", "gone"):
            continue
        marker = int(check.get("marker") or 0)
        sentence = str(check.get("sentence") or "")
        out.append(
            {
                "marker": marker,
                "source": _source_title(session, marker, check, titles),
                "outcome": check.get("outcome"),
                "change": claim_change_text(check),
                "sentence": sentence,
                "unchanged_in_proposal": (sentence_key(sentence), marker) in kept,
                "passages": [
                    {"old": p.get("old") or "", "new": p.get("new")}
                    for p in check.get("passages") or []
                ],
            }
        )
    return out


def _passage_diff_html(old: str, new: str) -> str:
    """A source passage's word diff, styled like the section diff but with classes of its
    own (it sits in a folded list; the card's main diff keeps ``eg-del`` / ``eg-ins``)."""
    return (
        inline_html(word_diff(old, new))
        .replace('<del class="eg-del">', '<del class="eg-p-del">')
        .replace('<ins class="eg-ins">', '<ins class="eg-p-ins">')
    )


def claim_changes_html(changes: list[dict[str, Any]], *, new_text: bool = True) -> str:
    """The changed claims of one card as escaped HTML: one line per claim
    ("<source> [n]: <what changed>"), the report sentence under it, and the passages.
    With ``new_text`` (the card proposes a different text) each sentence says whether
    that text revises it."""
    if not changes:
        return ""
    items = []
    for c in changes:
        note = ""
        if new_text and c["unchanged_in_proposal"]:
            note = '<span class="eg-flag eg-flag-stale">unchanged in the new text</span>'
        elif new_text:
            note = '<span class="eg-flag eg-flag-ok">revised in the new text</span>'
        passages = "".join(
            f"<li>{_passage_diff_html(p['old'], p['new'])}</li>"
            if p["new"] is not None
            else f'<li><del class="eg-p-del">{esc(p["old"])}</del> (gone)</li>'
            for p in c["passages"]
        )
        details = (
            f"<details><summary>source passages</summary><ul>{passages}</ul></details>"
            if passages
            else ""
        )
        items.append(
            f'<li><div class="eg-claim-line"><b>{esc(c["source"])} [{esc(c["marker"])}]</b>: '
            f"{esc(c['change'])}</div>"
            f'<div class="eg-claim-sentence">“{esc(c["sentence"])}” {note}</div>{details}</li>'
        )
    return f'<ul class="eg-claims">{"".join(items)}</ul>'


def review_cards(session: Session, run_id: int) -> list[dict[str, Any]]:
    """One card per section proposal of a run, with its diff, its changed claims and its
    evidence as safe HTML.

    ``stale_if_kept``: claims whose passage was edited or is gone — stale if the section
    is kept as it is (a keep, or a rejected revision). ``stale_if_approved``: those of them
    whose sentence the proposed text (or the analyst's edit) still says unchanged.
    """
    from core.review import proposals_of

    cards = []
    for p in proposals_of(session, run_id):
        old = p.old_text or ""
        if p.analyst_text is not None:
            new = p.analyst_text
        elif p.action == "keep":
            new = p.new_text or old
        else:
            new = p.new_text or ""
        changed = p.action != "keep" or new != old
        titles = {
            int(e["marker"]): e.get("title") or e.get("url") or ""
            for e in p.evidence or []
            if e.get("marker") is not None
        }
        removed = p.action == "remove"
        changes = claim_changes(session, list(p.claims or []), "" if removed else new, titles)
        flags = [str(f) for f in p.flags or []]
        cards.append(
            {
                "key": p.key,
                "heading": p.heading or "(opening paragraph)",
                "level": p.level,
                "action": p.action,
                "decision": p.decision,
                "rationale": p.rationale,
                "flags": flags,
                "attention": [f for f in flags if f.lower().startswith("needs attention")],
                "old_text": old,
                "new_text": p.new_text or "",
                "proposed_text": new,
                "edited": p.analyst_text is not None,
                "changed": changed,
                "diff_html": side_by_side_html(old, new) if changed else "",
                "diff_stats": diff_stats(word_diff(old, new)) if changed else {},
                "evidence": list(p.evidence or []),
                "evidence_html": evidence_rows_html(list(p.evidence or [])),
                "claim_changes": changes,
                "claim_changes_html": claim_changes_html(changes, new_text=changed and not removed),
                "stale_if_kept": len(changes),
                "stale_if_approved": sum(c["unchanged_in_proposal"] for c in changes),
            }
        )
        cards[-1]["stale_on_commit"] = _stale_on_commit(p, cards[-1])
    return cards


def _stale_on_commit(p: Any, card: dict[str, Any]) -> int | None:
    """How many of the section's claims a commit with its current decision leaves stale
    (None while it is pending), following ``core.review.commit_run``."""
    if p.decision == "pending":
        return None
    accepted = p.decision == "approved"
    if p.action == "remove":
        return 0 if accepted else card["stale_if_kept"]
    if accepted and (p.analyst_text is not None or p.action != "keep"):
        return card["stale_if_approved"]
    return card["stale_if_kept"]
