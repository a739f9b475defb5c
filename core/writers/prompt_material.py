"""What the LLM writer puts into its prompts besides the question and heading.

Sources are quoted as delimited, untrusted material (``<source>`` blocks nothing inside
may close); a revision is shown its changed sources' heads and the passages its changed
claims now rest on, the changes as lines and the claims as ``<claim>`` blocks, and each
new source's opening and paragraphs closest to the section (``core.domain.excerpts``) with
its header block and link addresses left out (``page_words``); the repair note names the
sentences a revision left stating what a source no longer says.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from core.domain.claim_diff import ClaimChange
from core.domain.declared_fields import field_of
from core.domain.excerpts import excerpt
from core.domain.header_blocks import header_blocks, page_body
from core.domain.key_fact import typed
from core.domain.keyfacts import read_key_facts
from core.domain.material_tokens import material_tokens, prose_words
from core.domain.relevance import Relevance
from core.domain.spelling_fixes import undo_typo_fixes
from core.domain.text import strip_links
from core.states import ChangeKind, ClaimOutcome
from core.writers.base import ClaimUpdate, Evidence, EvidenceChange

_TAG = re.compile(r"<(/?)(source|current_section|claim|section)", re.I)  # the prompts' delimiters

REVISION_HEAD_CHARS = 800  # the head of a changed source that declares no facts
REVISION_NEW_CHARS = 1200  # a new source shown to a revision (a first report: at least as much)
REVISION_OPENING = 400  # of which its opening (what the page is)
CHANGE_LINES = 12  # changed passages a source shows at most
REWORDING_WORDS = 5  # a rewritten passage adding fewer new words, no figure, says the same


def quote_source(ev: Evidence, limit: int, text: str | None = None) -> str:
    """A source as quoted, delimited, untrusted material (``text``: the part of it to
    show, by default its content; its declared facts are always read from the whole)."""
    content = re.sub(r"\n{3,}", "\n\n", (ev.content if text is None else text).strip())
    if len(content) > limit:
        content = content[:limit].rsplit(" ", 1)[0] + " […]"
    # Nothing inside may close (or open) the delimiter.
    content = _TAG.sub(r"&lt;\1\2", content)
    title = " ".join((ev.title or ev.url).split()).replace("<", "&lt;")
    declared = "; ".join(
        f"{f.label}: {f.value}" for f in read_key_facts(ev.content) if typed(f) and f.value
    )
    declares = _TAG.sub(r"&lt;\1\2", f"declares: {one_line(declared)}\n") if declared else ""
    return (
        f'<source id="{ev.marker}">\ntitle: {title}\nurl: {ev.url}\n{declares}---\n'
        f"{content}\n</source>"
    )


def enclosed(text: str) -> str:
    """Text to put between the prompts' delimiters: none of them can open or close
    inside it."""
    return _TAG.sub(r"&lt;\1\2", text)


def one_line(text: str | None, limit: int = 400) -> str:
    flat = _TAG.sub(r"&lt;\1\2", " ".join((text or "").split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def revision_bundle(
    changes: Sequence[EvidenceChange], new_evidence: Sequence[Evidence], topic: str
) -> str:
    """What a revision shows the model of its sources. A changed source's passages are
    already in the prompt — the ``<claim>`` blocks quote what each changed sentence rests
    on now, the change lines what else was, now is or was added — so its block carries
    its title, address and declared facts (status, version, dates), and a short head
    only when it declares none (what the page is about). A new source is shown its
    opening and its paragraphs closest to ``topic`` (the section's heading and the
    question: ``core.domain.excerpts``), not its first 2,000 characters — a release
    schedule's lifespan paragraph sits after its whole timetable. An update costs a
    fraction of writing the section again: a release schedule that gained three bugfix
    dates was sent 2,000 characters of its 2021 timetable."""
    parts, shown = [], set()
    for change in changes:
        if change.new is None:
            continue
        declares = any(typed(f) and f.value for f in read_key_facts(change.new.content))
        head = "(its changes are listed above)" if declares else None
        parts.append(quote_source(change.new, REVISION_HEAD_CHARS, head))
        shown.add(change.new.marker)
    # A rewritten page whose cited passages are gone is offered as new evidence too; its
    # additions are in the change lines already, so it keeps its one block.
    fresh = [e for e in new_evidence if e.marker not in shown]
    if fresh:
        parts.append(new_sources(fresh, topic))
    return "\n\n".join(parts)


def new_sources(evidence: Sequence[Evidence], topic: str) -> str:
    """Pages new to a section as quoted material: each page's opening and its
    paragraphs closest to ``topic``, within REVISION_NEW_CHARS (``core.domain.excerpts``)."""
    relevance = Relevance(topic)  # the topic embedded once for every page
    parts = []
    for e in evidence:
        text = excerpt(page_words(e.content), relevance, REVISION_NEW_CHARS, REVISION_OPENING)
        parts.append(quote_source(e, len(text), text))
    return "\n\n".join(parts)


def page_words(content: str) -> str:
    """What a page says, as a writer is shown a new page: its header blocks left out —
    its status, version and dates are on the source's "declares:" line, and the rest of
    them (authors, review managers, links to pull requests) a section does not state —
    and each link reduced to its text (the quote check reads the page so too). A Swift
    proposal's opening was its header block; shown its words, the opening is its
    introduction."""
    return strip_links(page_body(content))


def describe_change(
    c: EvidenceChange, shown: Collection[str] = (), *, additions: bool = False
) -> str:
    """A changed source as lines: its reasons, then each passage that was, is now, was
    added or removed — leaving out what the prompt says already (a pair a ``<claim>``
    block quotes, ``shown``: passages as ``one_line`` gives them; a line the reasons
    quote or whose field change they name), a pair that says the same words in other
    markup ("PEP 563" → ":pep:`563`") and a passage of markup only (a link target).
    ``additions``: for an extension, which only adds to a section whose every claim
    still holds — what the page now says that it did not: no removed passage, no
    rewording (:func:`_reworded`), no header field (its reasons and "declares:" line
    say what matters of those)."""
    if c.kind == ChangeKind.GONE or c.new is None:
        return (
            f"Source [{c.marker}]: gone — the page no longer exists. Sentences citing "
            f"[{c.marker}] must drop that citation, and be removed if nothing else supports them."
        )
    lines = [f"Source [{c.marker}] ({one_line(c.new.title, 150)}): {c.kind}"]
    header = (
        {f.label.casefold() for b in header_blocks(c.new.content) for f in b.facts}
        if additions
        else set()
    )
    said = [one_line(r, 200) for r in list(c.reasons)[:6]]
    if said:
        lines.append("  reasons: " + "; ".join(said))
    fresh = [
        claim
        for claim in c.claims
        if not (claim.before and claim.after and any(one_line(claim.after) in p for p in shown))
        and not all(_said(line, said) for line in (claim.before, claim.after) if line)
        and not _restyled(claim)
        and not _markup_only(claim)
        and not (additions and (claim.after is None or _reworded(claim) or _field(claim, header)))
    ]
    listed: list[str] = []  # a line the page repeats (a table's "Security fixes only") once
    for claim in fresh:
        if claim.before and claim.after:
            line = f'  - was: "{one_line(claim.before)}"\n    now: "{one_line(claim.after)}"'
        elif claim.after:
            line = f'  - added: "{one_line(claim.after)}"'
        else:
            line = f'  - removed: "{one_line(claim.before)}"'
        if line not in listed:
            listed.append(line)
    return "\n".join(lines + listed[:CHANGE_LINES])


def telling(changes: Sequence[EvidenceChange]) -> list[tuple[EvidenceChange, str]]:
    """The changes an extension is shown, each with its lines
    (``describe_change(additions=True)``): all but a page that changed in words only (not
    materially) and that adds nothing (no line but its own) — a bibliography whose
    citation style moved, a reworded paragraph."""
    described = [(c, describe_change(c, additions=True)) for c in changes]
    return [
        (c, text)
        for c, text in described
        if c.kind != ChangeKind.CHANGED or c.new is None or "\n" in text
    ]


def _field(claim: ClaimChange, header: Collection[str]) -> bool:
    """Is the passage one of the page's header fields ("Discussions-To: …"; ``header``:
    their labels, casefolded)? What a page declares is on its source's "declares:"
    line, and a field whose change matters is in the reasons."""
    field = field_of(_bare(claim.after or ""))
    return field is not None and field[0].casefold() in header


def _reworded(claim: ClaimChange) -> bool:
    """Does the rewritten passage say what it said, in other words: the same figures,
    dates and statuses (spelling fixes undone), and fewer than REWORDING_WORDS words of
    prose it did not have ("parametrized" → "parameterized"; "state of" → "state
    belonging to")?"""
    before, after = claim.before or "", claim.after or ""
    if not (before and after):
        return False
    after = undo_typo_fixes(before, after)
    if material_tokens(before) != material_tokens(after):
        return False
    return sum((prose_words(after) - prose_words(before)).values()) < REWORDING_WORDS


def _markup_only(claim: ClaimChange) -> bool:
    """Is the changed passage markup only: no word of prose and no figure on either
    side ("__ https://mypy-lang.org", a rule line, a link target)?"""
    return not any(
        prose_words(line) or material_tokens(line) for line in (claim.before, claim.after) if line
    )


def _restyled(claim: ClaimChange) -> bool:
    """Does the changed claim say the same words in other markup, case or punctuation
    ("PEP 563" → ":pep:`563`"), with the same figures, dates and statuses?"""
    before, after = claim.before or "", claim.after or ""
    return (
        bool(before and after)
        and prose_words(before) == prose_words(after)
        and material_tokens(before) == material_tokens(after)
    )


def _said(line: str, reasons: Sequence[str]) -> bool:
    """Does a reason say this passage already: quote it ("adds “…”", "drops “…”") or
    name its field's change ("header Status: Draft → Deferred" for "Status: Draft")?"""
    bare = _bare(line)
    if any(bare in r for r in reasons):
        return True
    field = field_of(bare)
    return field is not None and any(
        r.startswith(f"header {field[0]}:") and field[1] in r for r in reasons
    )


def _bare(line: str) -> str:
    """A passage without its list marker, as the change's reasons quote it."""
    return re.sub(r"^(?:[-*+•]|\d+[.)])\s+", "", one_line(line))


def claim_passages(claims: Sequence[ClaimUpdate], marker: int) -> set[str]:
    """The passages of source ``marker`` that the ``<claim>`` blocks quote as what it
    says now."""
    return {
        one_line(new, 800) for u in claims if u.marker == marker for _o, new in u.passages if new
    }


def describe_claim(u: ClaimUpdate) -> str:
    """One claim to rewrite, as a <claim> block: the sentence, then each passage it rested
    on as it was and as the source now has it."""
    lines = [f'<claim source="{u.marker}">', f"sentence: {one_line(u.sentence, 1500)}"]
    if u.title:
        lines.append(f"title: {one_line(u.title, 150)}")
    for old, new in u.passages:
        lines.append(f"was: {one_line(old, 800)}")
        lines.append(f"now: {one_line(new, 800) if new is not None else '(gone)'}")
    if not u.passages:
        lines.append("now: (gone)" if u.outcome == ClaimOutcome.GONE else "now: (changed)")
    if u.differences:
        diffs = dict.fromkeys(one_line(d, 200) for d in u.differences)
        lines.append("differences: " + "; ".join(list(diffs)[:8]))
    lines.append("</claim>")
    return "\n".join(lines)


def stale_problem(stale: Sequence[ClaimUpdate]) -> str:
    sentences = list(dict.fromkeys((one_line(u.sentence, 300), u.marker) for u in stale))
    named = "; ".join(f'"{s}" (its <claim source="{m}"> block)' for s, m in sentences[:6])
    return (
        f"{len(sentences)} sentence(s) named in the <claim> blocks are unchanged and still "
        f"cite the source that no longer says them: {named}. Rewrite each so it states what "
        'its "now" passages say (the new figure, date or status, never the old one), or '
        "drop it when every passage is gone; keep every other sentence exactly as it is"
    )
