"""Notes on flagged claims: the plain-words note after each sentence whose claim is stale
or unsupported, and a section body rendered as safe HTML with those notes in place."""

from __future__ import annotations

import re

from sqlmodel import Session

from core.app.view_text import esc, markdown_html
from core.dates import day
from core.domain.claim_words import claim_change_text, plain_unit
from core.states import ClaimState
from core.store.models import Claim, Snapshot

# private-use characters: a note's place in a body survives Markdown rendering as text
_NOTE_OPEN, _NOTE_CLOSE = "\ue000", "\ue001"
_NOTE = re.compile(f"{_NOTE_OPEN}(\\d+){_NOTE_CLOSE}")
FLAGGED_STATES = ("stale", "unsupported")


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def claim_note(session: Session, claim: Claim, number: int | None = None) -> tuple[str, str]:
    """(short note, longer explanation) for a stale or unsupported claim, in plain words;
    ``number``: the source's number as the reader sees it (default: the stored marker)."""
    marker = claim.marker if number is None else number
    detail = claim.detail or {}
    if claim.state == ClaimState.STALE:
        snap = session.get(Snapshot, claim.snapshot_id) if claim.snapshot_id else None
        since = f" since {day(snap.as_of)}" if snap is not None and snap.as_of else ""
        passages = list(detail.get("passages") or [])
        change = claim_change_text({"outcome": detail.get("outcome"), "passages": passages})
        now = [p.get("new") for p in passages if p.get("new")]
        long = (
            f"The source [{marker}] now says: “{_clip(plain_unit(now[0]), 400)}”"
            if now
            else f"The passage of source [{marker}] this sentence relied on is gone."
        )
        long += f" This sentence still cites the source as it was{since}."
        return f"stale: source [{marker}] changed{since} ({_clip(change)})", long
    missing = [str(m) for m in detail.get("missing") or []]
    short = f"unsupported: not found in source [{marker}]"
    if missing:
        short += f" ({_clip(', '.join(missing), 80)} missing)"
    return short, "The cited source does not appear to say this; check the sentence."


def _note_html(notes: list[tuple[str, str, str]]) -> str:
    return "".join(
        f'<span class="eg-flag eg-flag-{esc(state)}" title="{esc(long)}">⚠ {esc(short)}</span>'
        for state, short, long in notes
    )


def _sentence_pattern(sentence: str) -> re.Pattern[str] | None:
    words = sentence.split()
    if not words or sentence.lstrip().startswith("|"):  # a table row: note it below
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words))


def flagged_body_html(
    body: str, known: set[int], flagged: list[tuple[str, list[tuple[str, str, str]]]]
) -> str:
    """A section body as safe HTML with a note after each flagged sentence; notes whose
    sentence cannot be found in the body are listed under it."""
    marked, leftovers = body, []
    notes: list[str] = []
    for sentence, sentence_notes in flagged:
        pattern = _sentence_pattern(sentence)
        m = pattern.search(marked) if pattern else None
        if m is None:
            leftovers.append((sentence, sentence_notes))
            continue
        notes.append(_note_html(sentence_notes))
        token = f"{_NOTE_OPEN}{len(notes) - 1}{_NOTE_CLOSE}"
        marked = marked[: m.end()] + token + marked[m.end() :]
    rendered = markdown_html(marked, known)
    rendered = _NOTE.sub(lambda m: " " + notes[int(m.group(1))], rendered)
    rendered = rendered.replace(_NOTE_OPEN, "").replace(_NOTE_CLOSE, "")
    if leftovers:
        rendered += (
            '<ul class="eg-flag-list">'
            + "".join(f"<li>“{esc(sentence)}” {_note_html(n)}</li>" for sentence, n in leftovers)
            + "</ul>"
        )
    return rendered
