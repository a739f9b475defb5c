"""Claims: every cited sentence of a version, anchored to the passages that support it.

A claim is one (sentence, marker) pair of a section body. When a version is committed,
each claim records the snapshot it cites and the passages of that snapshot that support
it (:mod:`core.domain.anchors`). An update re-checks the claims of every source whose text
changed: a claim whose passages still hold moves to the newer snapshot; one whose passage
was edited or is gone must be revised, and if it is not (a rejected revision, a writer
that failed) it is committed as *stale*, still citing the older snapshot — never re-dated
to a snapshot that contradicts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from core.domain.anchors import anchor_claim
from core.domain.citations import cited_markers, strip_citations
from core.domain.passage_changes import passage_differences
from core.domain.passages import sentence_key
from core.domain.relocate import Located, locate
from core.domain.selectors import Selector
from core.domain.sentences import cited_sentences
from core.states import (
    BROKEN_OUTCOMES,
    HOLDING_OUTCOMES,
    TEXT_CHANGES,
    AnchorOutcome,
    ChangeKind,
    ClaimOutcome,
    ClaimState,
)
from core.store.models import Claim, Section, Snapshot

#: worst first: the outcome of a claim is the worst of its passages'
_SEVERITY = {
    AnchorOutcome.GONE: 4,
    AnchorOutcome.EDITED: 3,
    AnchorOutcome.REWORDED: 2,
    AnchorOutcome.MOVED: 1,
    AnchorOutcome.INTACT: 0,
}


@dataclass
class ClaimPlan:
    """A claim as it is (or will be) committed."""

    position: int
    sentence: str
    marker: int
    snapshot_id: int | None
    selectors: list[dict[str, Any]] = field(default_factory=list)
    state: ClaimState = ClaimState.SUPPORTED
    score: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "sentence": self.sentence,
            "marker": self.marker,
            "snapshot_id": self.snapshot_id,
            "selectors": self.selectors,
            "state": self.state,
            "score": self.score,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClaimPlan:
        return cls(
            position=int(data["position"]),
            sentence=str(data["sentence"]),
            marker=int(data["marker"]),
            snapshot_id=data.get("snapshot_id"),
            selectors=list(data.get("selectors") or []),
            state=ClaimState(data.get("state", ClaimState.SUPPORTED)),
            score=float(data.get("score") or 0.0),
            detail=dict(data.get("detail") or {}),
        )


# --------------------------------------------------------------------------- anchoring


def anchor(
    position: int, sentence: str, marker: int, snap: Snapshot | None, quote: str | None = None
) -> ClaimPlan:
    """Anchor one claim in the snapshot it cites."""
    if snap is None or snap.content is None:
        return ClaimPlan(
            position, sentence, marker, snap.id if snap else None, [], ClaimState.UNRESOLVED
        )
    found = anchor_claim(strip_citations(sentence), snap.content, quote)
    detail: dict[str, Any] = {}
    if found.missing:
        detail["missing"] = found.missing
    if found.contradicted:
        detail["contradicted"] = [
            {"old": stated, "new": p.text, "differences": [_field_change(stated, p.text)]}
            for stated, p in found.contradicted
        ]
    if quote and not found.selectors:
        detail["quote_not_found"] = quote[:300]
    return ClaimPlan(
        position,
        sentence,
        marker,
        snap.id,
        [s.as_dict() for s in found.selectors],
        ClaimState.SUPPORTED if found.supported else ClaimState.UNSUPPORTED,
        found.score,
        detail,
    )


def quote_map(quotes: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int], str]:
    return {
        (sentence_key(str(q.get("sentence", ""))), int(q.get("marker", 0))): str(q["quote"])
        for q in quotes
        if q.get("quote")
    }


def anchor_body(
    body: str,
    snapshots: Mapping[int, Snapshot],
    quotes: Iterable[Mapping[str, Any]] = (),
) -> list[ClaimPlan]:
    """Anchor every claim of ``body`` in the snapshots its markers resolve to."""
    hints = quote_map(quotes)
    plans = []
    for position, sentence, markers in cited_sentences(body):
        for marker in markers:
            if marker not in snapshots:
                continue  # a bare [n] with no reference: stays text, as parsed
            hint = hints.get((sentence_key(sentence), marker))
            plans.append(anchor(position, sentence, marker, snapshots[marker], hint))
    return plans


def stored_claims(session: Session, section_id: int) -> list[ClaimPlan]:
    rows = session.exec(
        select(Claim).where(Claim.section_id == section_id).order_by(col(Claim.position))
    ).all()
    return [ClaimPlan.from_dict(r.model_dump()) for r in rows]


def claims_of(session: Session, section: Section, cited: Mapping[int, Snapshot]) -> list[ClaimPlan]:
    """The claims of a committed section; anchored now if the version predates claims."""
    plans = stored_claims(session, section.id)
    if plans or not cited_markers(section.body):
        return plans
    return anchor_body(section.body, cited)


def write_claims(session: Session, section_id: int, plans: Sequence[ClaimPlan]) -> None:
    for p in plans:
        session.add(Claim(section_id=section_id, **p.as_dict()))


# --------------------------------------------------------------------------- re-checking


def check(plan: ClaimPlan, kind: str, current: Snapshot | None) -> dict[str, Any]:
    """Re-check one claim against its source's newest snapshot.

    ``kind`` is how the source changed (unchanged / minor / material / changed / gone /
    new / error). Returns the check as stored on the proposal: the claim, its outcome
    (intact, moved, reworded, edited, gone; ``unchecked`` when the source could not be
    reached; ``anchored`` / ``unsupported`` for a first look at an imported citation) and,
    per passage, old → new with the differing figures, dates and statuses.
    """
    row: dict[str, Any] = {**plan.as_dict(), "old_snapshot_id": plan.snapshot_id}
    if kind == ChangeKind.ERROR:
        return _unchecked(row, plan)
    if kind == ChangeKind.GONE or current is None or current.content is None:
        if kind != ChangeKind.GONE and (current is None or current.id == plan.snapshot_id):
            return _unchecked(row, plan)
        return _gone(row, plan)
    if plan.state in (ClaimState.UNSUPPORTED, ClaimState.UNRESOLVED) or not plan.selectors:
        # never (fully) anchored — imported unread, or support found for part of it: a
        # passage it did rest on that now says something else needs its sentence revised
        # ("cap of $1.5 billion" → "$2.0 billion from 2027, up from $1.5 billion"), even
        # though the old figure is still somewhere on the page; otherwise look again
        if plan.selectors and kind in TEXT_CHANGES:
            moved = _relocated(row, plan, current.id, current.content)
            if needs_revision(moved):
                return moved
        return _first_look(row, plan, current)
    if kind == ChangeKind.UNCHANGED or current.id == plan.snapshot_id:
        return {
            **row,
            "outcome": ClaimOutcome.INTACT,
            "new_snapshot_id": plan.snapshot_id,
            "passages": [],
        }
    return _relocated(row, plan, current.id, current.content)


def _unchecked(row: dict[str, Any], plan: ClaimPlan) -> dict[str, Any]:
    """The check of a claim whose source could not be read: it stays on its snapshot."""
    return {
        **row,
        "outcome": ClaimOutcome.UNCHECKED,
        "new_snapshot_id": plan.snapshot_id,
        "passages": [],
    }


def _gone(row: dict[str, Any], plan: ClaimPlan) -> dict[str, Any]:
    """The check of a claim whose source is gone: every passage of it is gone."""
    passages = [{"old": s.get("exact", ""), "new": None, "differences": []} for s in plan.selectors]
    return {**row, "outcome": ClaimOutcome.GONE, "new_snapshot_id": None, "passages": passages}


def _first_look(row: dict[str, Any], plan: ClaimPlan, current: Snapshot) -> dict[str, Any]:
    """The check of a claim never anchored: its support looked for in the page now."""
    fresh = anchor(plan.position, plan.sentence, plan.marker, current)
    outcome = (
        ClaimOutcome.ANCHORED if fresh.state == ClaimState.SUPPORTED else ClaimOutcome.UNSUPPORTED
    )
    if fresh.detail.get("contradicted"):  # it states a field the page now states otherwise
        return {
            **row,
            "outcome": ClaimOutcome.EDITED,
            "new_snapshot_id": current.id,
            "new_selectors": fresh.selectors,
            "passages": fresh.detail["contradicted"],
        }
    return {
        **row,
        "outcome": outcome,
        "new_snapshot_id": current.id,
        "new_selectors": fresh.selectors,
        "new_state": fresh.state,
        "score": fresh.score,
        "passages": [],
        "detail": fresh.detail,
    }


def _relocated(
    row: dict[str, Any], plan: ClaimPlan, snapshot_id: int | None, content: str
) -> dict[str, Any]:
    """The check of an anchored claim against a newer snapshot: each of its passages
    re-found in ``content``; the claim's outcome is the worst of theirs."""
    located: list[Located] = [locate(Selector.from_dict(s), content) for s in plan.selectors]
    outcome = max((loc.outcome for loc in located), key=lambda o: _SEVERITY[o])
    return {
        **row,
        "outcome": outcome,
        "new_snapshot_id": snapshot_id,
        "new_selectors": [loc.selector.as_dict() for loc in located if loc.selector],
        "passages": [
            {"old": loc.old, "new": loc.new, "differences": loc.differences, "outcome": loc.outcome}
            for loc in located
            if loc.outcome not in (AnchorOutcome.INTACT, AnchorOutcome.MOVED)
        ],
    }


