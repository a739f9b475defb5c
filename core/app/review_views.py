"""Read models of the Review cards: one card per section proposal, with the claims of the
section whose source passage was edited or is gone, what changed in plain words, and the
same as escaped HTML."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from core.app.evidence_views import evidence_rows_html
from core.app.view_text import esc
from core.domain.claim_words import claim_change_text, claim_sentence, date_span, plain_unit
from core.domain.diffing import (
    diff_stats,
    inline_html,
    side_by_side_html,
    table_diff_html,
    word_diff,
)
from core.domain.labels import action_label, change_kind_label, decision_label
from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.engine.review import proposals_of
from core.states import Action, Decision
from core.store.models import SectionProposal, Snapshot, Source, UpdateRun


def _cited_keys(body: str) -> set[tuple[str, int]]:
    """(sentence, marker) pairs of a body, compared as a commit compares them."""
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


def _snapshot_day(session: Session, snapshot_id: Any) -> Any:
    snap = session.get(Snapshot, snapshot_id) if snapshot_id else None
    return snap.as_of if snap is not None else None


def claim_changes(
    session: Session,
    checks: list[dict[str, Any]],
    proposed: str,
    titles: dict[int, str],
    *,
    evidence: list[dict[str, Any]] | None = None,
    as_of: Any = None,
) -> list[dict[str, Any]]:
    """The claims of a section whose passage was edited or is gone, each with the source,
    what changed, one plain sentence saying it (``text``: "Kestrel Flats Storage Project
    capacity: 100 MW / 400 MWh → 160 MW / 650 MWh (source [7], 15 Jan → 15 Apr)") and
    whether the proposed text still says the same sentence. ``evidence``: the proposal's
    evidence rows (a removed page is said as such); ``as_of``: the run's date, the newest
    check of a removed page."""
    kept = _cited_keys(proposed)
    gone_pages = {int(e["marker"]) for e in evidence or [] if e.get("kind") == "gone"}
    out = []
    for check in checks:
        if check.get("outcome") not in ("edited", "gone"):
            continue
        marker = int(check.get("marker") or 0)
        sentence = str(check.get("sentence") or "")
        source = _source_title(session, marker, check, titles)
        old_day = _snapshot_day(session, check.get("old_snapshot_id"))
        new_day = _snapshot_day(session, check.get("new_snapshot_id")) or as_of
        # a check whose page could not be read at all has no new snapshot
        page_gone = marker in gone_pages or (
            check.get("outcome") == "gone" and not check.get("new_snapshot_id")
        )
        out.append(
            {
                "marker": marker,
                "source": source,
                "outcome": check.get("outcome"),
                "change": claim_change_text(check),
                "text": claim_sentence(
                    check, source, dates=date_span(old_day, new_day), page_gone=page_gone
                ),
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
    """The changed claims of one card as escaped HTML: one plain sentence per claim
    (its ``text``), the report sentence under it, and the passages.
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
            f"<li>{_passage_diff_html(plain_unit(p['old']), plain_unit(p['new']))}</li>"
            if p["new"] is not None
            else f'<li><del class="eg-p-del">{esc(plain_unit(p["old"]))}</del> (gone)</li>'
            for p in c["passages"]
        )
        details = (
            f"<details><summary>source passages</summary><ul>{passages}</ul></details>"
            if passages
            else ""
        )
        items.append(
            f'<li><div class="eg-claim-line">{esc(c["text"])}</div>'
            f'<div class="eg-claim-sentence">“{esc(plain_unit(c["sentence"]))}” {note}</div>'
            f"{details}</li>"
        )
    return f'<ul class="eg-claims">{"".join(items)}</ul>'


def review_cards(session: Session, run_id: int) -> list[dict[str, Any]]:
    """One card per section proposal of a run (``review_card``), in the run's order."""
    run = session.get(UpdateRun, int(run_id))
    as_of = run.as_of if run is not None else None
    return [review_card(session, p, as_of) for p in proposals_of(session, run_id)]


def review_card(session: Session, p: SectionProposal, as_of: Any) -> dict[str, Any]:
    """One section proposal's card, with its diff, its changed claims and its evidence as
    safe HTML; ``as_of``: the run's date (the newest check of a removed page).

    ``stale_if_kept``: claims whose passage was edited or is gone — stale if the section
    is kept as it is (a keep, or a rejected revision). ``stale_if_approved``: those of them
    whose sentence the proposed text (or the analyst's edit) still says unchanged.
    """
    old = p.old_text or ""
    new = _proposed_text(p, old)
    changed = p.action != Action.KEEP or new != old
    titles = _evidence_titles(p)
    removed = p.action == Action.REMOVE
    evidence = [_with_label(e) for e in p.evidence or []]
    changes = claim_changes(
        session,
        list(p.claims or []),
        "" if removed else new,
        titles,
        evidence=evidence,
        as_of=as_of,
    )
    flags = [str(f) for f in p.flags or []]
    changed_sentences = [c["sentence"] for c in changes]
    card = {
        "key": p.key,
        "heading": p.heading or "(opening paragraph)",
        "level": p.level,
        "action": p.action,
        "action_label": action_label(p.action),
        "decision": p.decision,
        "decision_label": decision_label(p.decision),
        "rationale": p.rationale,
        "flags": flags,
        "attention": [f for f in flags if f.lower().startswith("needs attention")],
        "old_text": old,
        "new_text": p.new_text or "",
        "proposed_text": new,
        "edited": p.analyst_text is not None,
        "changed": changed,
        "diff_html": (table_diff_html(old, new) or side_by_side_html(old, new, changed_sentences))
        if changed
        else "",
        "diff_stats": diff_stats(word_diff(old, new)) if changed else {},
        # the report sentences whose claims changed, marked in the Before column
        "highlighted": changed_sentences,
        "evidence": evidence,
        "evidence_html": evidence_rows_html(evidence),
        "claim_changes": changes,
        "claim_changes_html": claim_changes_html(changes, new_text=changed and not removed),
        "stale_if_kept": len(changes),
        "stale_if_approved": sum(c["unchanged_in_proposal"] for c in changes),
    }
    card["stale_on_commit"] = _stale_on_commit(p, card)
    return card


def _proposed_text(p: SectionProposal, old: str) -> str:
    """The text the card proposes: the analyst's edit, else the writer's new text (a keep
    without one keeps ``old``)."""
    if p.analyst_text is not None:
        return p.analyst_text
    if p.action == Action.KEEP:
        return p.new_text or old
    return p.new_text or ""


def _evidence_titles(p: SectionProposal) -> dict[int, str]:
    """Each evidence row's title (else its URL) by marker."""
    return {
        int(e["marker"]): e.get("title") or e.get("url") or ""
        for e in p.evidence or []
        if e.get("marker") is not None
    }


def _with_label(row: dict[str, Any]) -> dict[str, Any]:
    """An evidence row with ``kind_label`` ("Material change") beside its raw ``kind``."""
    return {**row, "kind_label": change_kind_label(row.get("kind"))}


def _stale_on_commit(p: Any, card: dict[str, Any]) -> int | None:
    """How many of the section's claims a commit with its current decision leaves stale
    (None while it is pending), following ``core.engine.review.commit_run``."""
    if p.decision == Decision.PENDING:
        return None
    accepted = p.decision == Decision.APPROVED
    if p.action == Action.REMOVE:
        return 0 if accepted else card["stale_if_kept"]
    if accepted and (p.analyst_text is not None or p.action != Action.KEEP):
        return card["stale_if_approved"]
    return card["stale_if_kept"]
