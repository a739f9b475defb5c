"""The plain-words lines a proposal gives: what changed in each claim's source, what a
page now declares that no sentence says, what the writer's draft got wrong, what the
budget cut. One line per fact, sources named by title and marker, never by address."""

from __future__ import annotations

from collections.abc import Iterable

from core.domain.claim_words import short_title
from core.domain.declared_fields import stated_fields
from core.domain.sentences import cited_sentences
from core.domain.source_plan import Budget
from core.engine.draft_check import DraftCheck
from core.states import ClaimOutcome
from core.writers.base import ClaimUpdate, EvidenceChange, declared_news


def explain(updates: list[ClaimUpdate]) -> str:
    """One plain line per changed claim: what the source says now."""
    lines: list[str] = []
    for u in updates:
        if u.differences:
            said = "; ".join(_distinct(u.differences))
            stop = "" if said.endswith((".", ".”", "?”", "!”")) else "."
            line = f"{named(u.title, u.marker)}: {said}{stop}"
        elif u.outcome == ClaimOutcome.GONE:
            line = f"{named(u.title, u.marker)} no longer has the passage a sentence cites."
        else:
            line = f"{named(u.title, u.marker)}: a passage a sentence rests on was rewritten."
        if line not in lines:
            lines.append(line)
    return " ".join(lines)


_ARTICLES = {"a", "an", "the"}


def _gist(side: str) -> str:
    words = [w for w in side.casefold().replace(":", " ").split() if w not in _ARTICLES]
    return " ".join(words)


def _distinct(differences: Iterable[str]) -> list[str]:
    """The differences to say, each once: "a proposed → an approved" goes unsaid beside
    "Status: Proposed → Approved" (the same change, an article apart)."""
    said = list(dict.fromkeys(str(d) for d in differences))
    pairs = [[_gist(side) for side in d.split(" → ")] for d in said]
    keep = []
    for i, d in enumerate(said):
        mine = pairs[i]
        covered = len(mine) == 2 and any(
            j != i
            and len(other) == 2
            and other != mine
            and all(m and f" {m} " in f" {o} " for m, o in zip(mine, other, strict=True))
            for j, other in enumerate(pairs)
        )
        if not covered:
            keep.append(d)
    return keep


def named(title: str, marker: int) -> str:
    """A source as a rationale names it: its title without subtitle and its marker; a
    source known only by its address is "source [n]" (no raw URL in the text)."""
    name = short_title(title or "")
    if not name or "://" in name or name.startswith("www."):
        return f"source [{marker}]"
    return f"{name} [{marker}]"


def sources_fit(n: int) -> str:
    """ "1 new source fits" / "3 new sources fit"."""
    return "1 new source fits" if n == 1 else f"{n} new sources fit"


def unstated_news(body: str, changes: list[EvidenceChange]) -> list[str]:
    """For each cited page whose declared status changed while no sentence citing it states
    that field: one line saying so (the writer is asked to state it)."""
    out = []
    for change in changes:
        labels = declared_news(change)
        if not labels:
            continue
        said = {
            label.casefold()
            for _pos, sentence, markers in cited_sentences(body)
            if change.marker in markers
            for label, _value in stated_fields(sentence)
        }
        missing = [label for label in labels if label.casefold() not in said]
        if missing:
            title = change.new.title if change.new else f"source [{change.marker}]"
            moves = [r.removeprefix("header ") for r in change.reasons if r.startswith("header ")]
            wanted = [m for m in moves if m.split(":", 1)[0].strip() in missing]
            out.append(
                f"{named(title, change.marker)} now declares {'; '.join(wanted)}, which no "
                "sentence said; the new text states it."
            )
    return out


def draft_flags(checked: DraftCheck) -> list[str]:
    if not checked.unsupported:
        return []
    markers = ", ".join(f"[{m}]" for m in dict.fromkeys(m for _s, m in checked.unsupported))
    return [
        f"needs attention: {len(checked.unsupported)} new or rewritten sentence(s) have no "
        f"passage in the page they cite ({markers}) that supports them; check them against "
        "the evidence before approving"
    ]


def corrections(checked: DraftCheck) -> list[str]:
    if not checked.corrected:
        return []
    return [
        "The writer's draft stated a field its page declares otherwise; corrected to the "
        "page's value: " + "; ".join(checked.corrected) + "."
    ]


def shortened(markers: list[int], titles: dict[int, str], budget: Budget) -> list[str]:
    if not markers:
        return []
    names = ", ".join(f"{titles.get(m) or 'source'} [{m}]" for m in markers)
    return [
        f"Shortened to the section's budget of {budget.words} words: dropped sentences of "
        f"its least relevant sources ({names})."
    ]
