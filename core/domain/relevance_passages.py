"""A page as the passages its relevance is judged by, and what stands for it for one
query: its opening, or its opening blended with its passages most about the query.

A page used to be scored by its title and its first 2,000 characters. On long templated
pages those characters are a metadata header and a table of contents: an enhancement
proposal on native sidecar containers scored 0.156 against a question about sidecars by
its opening, lower than every page its report kept, while the mean of its best
paragraphs scored 0.624, higher than every one of them. Information retrieval calls it
FirstP against MaxP (Dai & Callan, SIGIR 2019): on long documents, the best passages
say what a page is about better than its opening. So a page is cut into passages —
its opening, then paragraphs, short ones merged with the next, long ones cut at a word —
each embedded with the page's title (``core.domain.relevance``).

A page stands for its *opening* — what it says it is — unless its best passages say
clearly more (GUARD more, on the score's scale): then for the opening blended with them.
Scored by its best passages alone, a page on another subject with one paragraph on the
question outranks the pages about it (measured on the PEP, Swift and BIP benches,
``BENCHMARKS.md``); scored by its opening alone, a templated page is never on topic.

Only the first SCAN_CHARS characters are cut, and at most MAX_PASSAGES passages, so the
work per page is bounded whatever its length; the cut is linear in the text. The
passages of a page and their embeddings are kept for the process (PASSAGE_CACHE pages):
an update scores the same pages for relevance, for placement and against every facet.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from core.domain.text import clean_inline
from core.domain.vectors import unit

OPENING_CHARS = 2000  # the opening: this much of the text, markup reduced, comes first
PASSAGE_CHARS = 900  # a passage: about this many characters of a page's paragraphs
MIN_CHARS = 300  # a shorter paragraph is merged with the next (a heading, a lone line)
MAX_PASSAGES = 16  # at most this many passages stand for a page, after its opening
SCAN_CHARS = PASSAGE_CHARS * MAX_PASSAGES  # … cut from at most this much of its text
TOP_PASSAGES = 3  # a page's focus: the mean of this many of its best passages
GUARD = 0.1  # how much more the blend must score than the opening alone to stand for it
PASSAGE_CACHE = 2048  # pages whose passage embeddings a process keeps

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def opening(content: str) -> str:
    """The start of a page's text, markup reduced, spaces collapsed: OPENING_CHARS."""
    return " ".join(clean_inline(content[: OPENING_CHARS * 2]).split())[:OPENING_CHARS]


def page_passages(content: str) -> list[str]:
    """The units a page is scored by: its ``opening`` first (what it says it is), then
    its passages in page order — blank-line paragraphs with markup reduced to text, one
    under MIN_CHARS joined to the next, one over PASSAGE_CHARS cut at a space. A page of
    no more than its opening is its opening alone."""
    head = opening(content)
    if len(content) <= OPENING_CHARS:
        return [head]
    out: list[str] = []
    pending = ""
    for raw in _BLANK_LINE.split(content[:SCAN_CHARS]):
        text = " ".join(clean_inline(raw).split())
        if not text:
            continue
        pending = f"{pending} {text}" if pending else text
        while len(pending) > PASSAGE_CHARS:
            cut = pending.rfind(" ", PASSAGE_CHARS // 2, PASSAGE_CHARS)
            cut = cut if cut > 0 else PASSAGE_CHARS
            out.append(pending[:cut])
            pending = pending[cut:].lstrip()
        if len(pending) >= MIN_CHARS:
            out.append(pending)
            pending = ""
        if len(out) >= MAX_PASSAGES:
            break
    if pending and len(out) < MAX_PASSAGES:
        out.append(pending)
    return [head, *out[:MAX_PASSAGES]]


Page = tuple[str, str]  # (title, content)
Embedded = tuple[list[str], np.ndarray]  # (passages, their unit embeddings, one row each)
_PASSAGES: dict[Page, Embedded] = {}


def passage_vectors(
    pages: Sequence[Page], embed: Callable[[Sequence[str]], np.ndarray]
) -> list[Embedded]:
    """Per page (title, content): its passages and their embeddings by ``embed``, each
    passage embedded after the page's title ("Title. passage", as a page was embedded
    whole); the pages not seen yet in this process are embedded in one batch."""
    got: dict[Page, Embedded] = {}
    for page in dict.fromkeys(pages):
        if page in _PASSAGES:
            got[page] = _PASSAGES.pop(page)
            _PASSAGES[page] = got[page]  # most recently used last
    missing = [page for page in dict.fromkeys(pages) if page not in got]
    if missing:
        cut = [page_passages(content) for _title, content in missing]
        texts = [
            f"{title}. {body}" if title else body
            for (title, _c), bodies in zip(missing, cut, strict=True)
            for body in bodies
        ]
        vectors = np.asarray(embed(texts), dtype=np.float32)
        at = 0
        for page, bodies in zip(missing, cut, strict=True):
            got[page] = (bodies, vectors[at : at + len(bodies)])
            at += len(bodies)
            while len(_PASSAGES) >= PASSAGE_CACHE:
                _PASSAGES.pop(next(iter(_PASSAGES)))  # the least recently used
            _PASSAGES[page] = got[page]
    return [got[page] for page in pages]


def focus(pages: Sequence[np.ndarray], score: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """One unit vector per page (each given as its passages' embeddings, the opening
    first) under ``score``: the opening, or — when the blend of the opening and the mean
    of its TOP_PASSAGES best passages scores GUARD more than the opening alone — that
    blend."""
    scored = score(np.concatenate(pages))
    rows, at = [], 0
    for vectors in pages:
        mine = scored[at : at + len(vectors)]
        at += len(vectors)
        opening = vectors[0]
        best = np.argsort(-mine, kind="stable")[:TOP_PASSAGES]
        blend = unit(unit(vectors[best].mean(axis=0)) + opening)
        pair = score(np.stack([opening, blend]))
        rows.append(blend if pair[1] - GUARD > pair[0] else opening)
    return np.stack(rows)
