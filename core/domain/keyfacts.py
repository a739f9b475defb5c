"""Read the "key facts" a page declares about itself near its top.

A key fact is a labelled value that a page states as a field rather than in prose:
``Status: Accepted`` in a PEP's RFC-822 header, ``* Status: **Implemented (Swift 5.5)**``
in a Markdown bullet header, ``- Capacity: 100 MW / 400 MWh`` on a project page,
``| Status | Final |`` in a definition table, ``<meta name="status" content="Draft">``,
or a field of a corpus record's own metadata. :func:`read_key_facts` reads the header
blocks at the top of the page (:mod:`core.domain.header_blocks`: RFC-822 headers, YAML front
matter, ``<pre>`` and fenced header blocks, bullet headers, definition tables, HTML meta
tags), then the ``meta`` mapping of a corpus record (flat fields and a nested ``headers``
dict).

Each fact (:class:`core.domain.key_fact.KeyFact`) has a canonical ``key`` and a ``kind``:
``status``, ``stage``, ``version``, ``milestone`` and ``date`` facts are *typed* (a change
to one is a change to what the page declares); everything else is ``other``.
:func:`fact_changes` compares two pages' typed facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.domain.fact_values import clean_value, normalise_value
from core.domain.header_blocks import header_blocks
from core.domain.key_fact import KeyFact, canonical_key, fact_kind

#: corpus-record bookkeeping fields that are not facts about the page
_META_SKIP = frozenset(
    {
        "content",
        "content-sha1",
        "content-hash",
        "sha1",
        "sha256",
        "hash",
        "commit",
        "path",
        "url",
        "as-of",
        "fetched-at",
        "is-new",
        "changed",
        "changed-since-prev-year",
        "gone",
        "id",
        "number",
    }
)

__all__ = [
    "declared_line",
    "fact_changes",
    "fact_map",
    "header_fields",
    "join_fields",
    "read_key_facts",
]


def _meta_facts(meta: Mapping[str, Any]) -> list[KeyFact]:
    out: list[KeyFact] = []
    seen: set[str] = set()

    def add(label: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return
        key = canonical_key(label)
        if not key or key in seen or key in _META_SKIP:
            return
        if isinstance(value, int) and key.isalpha() and len(key) <= 4:
            return  # a document number ("pep": 8, "rfc": 822)
        seen.add(key)
        text = clean_value(str(value))
        out.append(KeyFact(key, label, text, fact_kind(key, text), "", -1))

    for label, value in meta.items():
        if label != "headers":
            add(str(label), value)
    headers = meta.get("headers")
    if isinstance(headers, Mapping):
        for label, value in headers.items():
            add(str(label), value)
    return out


def read_key_facts(content: str, meta: Mapping[str, Any] | None = None) -> list[KeyFact]:
    """The key facts ``content`` declares near its top, then those of ``meta``.

    Facts are in document order; a key may occur more than once (see :func:`fact_map`).
    Meta facts (``raw == ""``, ``start == -1``) are added only for keys the content does
    not declare: facts in the content win.
    """
    facts = [f for block in header_blocks(content) for f in block.facts]
    if meta:
        have = {f.key for f in facts}
        facts.extend(f for f in _meta_facts(meta) if f.key not in have)
    return facts


def fact_map(facts: Sequence[KeyFact]) -> dict[str, KeyFact]:
    """The first fact per key."""
    out: dict[str, KeyFact] = {}
    for f in facts:
        out.setdefault(f.key, f)
    return out


def fact_changes(old: Sequence[KeyFact], new: Sequence[KeyFact]) -> list[tuple[str, str, str]]:
    """(label, before, after) for every TYPED fact whose value differs.

    Compared by :func:`normalise_value` (casefold, markup and surrounding punctuation
    removed, ISO dates, a trailing ``.0`` of a version number ignored: ``Swift 3`` equals
    ``Swift 3.0``). A fact typed on either side counts. Added or removed typed facts use
    ``""`` for the missing side. Keys in the order of ``old``, then new keys.
    """
    a, b = fact_map(old), fact_map(new)
    out: list[tuple[str, str, str]] = []
    for key in list(a) + [k for k in b if k not in a]:
        fa, fb = a.get(key), b.get(key)
        if not any(f is not None and f.kind != "other" for f in (fa, fb)):
            continue
        before = fa.value if fa else ""
        after = fb.value if fb else ""
        if normalise_value(before) == normalise_value(after):
            continue
        out.append(((fb or fa).label, before, after))  # type: ignore[union-attr]
    return out


def join_fields(
    items: Sequence[tuple[str, str]], aliases: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``(label, value)`` pairs as a mapping of casefolded labels (through ``aliases``,
    old name -> current name) to values; a repeated label's values are joined with ``, ``."""
    out: dict[str, str] = {}
    for key, value in items:
        k = key.casefold()
        if aliases:
            k = aliases.get(k, k)
        out[k] = f"{out[k]}, {value}" if out.get(k) else value
    return out


def header_fields(text: str) -> dict[str, str]:
    """The key-fact fields at the top of ``text``: casefolded labels -> values.

    Built from :func:`read_key_facts`, so it understands every layout above: an RFC-822
    block (continuation lines unfolded), YAML front matter (a list's items joined with
    ``, ``) and ``---``-closed ``key: value`` blocks, ``<pre>`` and fenced header blocks,
    Markdown bullet headers (``* Status: **Accepted**``), definition tables and HTML meta
    tags. Values have their markup removed; repeated labels are joined with ``, ``.
    """
    return join_fields([(f.label, f.value) for f in read_key_facts(text)])


def declared_line(title: str, content: str) -> str | None:
    """What a page declares of itself as one line: "Title — Status: Superseded;
    Superseded-By: 345; Created: 2001" (its status, stage, version and date fields, and
    what replaced it); None when it declares no status or stage."""
    facts = [f for f in read_key_facts(content) if f.value]
    if not any(f.kind in ("status", "stage") for f in facts):
        return None
    shown = [f for f in facts if f.kind != "other" or "-by" in f.key]
    fields = "; ".join(f"{f.label}: {f.value}" for f in dict.fromkeys(shown))
    name = " ".join((title or "").split()) or "This page"
    return f"{name} — {fields}."
