"""What changed in the fields a page declares about itself: its key facts (status, stage,
milestone, version, date; :mod:`core.domain.keyfacts`) and the other fields of its RFC-822 or YAML
header block.

A change to a typed key fact is always material; a change to another header field is
material unless the field is housekeeping (:data:`HOUSEKEEPING_HEADERS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.domain.claim_diff import normalise
from core.domain.header_blocks import HeaderBlock, header_blocks
from core.domain.key_fact import KeyFact
from core.domain.keyfacts import fact_changes, fact_map, join_fields, read_key_facts
from core.domain.page_units import HEADER_LAYOUTS, LINE_LAYOUTS, fact_unit

__all__ = ["HOUSEKEEPING_HEADERS", "header_units", "key_fact_reasons"]

#: Header fields whose changes are bookkeeping, not content (compared casefolded).
#: ``resolution`` is special-cased: adding one is material (a decision was recorded),
#: changing or dropping its link is not.
HOUSEKEEPING_HEADERS = frozenset(
    {
        "post-history",
        "last-modified",
        "version",
        "content-type",
        "created",
        "author",
        "sponsor",
        "discussions-to",
        "topic",
        "pep",
        "resolution",
        "date",
        "updated",
        "last-updated",
        "lastmod",
        "modified",
    }
)


#: Renamed header fields, compared as one (old name -> current name).
_HEADER_ALIASES = {"bdfl-delegate": "pep-delegate"}
#: Fields naming people: compared without e-mail addresses.
_PEOPLE_HEADERS = frozenset({"author", "sponsor", "pep-delegate", "bdfl-delegate"})
_EMAIL = re.compile(r"<[^<>\s]*@[^<>\s]*>|\S+@\S+|\S+ at \S+\.\w+")
#: typed key facts are reported in this order
_KIND_ORDER = {"status": 0, "stage": 1, "milestone": 2, "version": 3, "date": 4}


def _header_value_key(key: str, value: str) -> str:
    if key in _PEOPLE_HEADERS:
        value = _EMAIL.sub(" ", value)
    return normalise(value).strip(" .,;")


def _short(value: str, width: int = 120) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def _reason(label: str, before: str, after: str) -> str:
    return f"header {label}: {_short(before) or '(none)'} → {_short(after) or '(none)'}"


def _typed_fact_reasons(
    old_facts: list[KeyFact], new_facts: list[KeyFact]
) -> tuple[list[str], set[str]]:
    """Reasons for changed typed key facts, and the keys typed on either side.

    A change to a typed fact (status, stage, milestone, version, date) is always
    material. Facts only the record metadata holds (``start == -1``) are reported
    only when no fact of the same kind changed in the content (the metadata
    mostly restates the page: ``status`` and ``status_kind`` move together).
    """
    a, b = fact_map(old_facts), fact_map(new_facts)
    typed_keys: set[str] = set()
    found: list[tuple[int, str, bool, str, str]] = []  # order, key, from meta, kind, reason
    for key in list(a) + [k for k in b if k not in a]:
        fa, fb = a.get(key), b.get(key)
        sides = [f for f in (fb, fa) if f is not None]
        kind = next((f.kind for f in sides if f.kind != "other"), None)
        if kind is None:
            continue
        typed_keys.add(key)
        change = fact_changes([fa] if fa else [], [fb] if fb else [])
        if not change:
            continue
        label, before, after = change[0]
        from_meta = all(f.start < 0 for f in sides)
        found.append(
            (_KIND_ORDER.get(kind, 9), key, from_meta, kind, _reason(label, before, after))
        )
    content_kinds = {kind for _, _, from_meta, kind, _ in found if not from_meta}
    found.sort(key=lambda t: (t[0], t[1]))
    reasons = [r for _, _, from_meta, kind, r in found if not (from_meta and kind in content_kinds)]
    return reasons, typed_keys


def _housekeeping_reasons(
    old_blocks: list[HeaderBlock], new_blocks: list[HeaderBlock], skip: set[str]
) -> list[str]:
    """Reasons for the other (untyped) fields of RFC-822 / YAML style header blocks.

    Any change is material except for housekeeping fields
    (:data:`HOUSEKEEPING_HEADERS`; adding a ``Resolution`` is material, changing
    or dropping its link is not). Fields of bullet headers, tables and meta tags
    are left to the claim diff (their links and names churn).
    """

    def items(blocks: list[HeaderBlock]) -> list[tuple[str, str]]:
        return [
            (f.key, f.value)
            for block in blocks
            if block.layout in HEADER_LAYOUTS
            for f in block.facts
            if f.key not in skip
        ]

    labels = {
        f.key: f.label for blocks in (old_blocks, new_blocks) for b in blocks for f in b.facts
    }
    old_items, new_items = items(old_blocks), items(new_blocks)
    names = {_HEADER_ALIASES.get(k, k): labels.get(k, k) for k, _ in old_items + new_items}
    h_old = join_fields(old_items, _HEADER_ALIASES)
    h_new = join_fields(new_items, _HEADER_ALIASES)
    reasons: list[str] = []
    for key in sorted(set(h_old) | set(h_new)):
        before = h_old.get(key, "")
        after = h_new.get(key, "")
        if _header_value_key(key, before) == _header_value_key(key, after):
            continue
        if key == "resolution":
            if before or not after:
                continue  # link moved or dropped: housekeeping
        elif key in HOUSEKEEPING_HEADERS:
            continue
        reasons.append(_reason(names[key], before, after))
    return reasons


def header_units(blocks: list[HeaderBlock]) -> set[str]:
    """Sentence units judged as key facts rather than as claims.

    Every field of an RFC-822 / YAML style header, and the typed fields (status,
    stage, ...) of bullet headers and tables; their other fields stay claims.
    """
    return {
        fact_unit(f)
        for block in blocks
        if block.layout in LINE_LAYOUTS
        for f in block.facts
        if block.layout in HEADER_LAYOUTS or f.kind != "other"
    }


def key_fact_reasons(
    old: str,
    new: str,
    old_meta: Mapping[str, Any] | None,
    new_meta: Mapping[str, Any] | None,
    old_blocks: list[HeaderBlock] | None = None,
    new_blocks: list[HeaderBlock] | None = None,
) -> list[str]:
    """Header reasons: changed typed key facts first, then other header fields."""
    old_blocks = header_blocks(old) if old_blocks is None else old_blocks
    new_blocks = header_blocks(new) if new_blocks is None else new_blocks
    typed_reasons, typed_keys = _typed_fact_reasons(
        read_key_facts(old, old_meta), read_key_facts(new, new_meta)
    )
    return typed_reasons + _housekeeping_reasons(old_blocks, new_blocks, typed_keys)
