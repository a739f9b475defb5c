"""Text helpers for writers: quotable sentences from raw sources, terms, inline markup."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from core.domain.citations import strip_citations
from core.domain.html_comments import replace_html
from core.domain.links import strip_md_links
from core.domain.page_units import split_sentences

_ROLE = re.compile(r":(pep|rfc):`(\d+)`", re.I)
#: a figure as written: "3.10", "1,400", "2026"
FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_ANY_ROLE = re.compile(r":[\w-]+(?::[\w-]+)?:`([^`]*)`")
#: (the text before "<" without its trailing blanks, read without backtracking: linear)
_RST_LINK = re.compile(r"`((?:\s*+[^`<\s])++|\s)\s*<[^>`]*>`_{1,2}")
_RST_REF = re.compile(r"`([^`]+)`_{1,2}")
_FOOTNOTE = re.compile(r"(?<!\s)\s*\[(?:#[\w-]*|\d+|\*)\]_")  # from a blank run's start only
_LITERAL = re.compile(r"``([^`]+)``")
#: wiki markup: bold / italic quotes around words, internal links ([[target|text]])
_WIKI_QUOTES = re.compile(r"'{2,5}(?=[^\s'])([^'\n]{1,200}?)(?<=[^\s'])'{2,5}")
_WIKI_LINK = re.compile(r"\[\[(?:[^\[\]|\n]{0,200}\|)?([^\[\]|\n]{1,200})\]\]")
#: a Markdown reference link, [text][label] (text with a letter: "[1][2]" are citations)
_MD_REF_LINK = re.compile(r"\[([^\[\]\n]{0,200}[A-Za-z][^\[\]\n]{0,200})\]\[[^\[\]\n]{0,100}\]")
_URL = re.compile(r"https?://\S+")
_WORD = re.compile(r"[^\W_]+")
_FIELD = re.compile(r"^[A-Z][A-Za-z-]*:\s")
STOP = frozenset(
    """a an and are as at be been but by can could do does for from had has have how if in into
    is it its may might more most much must no not of on or our should so such than that the
    their them then there these they this those to too under up upon was we were what when
    where which while who whom why will with would you your also any each other some only
    one two new use used using via per about after before between both during over same very
    still now""".split()
)


def strip_links(text: str) -> str:
    """Markdown and rst links reduced to their text."""
    return _RST_LINK.sub(r"\1", strip_md_links(text))


def clean_inline(text: str) -> str:
    """Source markup reduced to readable text: rst roles, links, literals, footnotes;
    Markdown inline and reference links; wiki bold / italic quotes and internal links."""
    text = _ROLE.sub(lambda m: f"{m.group(1).upper()} {int(m.group(2))}", text)
    text = _RST_LINK.sub(r"\1", text)
    text = _ANY_ROLE.sub(r"`\1`", text)
    text = _LITERAL.sub(r"`\1`", text)
    text = _FOOTNOTE.sub("", text)
    text = _RST_REF.sub(r"\1", text)
    if "''" in text:
        text = _WIKI_QUOTES.sub(r"\1", text)
    if "[[" in text:
        text = _WIKI_LINK.sub(r"\1", text)
    if "][" in text:
        text = _MD_REF_LINK.sub(r"\1", text)
    text = strip_md_links(text)
    return strip_citations(text)


def quotable_sentences(content: str) -> list[str]:
    """Prose sentences worth quoting, in document order, markup cleaned."""
    return list(_quotable(content))


@lru_cache(maxsize=2048)
def _quotable(content: str) -> tuple[str, ...]:
    # a pure function of the text: the same source is quoted by many sections and runs
    out: list[str] = []
    seen: set[str] = set()
    # an HTML comment is the page's source talking to its editors ("Provide a simplified
    # and layman-accessible explanation …" in a template), not what the page says
    for raw in split_sentences(without_code(replace_html(content, "\n\n"))):
        s = clean_inline(raw)
        if not 40 <= len(s) <= 360 or s in seen:
            continue
        if s[-1] not in ".!?" or _FIELD.match(s) or _URL.search(s):
            continue
        if s.startswith(("..", "::", ">>>", "|", "-", "*", "#", "+", "=")):
            continue
        letters = sum(c.isalpha() or c.isspace() for c in s)
        if letters / len(s) < 0.8 or not s[0].isupper():
            continue
        seen.add(s)
        out.append(s)
    return tuple(out)


#: a code fence line (its fence: the closing line starts with it)
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
#: an rst directive whose body is code, not prose
_CODE_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+(?:code-block|code|sourcecode|literalinclude|doctest|productionlist)::", re.I
)


def without_code(content: str) -> str:
    """``content`` with its code blocks blanked out, line for line: fenced blocks
    (```` ``` ```` or ``~~~``), rst literal blocks (the indented block after a paragraph
    ending in ``::``) and the bodies of rst code directives (``.. code-block::`` …). A
    code comment reads like prose ("Future extensions to the type system may # eliminate
    this limitation.") and would otherwise be quoted as a sentence. Indented blocks of
    any other kind are kept: in rst they are quotations, list items or notes."""
    lines = content.split("\n")
    out: list[str] = []
    fence: str | None = None
    literal = False  # the next indented block is code
    block_indent: int | None = None  # indent of the code block being skipped
    last = ""  # the last non-blank line outside code
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if fence is not None:
            out.append("")
            if stripped.startswith(fence):
                fence = None
            continue
        if block_indent is not None:
            if not stripped or indent >= block_indent:
                out.append("")
                continue
            block_indent = None
        if (m := FENCE.match(line)) is not None:
            fence = m.group(1)
            out.append("")
            continue
        if literal and stripped:
            if indent > len(last) - len(last.lstrip()):
                block_indent = indent
                literal = False
                out.append("")
                continue
            literal = False
        if stripped:
            literal = stripped.endswith("::") or bool(_CODE_DIRECTIVE.match(line))
            last = line
        out.append(line)
    return "\n".join(out)


#: what ends a paragraph between two sentences of a page: a blank line, or a heading line
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n|\n[ \t]*#")
_PROBE = 24  # characters of a sentence looked for in its page


def phrase_pattern(phrase: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """``phrase`` as a run of whole words: "Greyhaven Demonstration" not inside
    "Greyhaven Demonstrations" nor "Iron-Air" inside "Iron-Airline"."""
    return re.compile(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", re.I if ignore_case else 0)


def same_paragraph(content: str, first: str, second: str) -> bool:
    """Are two quotable sentences of ``content`` in one paragraph, ``second`` after
    ``first`` — so that ``first`` can be the antecedent ``second`` refers back to? A
    blank line or a heading between them says no. Where either sentence cannot be found
    as written (markup cleaned away), nothing says they are apart: True."""
    head = content.find(first[:_PROBE])
    if head < 0:
        return True
    end = content.find(first[-_PROBE:], head)
    start = content.find(second[:_PROBE], max(head, end))
    if end < 0 or start < 0:
        return True
    return not _PARAGRAPH_BREAK.search(content, end, start)


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """``word`` without its commonest English inflection ("activations" → "activ",
    "policies" → "policy"). Cached: a page's words repeat, and an update stems every
    page of its pool (issue 42)."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def page_terms(title: str, text: str) -> list[str]:
    """A page's words for matching: its title counted three times, then its text."""
    return terms(f"{title} " * 3 + text)


def terms(text: str) -> list[str]:
    """Content-word stems, lower case, stopwords and numbers dropped."""
    return list(_terms(text))


@lru_cache(maxsize=200_000)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in content_words(text))


def content_words(text: str) -> list[str]:
    """The content words of ``text`` as written (lower case), before ``terms`` stems them."""
    return [
        w
        for w in _WORD.findall(text.casefold())
        if len(w) > 2 and w not in STOP and not w.isdigit()
    ]


def idf_table(docs: Iterable[Iterable[str]]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    n = 0
    for doc in docs:
        n += 1
        counts.update(set(doc))
    return {t: math.log(1 + n / c) for t, c in counts.items()}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def tfidf(tokens: Iterable[str], idf: dict[str, float], default: float = 1.0) -> dict[str, float]:
    counts = Counter(tokens)
    return {t: (1 + math.log(c)) * idf.get(t, default) for t, c in counts.items()}


def figures(text: str) -> list[str]:
    """The figures ``text`` writes, in order ("3.8", "1,400")."""
    return FIGURE.findall(text)
