"""The ``freshness`` measure: of the sources R(t-1) cited that changed materially by t,
the share whose old citing sentences R(t) either changed or re-anchored intact (from the
run's proposals); for a rebuild, the share it cites again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, select

from core.bench.measure import VersionView, anchored, claim_rows
from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.engine.review import proposals_of
from core.states import HOLDING_OUTCOMES, ClaimOutcome
from core.store.models import Section

#: outcomes of a re-checked claim after which its unchanged sentence is still anchored
FRESH_OUTCOMES = HOLDING_OUTCOMES | {ClaimOutcome.ANCHORED}


def freshness_update(
    session: Session, run_id: int, prev: VersionView, material: set[str], new: VersionView
) -> float | None:
    """Of the sources R(t-1) cited that changed materially by t, the share for which
    every sentence of R(t-1) citing them that R(t) still states unchanged was re-anchored
    intact (its check held: intact, moved, reworded, or anchored for the first time, and
    its claim in R(t) is anchored verbatim in the snapshot it cites); sentences the update
    changed or removed count as handled. An extend that leaves such sentences untouched
    while their claims were edited or gone is not fresh."""
    targets = prev.urls & material
    if not targets:
        return None
    keys = dict(
        session.exec(
            select(Section.id, Section.key).where(Section.version_id == new.version.id)
        ).all()
    )
    verified = {
        (keys[c.section_id], sentence_key(c.sentence), c.marker)
        for c in claim_rows(session, new.version.id)
        if anchored(c)
    }
    final = {sec.key: sec.body for sec in new.doc.sections}
    missed = unfresh_sources(
        proposals_of(session, run_id), prev.marker_urls, targets, final, verified
    )
    return round(len(targets - missed) / len(targets), 4)


def unfresh_sources(
    proposals: Iterable[Any],
    marker_urls: dict[int, str],
    targets: set[str],
    final: dict[str, str],
    verified: set[tuple[str, str, int]],
) -> set[str]:
    """The target sources some sentence of R(t-1) still cites, unchanged in R(t), without
    having been re-anchored intact. ``proposals`` are the run's (``key``, ``old_text``,
    ``claims`` checks); ``final`` is R(t)'s section bodies by key; ``verified`` holds the
    (section key, sentence key, marker) of R(t)'s claims anchored verbatim."""
    missed: set[str] = set()
    for p in proposals:
        body = final.get(p.key)
        if not p.old_text or body is None:
            continue  # an added section (all new sentences) or a removed one
        kept = {(sentence_key(s), m) for _pos, s, ms in cited_sentences(body) for m in ms}
        outcome = {
            (sentence_key(str(c["sentence"])), int(c["marker"])): c.get("outcome")
            for c in p.claims or []
        }
        for _pos, sentence, markers in cited_sentences(p.old_text):
            for m in markers:
                url = marker_urls.get(m)
                key = (sentence_key(sentence), m)
                if url not in targets or key not in kept:
                    continue  # another source, or a sentence the update changed
                if outcome.get(key) not in FRESH_OUTCOMES or (p.key, *key) not in verified:
                    missed.add(url)
    return missed


def freshness_rebuild(prev_urls: set[str], material: set[str], new_urls: set[str]) -> float | None:
    """For a from-scratch report: the share of those sources it cites again (read anew)."""
    targets = prev_urls & material
    if not targets:
        return None
    return round(len(targets & new_urls) / len(targets), 4)
