"""Where a sentence ends: one rule for source pages and for report text.

A sentence ends at ``.``, ``!`` or ``?`` — closing quotes, brackets, emphasis or code marks
may follow — before whitespace and something that can start a sentence: a capital or a
digit (opening quotes, brackets or marks first), or an rst role (":pep:`8` …"). It goes on
after an abbreviation ("e.g.", "approx.", "Jan.", an initial "J.") and after a lone
enumerator ("1.", "(a)", "iv.").

- :func:`sentence_spans` — the rule itself, as (start, end) offsets of a text: the form
  passages are cut with (``core.domain.passages``), so a quote keeps its place in the page;
- :func:`split_prose` — the same as strings, whitespace collapsed: the form a page's
  prose is split with (``core.domain.page_units.split_sentences``, which first cuts a page into
  header fields, list items, titles and paragraphs);
- :func:`split_cited_sentences` — a report paragraph, whose sentences end with their
  citations ("… rose [3]. Next", "… rose. [3] Next"; the grammar is ``core.domain.citations``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.domain.citations import GROUP, cited_markers

__all__ = [
    "cited_sentences",
    "goes_on",
    "points_in_page",
    "refers_back",
    "self_reference",
    "unnamed",
    "sentence_spans",
    "split_cited_sentences",
    "split_prose",
]

_WS = re.compile(r"\s+")
_CLOSE = r"[\"')\]*_`]*"  # after a stop: closing quotes, brackets, emphasis, code marks
_OPEN = r"[\"'(\[*_`]*"
#: the end of a sentence: a stop, its closers, whitespace, and a sentence's start after it
_END = re.compile(rf"(?<=[.!?]){_CLOSE}\s+(?={_OPEN}(?:[A-Z0-9]|:[\w-]+:`))")
_ABBREVIATION_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|al|approx|incl|resp|no|nos|fig|figs|mr|mrs|ms|dr|prof|st|"
    r"jr|sr|inc|ltd|co|corp|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|vol|ed|eds|p|pp|"
    rf"sec|ch|[A-Za-z])\.){_CLOSE}$",
    re.IGNORECASE,
)
_ENUMERATOR = re.compile(r"^(?:\.\.|\(?(?:\d{1,3}|[A-Za-z]|#|[ivxlcIVXLC]{1,5})[.)])$")


def goes_on(sentence: str) -> bool:
    """Does a sentence that seems to end here go on — does it end with an abbreviation, or
    is it only an enumerator?"""
    # only the tail can end in an abbreviation; looking at it alone keeps splitting linear
    return bool(_ABBREVIATION_END.search(sentence[-20:]) or _ENUMERATOR.match(sentence.strip()))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text[start:end]``, in order. A span ends
    at its stop (the closers and whitespace after it belong to no sentence); the last one
    runs to ``end``. Whitespace is not trimmed."""
    end = len(text) if end is None else end
    block = text[start:end]
    pos = 0
    for m in _END.finditer(block):
        if goes_on(block[pos : m.start()]):
            continue
        yield start + pos, start + m.start()
        pos = m.end()
    yield start + pos, end


def split_prose(text: str) -> list[str]:
    """The sentences of a run of prose, whitespace collapsed, empty ones left out."""
    flat = _WS.sub(" ", text).strip()
    return [s for s in (flat[a:b].strip() for a, b in sentence_spans(flat)) if s]


