"""The evidence behind one section in an update: which sources it cites, how each claim
fares in the newest copy of its source (``check_claims``), the claims a writer must
revise (``claim_updates``), and the rows the Review screen shows for each source."""

from __future__ import annotations

from typing import Any

from core.dates import day
from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.engine.claims import ClaimPlan, check, needs_revision
from core.engine.evidence import Checked, Found
from core.states import ChangeKind, ClaimOutcome
from core.writers.base import ClaimUpdate


def evidence_row(c: Checked) -> dict[str, Any]:
    return c.as_dict()


def found_row(f: Found) -> dict[str, Any]:
    return {
        "marker": f.evidence.marker,
        "url": f.evidence.url,
        "title": f.evidence.title,
        "kind": "new",
        "similarity": None,
        "reasons": [],
        "claims": [],
        "old_snapshot_id": None,
        "new_snapshot_id": f.snapshot.id,
        "old_date": None,
        "new_date": day(f.snapshot.as_of),
        "fit": round(f.score, 3),
    }


def check_claims(plans: list[ClaimPlan], by_marker: dict[int, Checked]) -> list[dict[str, Any]]:
    checks = []
    for plan in plans:
        c = by_marker.get(plan.marker)
        if c is None:
            checks.append(check(plan, "unchanged", None))
        else:
            checks.append(check(plan, c.kind, c.current))
    return checks


def claim_updates(checks: list[dict[str, Any]], by_marker: dict[int, Checked]) -> list[ClaimUpdate]:
    out = []
    for c in checks:
        if not needs_revision(c):
            continue
        src = by_marker.get(int(c["marker"]))
        title = ""
        if src is not None:
            snap = src.current or src.previous
            title = (snap.title if snap else "") or src.source.title or src.source.url
        passages = tuple((p["old"], p.get("new")) for p in c.get("passages", []))
        if not passages and c["outcome"] == ClaimOutcome.GONE:
            passages = tuple((s.get("exact", ""), None) for s in c.get("selectors", []))
        changed = {old for old, _new in passages}
        intact = tuple(
            exact
            for s in c.get("selectors", [])
            if (exact := s.get("exact")) and exact not in changed
        )
        out.append(
            ClaimUpdate(
                sentence=str(c["sentence"]),
                marker=int(c["marker"]),
                outcome=str(c["outcome"]),
                passages=passages,
                differences=("the page no longer exists",)
                if src is not None and src.kind == ChangeKind.GONE
                else tuple(d for p in c.get("passages", []) for d in p["differences"]),
                title=title,
                intact=intact if src is not None and src.kind != ChangeKind.GONE else (),
            )
        )
    return out


def still_stale(body: str, updates: list[ClaimUpdate]) -> list[ClaimUpdate]:
    """Claims the draft still states unrevised (same sentence, still citing the source)."""
    cited = {
        (sentence_key(sentence), marker)
        for _pos, sentence, markers in cited_sentences(body)
        for marker in markers
    }
    return [u for u in updates if (sentence_key(u.sentence), u.marker) in cited]


def page_texts(by_marker: dict[int, Checked], new: list[Found]) -> dict[int, str]:
    """marker → the text each cited or new page has now (gone pages left out)."""
    out = {
        m: c.current.content
        for m, c in by_marker.items()
        if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
    }
    out.update({f.evidence.marker: f.evidence.content for f in new if f.evidence.content})
    return out


def title_of(c: Checked) -> str:
    snap = c.current or c.previous
    return (snap.title if snap else "") or c.source.title or c.source.url
