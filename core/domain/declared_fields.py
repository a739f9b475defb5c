"""Declared fields: ``Label: value`` lines of a page or a sentence, and their values.

A page declares a fact on a line of its own ("- Status: Approved"); a report sentence
may state several ("PEP 563 — Status: Accepted; Type: Standards Track"). A declared value
is compared as a value (dates as ISO, inline markup read), never as written.
"""

from __future__ import annotations

import re

from core.domain.citations import strip_citations
from core.domain.fact_values import normalise_value
from core.domain.text import clean_inline

_FIELD = re.compile(r"^\s*(?:[-*+•]\s+)?(?:\*\*)?([A-Za-z][\w ()/&'-]{0,60}?)(?:\*\*)?\s*:\s*(.+)$")


def field_of(text: str) -> tuple[str, str] | None:
    """(label, value) of a declared field line ("- Status: Approved"), else None.

    A label is at most four words; a longer lead-in before a colon is prose."""
    m = _FIELD.match(text)
    if not m or len(m.group(2)) > 200 or len(m.group(1).split()) > 4:
        return None
    return m.group(1).strip(), m.group(2).strip()


def stated_fields(sentence: str) -> list[tuple[str, str]]:
    """``Label: value`` pairs a sentence states ("PEP 563 — Status: Accepted; Type: …")."""
    text = clean_inline(strip_citations(sentence)).rstrip(".")
    head, sep, tail = text.partition(" — ")
    parts = tail.split(";") if sep else ([text] if field_of(text) else [])
    out: list[tuple[str, str]] = []
    for part in parts:
        f = field_of(part.strip())
        if f is not None:
            out.append(f)
        elif out:  # a value holding a semicolon ("Funded; construction due in August")
            out[-1] = (out[-1][0], f"{out[-1][1]};{part}")
    return out


def strip_markup(value: str) -> str:
    return " ".join(value.replace("**", "").replace("__", "").replace("`", "").split()).strip()


def field_value(value: str) -> str:
    """A declared value as compared: its inline markup read first (an rst link
    "`22-Dec-2009 <url>`__" is its text), then emphasis dropped and the value canonised."""
    return canon_value(strip_markup(clean_inline(value)))


def canon_value(value: str) -> str:
    """One value's comparison form: the key-fact reader's (dates as ISO, "Swift 3" =
    "Swift 3.0", a date-only parenthesis dropped), after the inline markup is cleaned."""
    return normalise_value(clean_inline(value))
