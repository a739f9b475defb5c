"""The facets of a research question: the parts an analyst would answer one by one.

"What are the current Python packaging standards (metadata, build backends, wheels, lock
files, package indexes) and how have they changed?" asks about five things; a report that
answers it has a section for each, and each is searched for on its own (a single search
for the whole question finds the pages that share most of its words, not the pages about
each part). A question names its facets as a list: after a colon, or in parentheses,
items separated by commas or semicolons. Without a list, it may name them in prose: "What
are the costs and technologies of grid battery storage, and which policies apply?" asks
about three aspects of grid battery storage. Without either — "How is static typing in
Python evolving?" — the question has no named facets and the report's themes come from
its sources instead.

A facet keeps the question's *subject* (the question with the list taken out, its
interrogative and auxiliary words dropped) for searching and scoring: "build backends"
alone is ambiguous, "build backends current Python packaging standards" is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: words that make a list item a clause rather than a named thing ("which features …")
_CLAUSE_WORDS = frozenset("which what how when who whom why whether where".split())
#: words dropped from the subject: they ask, they do not name anything
_ASKING = frozenset(
    """what which how why when where who whom whether is are was were do does did has have
    had can could will would should may might been being be the a an and or of to in on for
    from with by its it this that these those they them their there how's what's currently
    current work works working evolving evolve evolved progressing changing changed
    developing stand stands""".split()
)
MAX_FACETS = 8
MAX_ITEM_WORDS = 12  # a longer list item is a clause, not a named facet
MAX_NAMED_WORDS = 4  # ... and a thing named before a parenthesised list is short


@dataclass(frozen=True)
class Facet:
    """One part of the question: ``name`` as a heading, ``query`` to search and score it.
    ``markers``: the sources a report assigns to it (filled in by the engine)."""

    name: str
    query: str
    markers: tuple[int, ...] = field(default=())


def _top_level_split(text: str, seps: str = ",;") -> list[str]:
    """``text`` split at the separators that are outside parentheses and backticks."""
    parts: list[str] = []
    depth, code, start = 0, False, 0
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch in seps and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _clean_item(item: str) -> str:
    item = re.sub(r"^(?:and|or|as well as|plus)\s+", "", item.strip(), flags=re.I)
    return item.strip(" .?!:;")


def _is_list(items: list[str]) -> bool:
    """Do these comma-separated pieces name things (not clauses of a sentence)?"""
    if len(items) < 2:
        return False
    for item in items:
        words = item.split()
        if not words or len(words) > MAX_ITEM_WORDS:
            return False
        if words[0].casefold() in _CLAUSE_WORDS:
            return False
    return True


def _parenthesised(question: str) -> tuple[str, str] | None:
    """(list, outside) for the first parenthesis group holding a list. When the group
    follows an enumeration — "String, Character/Unicode and collection APIs (algorithms,
    Array/Dictionary/Set, indices)" — it spells out the last thing named only, and the
    things named before it are facets too, listed first."""
    for m in re.finditer(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)", question):
        items = [_clean_item(i) for i in _top_level_split(m.group(1))]
        if _is_list(items):
            named = _named_before(question[: m.start()])
            return ", ".join([*named, m.group(1)]), question[: m.start()] + question[m.end() :]
    return None


def _named_before(text: str) -> list[str]:
    """The things an enumeration ending ``text`` names before its last one ("A, B and
    C" → A, B); none when ``text`` does not end with one of at least three things."""
    parts = _top_level_split(text, ",")
    if len(parts) < 2:
        return []
    head, sep, _last = parts[-1].rpartition(" and ")
    if not sep:
        return []
    words = parts[0].split()
    cut = max((i + 1 for i, w in enumerate(words) if _leads_in(w)), default=0)
    first = words[cut:]
    named = [" ".join(first), *parts[1:-1], head]
    if any(not _is_named(item) for item in named):
        return []
    return [_clean_item(item) for item in named]


def _leads_in(word: str) -> bool:
    """An asking word, an article or a possessive: what comes before a named thing."""
    return word.casefold() in _ASKING or word.casefold().endswith(("'s", "’s"))


def _is_named(item: str) -> bool:
    words = item.split()
    return 0 < len(words) <= MAX_NAMED_WORDS and words[0].casefold() not in _ASKING


def _after_colon(question: str) -> tuple[str, str] | None:
    """(list, rest) when the text after the first colon is a list of named things, or
    of things each asked about ("which technologies, what costs, … and which policies
    shape it": ``_asked_things``)."""
    head, sep, tail = question.partition(":")
    if not sep:
        return None
    items = [_clean_item(i) for i in _top_level_split(tail.rstrip(" ?.!"))]
    if _is_list(items):
        return tail.rstrip(" ?.!"), head
    things = _asked_things(items)
    if things:
        return ", ".join(things), head
    return None


def _asked_things(items: list[str]) -> list[str]:
    """The things a list of "which …" / "what …" items asks about, each item one thing
    (a verb after the last one dropped: "which policies shape it" → policies); none
    unless every item, and at least two, asks so."""
    things: list[str] = []
    for item in items:
        asked = re.match(r"(?:which|what)\s+(?P<thing>.+)", item, re.I)
        if asked is None:
            return []
        thing = asked.group("thing")
        clause = _WHICH.match(item)
        if clause and clause.group("verb").casefold() not in _ASKING:
            thing = clause.group("thing")
        if not _is_named(thing) or _asks(thing):
            return []
        things.append(thing)
    return things if len(things) >= 2 else []


def subject_of(text: str) -> str:
    """The words of ``text`` that name something (asking and auxiliary words dropped)."""
    words = re.findall(r"[\w][\w/.'`-]*", text)
    kept = [w.strip("`'.") for w in words if w.casefold().strip("`'.") not in _ASKING]
    return " ".join(w for w in kept if w)


def heading_of(item: str) -> str:
    """A facet named the way a heading is: no parenthetical, no leading article, first
    letter capitalised (an identifier or acronym keeps its case)."""
    name = re.sub(r"\s*\([^)]*\)", "", item).strip()
    name = re.sub(r"^(?:the|a|an)\s+", "", name, flags=re.I)
    name = " ".join(name.split()).strip(" ,;:")
    if not name:
        return ""
    first = name.split()[0]
    if first[0].islower() and not any(c.isupper() for c in first[1:]) and "`" not in first:
        name = name[0].upper() + name[1:]
    return name


def topic_clause(question: str) -> str | None:
    """The clause naming a question's topic when a clause after its colon asks what to
    report about it: "How is static typing in Python evolving: which type-system features
    were proposed, accepted, or finalised, and what is still open?" → "How is static
    typing in Python evolving". None when there is no colon, or what follows it is a list
    of facets (then it names the topic's parts, not what to say of them), or the part
    before it is a label of one or two words."""
    head, colon, tail = " ".join(question.split()).partition(":")
    if not colon or len(head.split()) < 3 or not tail.strip() or facets_of(question):
        return None  # "Note: …" labels the question, it names no topic
    return head.strip()


def facets_of(question: str) -> list[Facet]:
    """The facets the question names, in its order (none when it names no list): a list
    after a colon or in parentheses, else the things it joins with "and" before "of"
    and asks "which …" of (:func:`_coordinated`)."""
    text = " ".join(question.split())
    found = _after_colon(text) or _parenthesised(text)
    if found is None:
        return _facets(*_coordinated(text))
    listed, rest = found
    return _facets([_clean_item(i) for i in _top_level_split(listed)], subject_of(rest))


def _facets(items: list[str], subject: str) -> list[Facet]:
    out: list[Facet] = []
    seen: set[str] = set()
    for item in items:
        name = heading_of(item)
        if not name or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        query = " ".join(part for part in (subject_of(item), subject) if part)
        out.append(Facet(name, query))
    return out[:MAX_FACETS]


#: "the costs and technologies of grid battery storage": things joined by "and" (or a
#: comma list ending so), each of one to three words, then "of" and what they are of
_JOINED_OF = re.compile(
    r"\b(?:the|its|their)\s+(?P<things>[\w/-]+(?:\s+[\w/-]+){0,2}(?:,\s+[\w/-]+(?:\s+[\w/-]+){0,2})*"
    r",?\s+and\s+[\w/-]+(?:\s+[\w/-]+){0,2})\s+of\s+(?P<subject>[^,;?]+)",
    re.I,
)
#: "which policies apply", "what incentives exist": a plural thing a clause asks about
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?P<thing>(?:[\w-]+\s+){0,2}[\w-]+s)\s+(?P<verb>[a-z]+)\b", re.I
)
#: words that make a "which …" clause ask about something other than a thing
_NOT_THINGS = _ASKING | frozenset("else kind kinds ones sort sorts type types way ways".split())


def _coordinated(question: str) -> tuple[list[str], str]:
    """(things, what they are of) of a question that names its parts in prose rather
    than as a list: "What are the costs and technologies of grid battery storage, and
    which policies apply?" → (costs, technologies, policies; grid battery storage).
    At least two, or none: one thing asked about is the question's topic, not a part."""
    things: list[str] = []
    subject = ""
    rest = question
    joined = _JOINED_OF.search(question)
    if joined:
        parts = [
            re.sub(r"^(?:the|its|their)\s+", "", p, flags=re.I)
            for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", joined.group("things"))
        ]
        if all(_is_named(p) and not _asks(p) for p in parts):
            things += parts
            subject = subject_of(joined.group("subject"))
    for m in _WHICH.finditer(question):
        thing = m.group("thing")
        if not _asks(thing) and m.group("verb").casefold() not in _ASKING:
            things.append(thing)
            rest = rest.replace(m.group(0), " ")  # what is left names what they are of
    if len(things) < 2:
        return [], ""
    return things, subject or subject_of(rest)


def _asks(phrase: str) -> bool:
    """Does the phrase hold an asking, auxiliary or vague word ("what kinds of …")?"""
    return any(w.casefold() in _NOT_THINGS for w in phrase.split())