#: a report sentence ends at . ! ? (or its citations) before a capital, a quote or the end;
#: and after "[n]." also before a figure or a dash ("… [13]. 3.6 will receive …"). The
#: pattern is the stretch that ends one, searched from a sentence's second character: a
#: sentence is the shortest text up to the first such stretch. A chain of citation groups
#: is read whole (possessive: fewer groups never end a sentence, since a group follows)
#: and at most ``_CHAIN`` long — a longer chain is still found, from a later group of it,
#: with the same end — so each search costs at most a bounded amount per character.
_CHAIN = 20
_CITED_STOP = re.compile(
    rf"(?:[.!?](?:\s?{GROUP}){{0,{_CHAIN}}}+|{GROUP}(?:\s?{GROUP}){{0,{_CHAIN}}}+[.!?]?+)"
    r"(?=\s+[A-Z\"'(`*]|\s*$|(?<=\]\.)\s+[-\d])"
)
_NON_SPACE = re.compile(r"\S")
_CITED_END = re.compile(rf"{GROUP}[.!?]$")  # "… [3]." ends a sentence, parentheses or not


def _cited_parts(text: str) -> list[str]:
    """``text`` cut after each sentence's end (``_CITED_STOP``), the rest as one last
    part; linear in the length of ``text``. Once no end follows a sentence's start, none
    follows any later start either: the rest is one part."""
    parts: list[str] = []
    pos = 0
    while (start := _NON_SPACE.search(text, pos)) is not None:
        stop = _CITED_STOP.search(text, start.start() + 1)
        if stop is None:
            break
        parts.append(text[start.start() : stop.end()].strip())
        pos = stop.end()
    if text[pos:].strip():
        parts.append(text[pos:].strip())
    return parts


def split_cited_sentences(paragraph: str) -> list[str]:
    """A report paragraph split into sentences, each keeping its own [n] citations.

    No split after an abbreviation ("e.g. PyPI"), an initial ("J. Smith") or inside
    parentheses still open — unless the sentence ends with its citation ("… [3]."), which
    a paragraph of ours only does at a sentence's end. Linear in the paragraph's length:
    an imported paragraph with no sentence end, or with thousands, costs no more per
    character than a short one."""
    merged: list[str] = []
    opened = 0  # parentheses the last merged sentence leaves open
    last = ""  # the last part merged into it: its citation end is that part's
    for part in (p for p in _cited_parts(paragraph.strip()) if p):
        prev = merged[-1] if merged else ""
        open_paren = opened > 0 and not _CITED_END.search(last)
        if prev and (_ABBREVIATION_END.search(prev[-20:]) or open_paren):
            merged[-1] = f"{prev} {part}"
            opened += part.count("(") - part.count(")")
        else:
            merged.append(part)
            opened = part.count("(") - part.count(")")
        last = part
    return merged


def claim_groups(sentences: list[str]) -> list[list[str]]:
    """A paragraph's sentences grouped into the units a citation covers: uncited ones join
    the cited sentence after them. A writer that pulls in the sentence a quote leans on
    cites the pair once, at its end ("The only point of discussion was the name. `#key`
    was proposed … [4]."); cutting source 4 must take both, not leave the first standing
    uncited. Uncited sentences at a paragraph's end stay a group of their own."""
    groups: list[list[str]] = []
    lead: list[str] = []
    for sentence in sentences:
        lead.append(sentence)
        if cited_markers(sentence):
            groups.append(lead)
            lead = []
    return groups + ([lead] if lead else [])


def claim_units(sentences: list[str]) -> list[str]:
    """``claim_groups``, each as one text."""
    return [" ".join(group) for group in claim_groups(sentences)]


