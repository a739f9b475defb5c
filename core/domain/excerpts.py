"""A page cut to what a writer needs of it: its opening, then its passages most about a
topic, in page order (:func:`excerpt`).

A page's first characters say what it is (its title block, its abstract), but what it
says about a section's subject can be anywhere: a release schedule's lifespan paragraph
sits after its whole timetable. The passages are the units claims are quoted from
(``core.domain.passages``: sentences, list items, table rows, fields), so an excerpt
never cuts one in half, and a quote taken from it is found in the page.
"""

from __future__ import annotations

from core.domain.passages import Passage, passages
from core.domain.relevance import Relevance

GAP = "\n[…]\n"  # marks the text an excerpt leaves out between two passages
MIN_WORDS = 4  # distinct words a paragraph needs to be chosen for its topic


def excerpt(content: str, topic: Relevance, limit: int, opening: int) -> str:
    """``content`` within about ``limit`` characters: the passages of its first
    ``opening`` characters, then its paragraphs closest in meaning to ``topic`` (one
    ``Relevance`` for every page a prompt excerpts: the topic is embedded once) — as
    much of each as fits, whole passages only — in page order, ``[…]`` where text is
    left out. A page that fits is returned whole; one without passages, cut at
    ``limit``."""
    text = content.strip()
    if len(text) <= limit:
        return text
    units = passages(text)
    if not units:
        return text[:limit].rsplit(" ", 1)[0] + " […]"
    chosen = [p for p in units if p.end <= opening] or [units[0]]
    room = limit - (chosen[-1].end - chosen[0].start)
    taken = {p.start for p in chosen}
    for block in _ranked(text, _paragraphs(text, units), topic):
        for p in block:
            size = len(p.text) + len(GAP)
            if size > room:
                break
            if p.start not in taken:
                chosen.append(p)
                taken.add(p.start)
                room -= size
    return _joined(text, sorted(chosen, key=lambda p: p.start), units)


def _paragraphs(text: str, units: tuple[Passage, ...]) -> list[list[Passage]]:
    """The passages grouped by paragraph (no blank line between neighbours)."""
    out = [[units[0]]]
    for before, p in zip(units, units[1:], strict=False):
        if "\n\n" in text[before.end : p.start].replace(" ", ""):
            out.append([p])
        else:
            out[-1].append(p)
    return out


def _ranked(text: str, blocks: list[list[Passage]], topic: Relevance) -> list[list[Passage]]:
    """The paragraphs closest in meaning to ``topic``, best first (the relevance model's
    cosine: a release schedule's "3.11 will receive bugfix updates … for 18 months" is
    about end-of-life dates though it shares no word with them). A paragraph of under
    MIN_WORDS distinct words (a heading, an editor's footer) or a lead-in whose list
    it does not hold ("… include:") is not worth its place."""
    kept = [
        b
        for b in blocks
        if len(frozenset().union(*(p.tokens for p in b))) >= MIN_WORDS
        and not b[-1].text.endswith(":")
    ]
    scores = topic.scores([text[b[0].start : b[-1].end] for b in kept])
    ranked = sorted(zip(scores, range(len(kept)), kept, strict=True), key=lambda x: (-x[0], x[1]))
    return [b for _s, _i, b in ranked]


def _joined(text: str, chosen: list[Passage], units: tuple[Passage, ...]) -> str:
    """The ``chosen`` passages with the page's own text between neighbours and GAP
    where passages are left out (after the last one too, when the page goes on)."""
    index = {p.start: i for i, p in enumerate(units)}
    out = [text[chosen[0].start : chosen[0].end]]
    for before, p in zip(chosen, chosen[1:], strict=False):
        adjacent = index[p.start] == index[before.start] + 1
        out.append(text[before.end : p.start] if adjacent else GAP)
        out.append(text[p.start : p.end])
    if chosen[-1].start != units[-1].start:
        out.append(GAP.rstrip())
    return "".join(out)
