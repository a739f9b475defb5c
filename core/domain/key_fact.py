"""One key fact: the :class:`KeyFact` record, its canonical key and its kind.

Each fact has a canonical ``key`` (casefolded, spaces and underscores -> ``-``) and a
``kind`` from the vocabulary below: ``status``, ``stage``, ``version``, ``milestone`` and
``date`` facts are *typed* (a change to one is a change to what the page declares);
everything else is ``other``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.domain.fact_values import WHOLE_DATE, clean_value

FactKind = Literal["status", "stage", "version", "milestone", "date", "other"]

# --------------------------------------------------------------------------- vocabulary
#
# How a key's kind is found: a key is split into words at ``- : . /``; the words are read
# from the last (the head of the compound) to the first, and the first word that names a
# kind decides, so "status-date" is a date and "operational-status" a status. A head word
# from :data:`_NOT_FACT_HEADS` ("review-manager", "decision-notes") makes the key "other",
# and so does a word from :data:`_PAST_MODIFIERS` anywhere ("previous-versions").
# Whole keys in :data:`_WHOLE_KEYS` are decided before the words; keys in
# :data:`_HOUSEKEEPING_KEYS` are always "other", even when their value is a date.

_KIND_WORDS: tuple[tuple[FactKind, str], ...] = (
    ("status", r"status(?:es)?|state"),
    ("stage", r"stages?|phases?|maturity|lifecycle"),
    (
        "milestone",
        r"milestones?|deadlines?|expected\w*|eta|due|operation\w*|cod|completion|"
        r"commissioning|launch",
    ),
    (
        "date",
        r"dates?|dated|created|updated|accepted|published|effective|issued|adopted|enacted|"
        r"signed|released|expires|expiry|expiration",
    ),
    ("version", r"versions?|releases?|targets?"),
)
_WHOLE_KEYS: dict[str, FactKind] = {
    "target-date": "milestone",
    "go-live": "milestone",
    "in-service": "milestone",
    "resolution-status": "status",
}
_HOUSEKEEPING_KEYS = frozenset(
    {
        "post-history",
        "last-modified",
        "last-updated",
        "lastmod",
        "modified",
        "last-reviewed",
        "last-edited",
        "last-checked",
        "retrieved",
        "accessed",
        "fetched",
        "generated",
        "copyright",
        "resolution",
    }
)
_NOT_FACT_HEADS = frozenset(
    "manager managers notes note url urls link links author authors owner owners contact "
    "lead leads team delegate thread discussion discussions post posts history issue issues "
    "tracker page id number name names title description summary comment comments".split()
)
#: modifiers that make a key about the past, not the current state ("previous-versions")
_PAST_MODIFIERS = frozenset("previous prior former old original superseded".split())

__all__ = ["FactKind", "KeyFact", "canonical_key", "fact_kind", "make_fact", "typed"]


@dataclass(frozen=True)
class KeyFact:
    """One labelled value a page declares about itself."""

    key: str  #: canonical: casefolded, spaces/underscores -> '-', e.g. "status"
    label: str  #: the key as written, e.g. "Status"
    value: str  #: the value with markup removed, whitespace collapsed
    kind: FactKind
    raw: str  #: exact source text of the whole line/field in the content ("" for meta)
    start: int  #: offset of ``raw`` in the content (-1 for meta facts)


_KEY_SPLIT = re.compile(r"[-:./]+")
_KIND_WORD_RES = tuple((kind, re.compile(pat)) for kind, pat in _KIND_WORDS)
_KEY_MARKUP = re.compile(r"[*`]+")
_KEY_SPACE = re.compile(r"[\s_]+")
_RCS_KEYWORD = re.compile(r"^\$[A-Za-z]+(?::[^$]*)?\$$")  # "$Revision$", "$Date: ... $"
_kind_cache: dict[str, FactKind] = {}


def canonical_key(label: str) -> str:
    """``label`` as a canonical key: casefolded, markup dropped, spaces/underscores -> '-'."""
    key = _KEY_MARKUP.sub("", label).strip().strip(":").strip()
    return _KEY_SPACE.sub("-", key.casefold())


def _key_kind(key: str) -> FactKind:
    if key in _kind_cache:
        return _kind_cache[key]
    kind: FactKind = "other"
    if key in _WHOLE_KEYS:
        kind = _WHOLE_KEYS[key]
    elif key not in _HOUSEKEEPING_KEYS:
        words = [w for w in _KEY_SPLIT.split(key) if w]
        if _PAST_MODIFIERS.intersection(words):
            words = []
        for word in reversed(words):
            if word in _NOT_FACT_HEADS:
                break
            found = next((k for k, rx in _KIND_WORD_RES if rx.fullmatch(word)), None)
            if found is not None:
                kind = found
                break
    if len(_kind_cache) > 10_000:
        _kind_cache.clear()
    _kind_cache[key] = kind
    return kind


def fact_kind(key: str, value: str = "") -> FactKind:
    """The kind of a fact with canonical ``key`` and cleaned ``value``.

    By key (see the vocabulary at the top of this module); a key that names no kind is a
    ``date`` when its whole value is a date (housekeeping stamps such as
    ``post-history`` and ``last-modified`` stay ``other``). A version-control keyword
    placeholder (``$Revision$``) is never a typed value.
    """
    if _RCS_KEYWORD.match(value):
        return "other"
    kind = _key_kind(key)
    if kind == "other" and key not in _HOUSEKEEPING_KEYS and value and WHOLE_DATE.match(value):
        return "date"
    return kind


def typed(fact: KeyFact) -> bool:
    """True for status, stage, version, milestone and date facts."""
    return fact.kind != "other"


def make_fact(label: str, value: str, raw: str, start: int) -> KeyFact:
    """The fact ``label: value`` whose source text ``raw`` starts at ``start``."""
    label = _KEY_MARKUP.sub("", label).strip()
    key = canonical_key(label)
    text = clean_value(value)
    return KeyFact(key, label, text, fact_kind(key, text), raw, start)