#: words that, opening a sentence, refer back to an earlier one
_BACK_WORDS = frozenset(
    "it its this these those they their them he she his her such that there's thus "
    "also however hence therefore moreover furthermore finally additionally instead "
    "otherwise similarly likewise nevertheless nonetheless consequently accordingly "
    "conversely meanwhile besides another".split()
)
#: "One casualty was …", "One exception is …": one of a set named before; "The second is
#: …", "The largest is …", "The latter …", "The other two …", "The remaining cost …", "Both
#: modules have …", "Both involved …", "Neither was …": members of a list or parts of a
#: whole given before ("Both lithium and sodium cells …" names its own)
_ONE_OF = re.compile(
    r"One\s+[a-z][\w-]*\s+(?:is|was|are|were)\b|The\s+(?:former|latter|remaining|other)\b"
    r"|The\s+(?:first|second|third|fourth|last|other|others|rest|remainder|same|"
    r"largest|biggest|smallest|newest|oldest|latest|earliest|highest|lowest|longest|"
    r"shortest|greatest|fastest|cheapest|best|worst|(?:most|least)\s+[a-z][\w-]*)\s+"
    r"(?:is|was|are|were|has|have|can|could|will|would|may|might|must|should|does|did)\b"
    r"|Both\s+(?:of\s+(?:them|these|those)\b|(?:these|those)\b|[a-z][\w-]*s\s+"
    r"(?:is|was|are|were|has|have|had|can|could|will|would|may|might|must|should|do|did)\b)"
    r"|(?:Both|Neither)\s+(?:is|was|are|were|has|have|had|can|could|will|would|may|might|"
    r"must|should|do|does|did|[a-z]+ed)\b"
)
#: phrases that do the same ("In this case, …", "As a result, …")
_BACK_PHRASES = re.compile(
    r"(?:(?:so|first|second|secondly|third|thirdly|lastly)(?=,)|"
    r"in (?:particular|this case|that case|turn)|on the other hand|for this reason|"
    r"to this end|as such|(?:in addition|as a result|(?:in|by) contrast)(?!\s+(?:to|of|with)\b))\b",
    re.I,
)
#: "With that done, …", "After that, …", "Beyond those, …": a sentence opening on a
#: preposition whose object is "that" or "those" (a conjunction such as "given that",
#: "now that" or "so that" is not one of them) points at what the sentence before said
_OPENING_THAT = re.compile(
    r"(?:with|after|before|beyond|besides|despite|following|without|unlike|like|under|"
    r"through|against|because of|apart from|other than|due to|thanks to|along with|"
    r"together with|on top of|in addition to|instead of|rather than|as for)\s+(?:that|those)\b",
    re.I,
)
#: nouns that, after "the" / "this" at a sentence's start, stand for something named
#: before ("The company was founded …", "The technology has not yet operated …")
_BACK_NOUNS = frozenset(
    "company firm business operator developer project plant facility site method approach "
    "technique scheme system index proposal programme program initiative plan tool product "
    "feature change rule order report study group team organisation organization agency "
    "commission council authority technology regulation law bill policy agreement contract "
    "deal board committee regulator utility manufacturer supplier vendor".split()
)

#: "The original plan", "The revised project": such a noun, said to be the original, the
#: revised, the current one …, is one the sentence before named ("the type system", "the
#: largest project" and "the new plan of …" say which themselves)
_DESCRIBED_BACK = re.compile(
    r"^[\"'(*_`]*The\s+(?:original|revised|new|proposed|current|planned|existing|previous|"
    r"former|earlier|same|updated|amended|initial|modified|redesigned|above)\s+("
    + "|".join(sorted(_BACK_NOUNS))
    + r")\b(?!\s+(?:of|that|which|who|whose|to|for|called|named|known)\b)"
)


#: of those, the ones naming a party or an undertaking, which a sentence also refers
#: back to further in ("Quillfield said that it had cancelled the project")
_BACK_PARTIES = frozenset(
    "company firm business operator developer project plant facility site programme "
    "program initiative agency commission council authority organisation organization "
    "fund".split()
)
#: "the project" inside a sentence, not defined in place ("the project of …", "the
#: company that …")
_INNER_BACK = re.compile(
    r"(?<![\w'’-])the (" + "|".join(sorted(_BACK_PARTIES)) + r")\b(?:['’]s)?"
    r"(?!\s+(?:of|that|which|who|whose|to|for|in|at|on|from|with|called|named|known)\b)"
)