def _field_change(stated: str, passage: str) -> str:
    found = passage_differences(stated, passage)
    return found[0] if found else f"{stated} → {passage.strip()}"


def needs_revision(checked: dict[str, Any]) -> bool:
    return checked.get("outcome") in BROKEN_OUTCOMES


def carried(checked: Mapping[str, Any], position: int, sentence: str) -> ClaimPlan:
    """The committed claim for a sentence kept as it was, after its check."""
    outcome = checked.get("outcome")
    base = ClaimPlan.from_dict(checked)
    base.position, base.sentence = position, sentence
    if outcome in HOLDING_OUTCOMES:
        base.snapshot_id = checked.get("new_snapshot_id")
        base.selectors = list(checked.get("new_selectors") or base.selectors)
        base.state = ClaimState.SUPPORTED
        base.detail = {}
    elif outcome in (ClaimOutcome.ANCHORED, ClaimOutcome.UNSUPPORTED):
        base.snapshot_id = checked.get("new_snapshot_id")
        base.selectors = list(checked.get("new_selectors") or [])
        base.state = ClaimState(checked.get("new_state", ClaimState.UNSUPPORTED))
    elif outcome in BROKEN_OUTCOMES:
        base.state = ClaimState.STALE  # cites the older snapshot, which still says it
        base.detail = {"outcome": outcome, "passages": checked.get("passages", [])}
    return base


