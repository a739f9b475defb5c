"""Numbers about one committed version: citation quality, freshness, recall."""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz
from sqlmodel import Session

from core.metrics import continuity
from core.models import ReportVersion
from core.report_state import ReportDoc
from core.repository import citations_of, get_report, get_version, load_doc, outline_of
from core.review import _text, proposals_of
from core.text import clean_inline, split_cited_sentences, strip_markers
from core.writers.base import Evidence
from core.writers.offline import fact_sentence


@dataclass
class VersionView:
    report_id: int
    number: int
    version: ReportVersion
    doc: ReportDoc

    @property
    def urls(self) -> set[str]:
        return {r.url for r in self.doc.references}


def view(session: Session, report_id: int, number: int | None = None) -> VersionView:
    version = get_version(session, get_report(session, report_id), number)
    return VersionView(report_id, version.number, version, load_doc(session, version))


def continuity_between(old: VersionView, new: VersionView) -> dict[str, float]:
    return continuity(
        _text(old.doc.sections),
        _text(new.doc.sections),
        outline_of(old.doc.sections),
        outline_of(new.doc.sections),
    ).as_dict()


def citation_quality(session: Session, v: VersionView) -> dict[str, float]:
    """validity: share of [n] markers that resolve to a stored snapshot with content;
    support: share of cited sentences found in (one of) their snapshots."""
    snaps = citations_of(session, v.version.id)
    markers = [m for s in v.doc.sections for m in s.markers]
    valid = sum(1 for m in markers if m in snaps and snaps[m].content)
    cited = supported = 0
    cleaned: dict[int, str] = {}
    for section in v.doc.sections:
        for para in section.body.split("\n\n"):
            for sentence in split_cited_sentences(para):
                ms = [m for m in section.markers if f"[{m}]" in sentence]
                if not ms:
                    continue
                cited += 1
                text = strip_markers(sentence).rstrip(".!?")
                for m in ms:
                    snap = snaps.get(m)
                    if snap is None or not snap.content:
                        continue
                    fact = fact_sentence(Evidence(m, "", snap.title, snap.content))
                    if fact and text == fact.rstrip(".!?"):
                        supported += 1  # a header summary: true to the snapshot's fields
                        break
                    if m not in cleaned:
                        cleaned[m] = " ".join(clean_inline(snap.content).split())
                    if _found(text, cleaned[m]):
                        supported += 1
                        break
    return {
        "citation_validity": round(valid / len(markers), 4) if markers else 1.0,
        "support": round(supported / cited, 4) if cited else 1.0,
    }


def _found(sentence: str, source: str) -> bool:
    if len(sentence) < 8:
        return True
    if sentence in source:
        return True
    # the writer's sentence must match a stretch of the source almost exactly
    return fuzz.partial_ratio(sentence, source, score_cutoff=90) >= 90


def freshness_update(
    session: Session, run_id: int, prev_urls: set[str], material: set[str]
) -> float | None:
    """Of the sources R(t-1) cited that changed materially by t, the share whose citing
    sections the update revised or explicitly re-confirmed (change detected)."""
    targets = prev_urls & material
    if not targets:
        return None
    handled: set[str] = set()
    for p in proposals_of(session, run_id):
        acted = p.action in ("revise", "extend", "remove") or p.rationale.startswith(
            "Sources changed but no cited sentence"
        )
        for e in p.evidence:
            if acted and e["url"] in targets and e["kind"] in ("material", "changed", "gone"):
                handled.add(e["url"])
    return round(len(handled) / len(targets), 4)


def freshness_rebuild(prev_urls: set[str], material: set[str], new_urls: set[str]) -> float | None:
    """For a from-scratch report: the share of those sources it cites again (read anew)."""
    targets = prev_urls & material
    if not targets:
        return None
    return round(len(targets & new_urls) / len(targets), 4)


def recall(new_pages: set[str], cited: set[str]) -> float | None:
    return round(len(new_pages & cited) / len(new_pages), 4) if new_pages else None
