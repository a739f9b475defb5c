"""Checks on text a person types: questions and titles."""

from __future__ import annotations

import re

from core.errors import EvergreenError

MAX_QUESTION = 2000
MAX_TITLE = 300
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """Remove control and bidi-override characters; fold whitespace runs to one space."""
    return " ".join(_CONTROL.sub(" ", text).split())


def clean_question(question: str) -> str:
    text = strip_controls(question or "")
    if not text:
        raise EvergreenError("The research question is empty: say what the report should answer.")
    if len(text) > MAX_QUESTION:
        raise EvergreenError(
            f"The research question is {len(text):,} characters long; keep it under "
            f"{MAX_QUESTION:,} (put background material in the sources, not the question)."
        )
    return text


def clean_title(title: str, fallback: str = "Untitled report") -> str:
    text = strip_controls(title or "")[:MAX_TITLE].strip()
    return text or fallback