#: "this provision", "these rules", "such users", "… requires this." further in: a
#: demonstrative pointing back — not a time ("this year"), not "such as", and not the page
#: speaking of itself or of what it proposes ("this proposal", "this feature", "this
#: change": a design document's own subject)
_INNER_DEMONSTRATIVE = re.compile(
    r"(?<![\w'’-])(?:(?:this|these)\s+([a-z][\w-]*)|such\s+(?!as\b|that\b)([a-z][\w-]*)"
    r"|(?:this|these)(?=\s*(?:\[[\d,\s]+\])?\s*[.;:!?]?\s*$))"
)
#: "Ashgrove would be its first storage project": after a verb "to be", "its" or "their"
#: cannot be the subject's own; it is someone named before
_COPULA_POSSESSIVE = re.compile(
    r"^[\"'(*_`]*[A-Z][^.;:]*?\b(?:is|was|are|were|(?:will|would|could|may|might) be|"
    r"has been|have been|had been|becomes?|became)\s+(?:its|their)\b"
)
_NOW = frozenset(
    "year years week weeks month months quarter morning afternoon evening season summer "
    "winter spring autumn decade century time moment point stage".split()
)
_OWN_SUBJECT = frozenset("feature features change changes design functionality".split())


def refers_back(sentence: str) -> bool:
    """Does the sentence lean on an earlier one — open with a pronoun ("It is …"), a
    connective ("Finally, …", "In this case, …"), "the"/"this" and a noun that stands
    for something named before ("The company was founded …") or one of a set ("One
    casualty was …"), or speak of "this provision" or of "the project" or "the company"
    further in without naming it ("Quillfield said that it had cancelled the project")?
    Quoted alone, such a sentence leaves its reader asking what it is about, or answering
    wrongly."""
    words = re.findall(r"[A-Za-z']+", sentence[:60])
    if not words:
        return False
    first = words[0].casefold()
    opening = sentence.lstrip("\"'(*_`")
    if first in _BACK_WORDS or _BACK_PHRASES.match(opening) or _OPENING_THAT.match(opening):
        return True
    if first == "the" and len(words) > 1 and words[1].casefold() in _BACK_NOUNS:
        return True
    if _DESCRIBED_BACK.match(sentence):
        return True  # "The original plan was …", "The revised project costs …"
    if _ONE_OF.match(sentence.lstrip("\"'(*_`")) or _COPULA_POSSESSIVE.match(sentence):
        return True
    for m in _INNER_DEMONSTRATIVE.finditer(sentence, 1):
        noun = m.group(1) or m.group(2) or ""  # none: "… requires this."
        if noun not in _NOW | _OWN_SUBJECT and not re.fullmatch(_SELF_NOUNS, noun):
            return True  # "The association welcomed this provision", "such users"
    for m in _INNER_BACK.finditer(sentence, 1):
        if not re.search(rf"\b{m.group(1)}\b", sentence[: m.start()], re.I):
            return True  # "the Ashgrove Storage Project … the project" names it itself
    return False


#: what a page shows beside its prose: code, tables, examples, figures
_SHOWN = (
    r"(?:code|example|examples|table|tables|figure|figures|listing|snippet|snippets|"
    r"diagram|chart|output|program|grammar|sample|schema|syntax|steps|list|schedule|dates)"
)
#: "In the code above, …", "The table below lists …", "as described above", "the
#: following entry points" (not "the following year"), "as follows": a pointer at another
#: part of the page
_IN_PAGE = re.compile(
    rf"\b{_SHOWN}\s+(?:above|below)\b"
    r"|\b(?:shown|listed|described|given|defined|discussed|mentioned|outlined|illustrated|"
    r"explained|presented|noted|quoted|seen|specified|summari[sz]ed)\s+(?:above|below)\b"
    r"|\b(?:as|see)\s+(?:above|below)\b|\bthe\s+above\b"
    r"|\bthe\s+following\b(?!\s+(?:day|days|week|weeks|month|months|quarter|year|years|"
    r"decade|season|spring|summer|autumn|winter|morning|evening|release|version)\b)"
    r"|\bas\s+follows\b",
    re.I,
)