def plan_commit(
    body: str,
    checks: Sequence[Mapping[str, Any]],
    newest: Mapping[int, Snapshot],
    quotes: Iterable[Mapping[str, Any]] = (),
) -> list[ClaimPlan]:
    """The claims to commit for a section body.

    A sentence the update left as it was keeps its checked claim (moved to the newer
    snapshot if its passages hold, stale otherwise); a new or rewritten sentence is
    anchored in the newest snapshot of each source it cites.
    """
    by_key: dict[tuple[str, int], Mapping[str, Any]] = {}
    for c in checks:
        by_key.setdefault((sentence_key(str(c["sentence"])), int(c["marker"])), c)
    hints = quote_map(quotes)
    plans: list[ClaimPlan] = []
    for position, sentence, markers in cited_sentences(body):
        key = sentence_key(sentence)
        for marker in markers:
            old = by_key.get((key, marker))
            if old is not None:
                plans.append(carried(old, position, sentence))
            elif marker in newest:
                hint = hints.get((key, marker))
                plans.append(anchor(position, sentence, marker, newest[marker], hint))
    return plans


def citation_snapshots(plans: Sequence[ClaimPlan], newest: Mapping[int, int]) -> dict[int, int]:
    """marker → the snapshot a section's citation points at: the one its claims cite
    (the oldest, when a stale claim still cites an older one), else the newest."""
    out = dict(newest)
    by_marker: dict[int, list[int]] = {}
    for p in plans:
        if p.snapshot_id is not None:
            by_marker.setdefault(p.marker, []).append(p.snapshot_id)
    for marker, ids in by_marker.items():
        out[marker] = min(ids)
    return out


def stale_count(plans: Iterable[ClaimPlan]) -> int:
    return sum(1 for p in plans if p.state == ClaimState.STALE)


def claim_counts(states: Iterable[str]) -> dict[str, int]:
    """How many claims are in each state (and in all), from their states."""
    counts = dict.fromkeys(("claims", *ClaimState), 0)
    for state in states:
        counts["claims"] += 1
        counts[state] = counts.get(state, 0) + 1
    return counts
