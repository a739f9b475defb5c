"""The offline writer's outline when the question names no parts: the retrieved pages
clustered by their words (average-link, deterministic), each cluster headed by the title
words its pages share.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core.domain.header_blocks import page_body
from core.domain.periods import PERIOD_WORD, TITLE_WORD
from core.domain.text import STOP, clean_inline, cosine, stem, strip_links, terms
from core.writers.base import Evidence

Link = Callable[[list[int], list[int]], float]
OPENING_CHARS = 1500  # a page's opening: where it says what it is about


def agglomerate(n: int, k: int, link: Link) -> list[list[int]]:
    """Average-link agglomerative clustering of items 0..n-1 down to k clusters
    (deterministic); ``link``: the similarity of two clusters (``linker``)."""
    clusters = [[i] for i in range(n)]
    while len(clusters) > k:
        best = (-1.0, 0, 0)
        for x in range(len(clusters)):
            for y in range(x):
                s = link(clusters[x], clusters[y])
                if s > best[0]:
                    best = (s, x, y)
        _, x, y = best
        clusters[y] = sorted(clusters[y] + clusters[x])
        del clusters[x]
    return clusters


def themed(
    clusters: list[list[int]], link: Link, named: Callable[[list[int]], bool]
) -> list[list[int]]:
    """The clusters that are themes: each cluster ``named`` says no name fits (a page
    alone, pages whose titles share no word) joins the theme it is nearest (average
    link). A first typing report as of 2016 had, beside "Type Hints", sections named
    after one page each: "Syntax for Delegating to a Subgenerator", "Python 3.3 Release
    Schedule" — a heading an analyst would not look for, kept for years. With no theme
    at all, the clusters stand."""
    has_name = [named(c) for c in clusters]
    themes = [c for c, ok in zip(clusters, has_name, strict=True) if ok]
    if not themes:
        return clusters
    for loose in (c for c, ok in zip(clusters, has_name, strict=True) if not ok):
        nearest = max(range(len(themes)), key=lambda t: (link(loose, themes[t]), -t))
        themes[nearest] = sorted(themes[nearest] + loose)
    return themes


def linker(vecs: list[dict[str, float]]) -> Link:
    """The average-link similarity of two clusters of ``vecs``' indices (each pair's
    cosine computed once, for clustering and for themes alike)."""
    sim = {(i, j): cosine(vecs[i], vecs[j]) for i in range(len(vecs)) for j in range(i)}

    def link(a: list[int], b: list[int]) -> float:
        total = sum(sim[(max(i, j), min(i, j))] if i != j else 1.0 for i in a for j in b)
        return total / (len(a) * len(b))

    return link


def heading_for(
    members: list[Evidence],
    title_idf: dict[str, float],
    question: str,
    others: Sequence[Evidence] = (),
) -> str:
    """A heading for a cluster of pages: a phrase two or more of their titles share that
    says more than the question does ("Flow batteries"); else the phrase their titles and
    openings share and the ``others`` (the rest of the report's pages) do not
    (``opening_phrase``: "Long-Duration Storage", "Thermal Storage"); else the titles'
    phrase after all; else their most telling shared title words; else the first page's
    title. The shared
    title words read as a list of keywords ("Fire, battery and storage"), and a phrase of
    the question's own words names no part of it ("Storage Project", in a report on
    battery storage projects)."""
    if len(members) == 1:
        return short_title(members[0].title)
    said = set(terms(question))
    phrase = shared_phrase([clean_inline(ev.title) for ev in members])
    if phrase and not set(terms(phrase)) <= said:
        return phrase
    return (
        opening_phrase(members, others, question)
        or phrase
        or _title_words(members, title_idf)
        or short_title(members[0].title)
    )


def opening_phrase(
    members: Sequence[Evidence], others: Sequence[Evidence], question: str
) -> str | None:
    """A run of two to four words of a member's title that most of ``members``' titles
    and openings hold (at least two of them, half or more) and fewest of ``others``' do;
    not a run of the question's words only, nor a member's whole title or a piece of a
    name (a run always after the same word, or always before one: "Ridge
    Solar-plus-Storage" of "Sable Ridge Solar-plus-Storage"), none starting or ending on
    a stop word, a number or a period. None when no such run is shared more by the
    members than by the others. A run of the openings alone names what pages say in
    passing ("PEP proposes", a link's "swift-evolution blob"), not what they are about."""
    said = set(terms(question))
    surface: dict[tuple[str, ...], str] = {}
    titled = set(_runs(members, said, surface, 0))
    whole = {clean_inline(page.title).casefold() for page in members}  # a page's, not theirs
    places: dict[tuple[str, ...], Places] = {}
    mine, theirs = _runs(members, said, surface, places=places), _runs(others, said, surface)
    need = max(2, -(-len(members) // 2))
    ranked = sorted(
        (
            -(len(pages) / len(members) - len(theirs.get(key, ())) / max(1, len(others))),
            -len(key),
            surface[key],
        )
        for key, pages in mine.items()
        if len(pages) >= need
        and key in titled
        and surface[key].casefold() not in whole
        and not places[key].piece()
        and len(pages) / len(members) > len(theirs.get(key, ())) / max(1, len(others))
    )
    if not ranked:
        return None
    text = ranked[0][2]
    return text[0].upper() + text[1:]


@dataclass
class Places:
    """Where a run of words occurs: the words (stemmed) before and after it, None at a
    sentence's edge or for a stop word."""

    before: set[str | None] = field(default_factory=set)
    after: set[str | None] = field(default_factory=set)

    def piece(self) -> bool:
        """A piece of a longer name: always after the same word, or always before one."""
        return any(len(words) == 1 and None not in words for words in (self.before, self.after))


def _runs(
    pages: Sequence[Evidence],
    said: set[str],
    surface: dict[tuple[str, ...], str],
    opening: int = OPENING_CHARS,
    places: dict[tuple[str, ...], Places] | None = None,
) -> dict[tuple[str, ...], set[int]]:
    """Stemmed runs of 2–4 words of each page's title and the first ``opening``
    characters of its words (header block out, links reduced to their text) → the pages
    (markers) holding it; ``surface`` gets each run's first spelling, ``places`` where
    it occurs (``Places``)."""
    out: dict[tuple[str, ...], set[int]] = {}
    for page in pages:
        body = strip_links(page_body(page.content))[:opening] if opening else ""
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", f"{clean_inline(page.title)}.\n{body}"):
            words = TITLE_WORD.findall(sentence)
            for n in (4, 3, 2):
                for i in range(len(words) - n + 1):
                    run = words[i : i + n]
                    if any(_loose_edge(w) or w[0].isdigit() for w in (run[0], run[-1])):
                        continue
                    key = tuple(stem(w.casefold()) for w in run)
                    if not all(k in said for k in key):
                        out.setdefault(key, set()).add(page.marker)
                        surface.setdefault(key, " ".join(run))
                        if places is not None:
                            _place(places.setdefault(key, Places()), words, i, n)
    return out


def _place(places: Places, words: list[str], i: int, n: int) -> None:
    """Note where ``words[i : i + n]`` occurs: the words beside it."""
    before = words[i - 1].casefold() if i else None
    after = words[i + n].casefold() if i + n < len(words) else None
    places.before.add(None if before is None or before in STOP else stem(before))
    places.after.add(None if after is None or after in STOP else stem(after))


def theme_name(members: list[Evidence], title_idf: dict[str, float]) -> str | None:
    """The phrase two or more of the pages' titles share, else their most telling shared
    title words (title-cased, up to three); None for one page, or titles sharing none."""
    if len(members) == 1:
        return None
    return shared_phrase([clean_inline(ev.title) for ev in members]) or _title_words(
        members, title_idf
    )


def _title_words(members: list[Evidence], title_idf: dict[str, float]) -> str | None:
    """The most telling words two or more of the pages' titles share, as a list ("Fire,
    battery and storage"); None when they share none."""
    words: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for ev in members:
        seen: set[str] = set()
        for w in re.findall(r"[^\W_][\w-]*", clean_inline(ev.title)):
            key = terms(w)
            if not key or key[0] in seen:
                continue
            seen.add(key[0])
            words[key[0]] += 1
            surface.setdefault(key[0], w)
    ranked = sorted(
        words, key=lambda t: (-(words[t] * title_idf.get(t, 1.0)) if words[t] > 1 else 0, t)
    )
    top = [surface[t] for t in ranked if words[t] > 1][:3]
    if not top:
        return None
    top = [w if w.isupper() else w.capitalize() if i == 0 else w.lower() for i, w in enumerate(top)]
    return top[0] if len(top) == 1 else f"{', '.join(top[:-1])} and {top[-1]}"


def shared_phrase(titles: list[str]) -> str | None:
    """The longest run of two or more words (no stop word or period at either end) that at least
    two titles share — "Type hints" from "Type Hints for …" and "… Type Hints"; "Type
    Parameter" from "Type Parameter Syntax" and "… for Type Parameters" (words match by
    their stems) — as a heading; None when no titles share one."""
    counts: Counter[tuple[str, ...]] = Counter()
    surface: dict[tuple[str, ...], str] = {}
    for title in titles:
        words = TITLE_WORD.findall(title)
        seen: set[tuple[str, ...]] = set()
        for n in (4, 3, 2):
            for i in range(len(words) - n + 1):
                run = words[i : i + n]
                if _loose_edge(run[0]) or _loose_edge(run[-1]):
                    continue
                key = tuple(stem(w.casefold()) for w in run)
                if key not in seen:
                    seen.add(key)
                    counts[key] += 1
                    surface.setdefault(key, " ".join(run))
    shared = [k for k, n in counts.items() if n >= 2]
    if not shared:
        return None
    best = max(shared, key=lambda k: (len(k), counts[k], -len(surface[k])))
    text = surface[best]
    return text[0].upper() + text[1:] if not text[:1].isupper() else text


def _loose_edge(word: str) -> bool:
    """A word a heading does not start or end on: a stop word, or a period of a series
    ("Q3 2026 storage market recap" and "Q1 2026 storage market recap" share "storage
    market recap", not a year's)."""
    return word.casefold() in STOP or bool(PERIOD_WORD.match(word))


def part_title(title: str) -> str:
    """A page's title as a "Parent: part" heading names it: its first clause, without
    parentheses ("Protocols: Structural subtyping (static duck typing)" → "Protocols")."""
    clause = re.sub(r"\s*\([^)]*\)", "", clean_inline(title))
    return " ".join(clause.split(": ", 1)[0].split()).strip(" .")


def short_title(title: str, limit: int = 70) -> str:
    text = clean_inline(title).strip(" .") or "Sources"
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