def points_in_page(sentence: str) -> bool:
    """Does the sentence point at another part of its page ("In the code above, …", "The
    table below lists …", "the following special character sequences")? Quoted in a
    report, which carries neither the page's code nor its tables, it points at nothing;
    the sentence before it does not help."""
    return _IN_PAGE.search(sentence) is not None


#: what a page calls itself ("This PEP", "This proposal")
_SELF_NOUNS = (
    r"(PEP|RFC|proposal|document|specification|spec|paper|article|report|guide|page|"
    r"standard|draft|note)"
)
#: "This PEP defines …", "This proposal enables …": a page speaking of itself
_SELF = re.compile(rf"(?:This|The present) {_SELF_NOUNS}\b(?!['’]s)\s+(?=[a-z])")


def self_reference(sentence: str) -> str | None:
    """The noun a sentence names its own page with at its start ("This PEP defines …" →
    "PEP"), or None. Quoted from that page, it refers to nothing earlier: naming the page
    ("The PEP “Implicit Namespace Packages” defines …") makes it stand alone."""
    m = _SELF.match(sentence.lstrip("\"'(*_`"))
    return m.group(1) if m else None


def name_page(sentence: str, title: str) -> str:
    """``sentence`` with its self-reference replaced by the page's name: "This proposal
    enables …" → "The proposal “Mixed Language Targets” enables …" (unchanged when it
    has none, or the page has no title)."""
    lead = len(sentence) - len(sentence.lstrip("\"'(*_`"))
    m = _SELF.match(sentence, lead)
    if m is None or not title.strip():
        return sentence
    return f"{sentence[:lead]}The {m.group(1)} “{title.strip()}” {sentence[m.end() :]}"


_NAMED = re.compile(rf"The {_SELF_NOUNS} “[^”]+” ")


def unnamed(sentence: str) -> str:
    """``name_page`` undone: the sentence as its page has it ("The PEP “T” defines …" →
    "This PEP defines …"). The name is the cited page's own title, which its text may not
    carry (a web page's title is its metadata): a claim is checked on what the page says."""
    return _NAMED.sub(lambda m: f"This {m.group(1)} ", sentence, count=1)


_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_OR_TABLE = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}[.)]\s|\|)")


def cited_sentences(body: str) -> list[tuple[int, str, list[int]]]:
    """(position, sentence, markers) for each sentence of ``body`` that cites something.

    Paragraphs are split into sentences; list items and table rows are one unit each;
    code blocks are not claims.
    """
    units = [unit for group in _text_groups(body) for unit in group]
    out: list[tuple[int, str, list[int]]] = []
    for position, unit in enumerate(units):
        markers = cited_markers(unit)
        if markers:
            out.append((position, unit, markers))
    return out


def uncovered_sentences(body: str) -> list[str]:
    """The sentences of ``body`` no citation covers: uncited, and with no cited sentence
    after them in their paragraph (``claim_units``). In a report of quoted sentences
    each of these says something no source is given for."""
    return [
        unit
        for group in _text_groups(body)
        for unit in claim_units(group)
        if not cited_markers(unit) and not unit.startswith("|")  # a table's header rows
    ]


def _text_groups(body: str) -> list[list[str]]:
    """``body``'s text as groups of units: a paragraph's sentences, or one list item or
    table row; code blocks and heading lines left out."""
    fenced = False
    groups: list[list[str]] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            groups.append(split_cited_sentences(" ".join(paragraph)))
            paragraph.clear()

    for line in body.split("\n"):
        if _FENCE.match(line):
            flush()
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") or line.lstrip().startswith("#"):
            flush()
            continue
        if not line.strip():
            flush()
        elif _LIST_OR_TABLE.match(line):
            flush()
            groups.append(split_cited_sentences(line.strip()))
        else:
            paragraph.append(line.strip())
    flush()
    return groups
