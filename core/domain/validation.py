"""Checks on what a person types: questions, titles and "as of" dates."""

from __future__ import annotations

import re
from datetime import datetime

from core.dates import as_utc, utcnow
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


def check_as_of(when: datetime | None, *, now: datetime | None = None) -> datetime | None:
    """An "as of" a report can be read, written or updated at: today or earlier.

    A date after today is refused (nothing can be seen as it will stand: a version dated
    in the future could never be updated). A later time today — what a bare date for today
    means (end of day) — is taken as now, so an update later today still moves forward.
    ``None`` (meaning "now") is returned as is.
    """
    if when is None:
        return None
    current = as_utc(now or utcnow())
    moment = as_utc(when)
    if moment.date() > current.date():
        raise EvergreenError(
            f"As-of {moment.date().isoformat()} is in the future (today is "
            f"{current.date().isoformat()}): sources can only be read as they stand now or "
            "stood before. Choose today or an earlier date."
        )
    return min(moment, current)
