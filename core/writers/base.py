"""The writer protocol: who turns evidence into prose.

One interface, several implementations (the offline extractive writer here,
an LLM writer against any OpenAI-compatible server). Writers never touch the
database; the engine hands them evidence and records what each call cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from core.domain.claim_diff import ClaimChange
from core.domain.facets import Facet
from core.domain.key_fact import fact_kind
from core.errors import EvergreenError


class WriterFailed(EvergreenError):
    """The writer could not produce a usable section (e.g. malformed model output after
    one repair attempt). The engine keeps that section unchanged, flags it, and goes on."""


class BudgetExceeded(EvergreenError):
    """The run's token or dollar budget is spent. The engine keeps every section not yet
    written unchanged, flags them, and finishes the run with what it has."""


@dataclass(frozen=True)
class Evidence:
    """One source as a writer sees it: the text, and the marker to cite it by."""

    marker: int
    url: str
    title: str
    content: str
    rank: int = 0  # position in retrieval (lower = more relevant), for ordering


@dataclass(frozen=True)
class EvidenceChange:
    """How a cited source changed since the snapshot the section was written from."""

    marker: int
    kind: str  # changed | material | minor | gone
    claims: Sequence[ClaimChange] = ()
    reasons: Sequence[str] = ()
    new: Evidence | None = None  # None when the page is gone


def declared_news(change: EvidenceChange) -> list[str]:
    """Labels of the status-like fields a changed source now declares differently."""
    labels = []
    for reason in change.reasons:
        if reason.startswith("header ") and ":" in reason:
            label = reason.removeprefix("header ").split(":", 1)[0].strip()
            if fact_kind(label.casefold().replace(" ", "-")) in ("status", "stage"):
                labels.append(label)
    return labels


@dataclass(frozen=True)
class ClaimUpdate:
    """A sentence of the section whose supporting passage changed or vanished.

    ``passages`` holds (old passage, new passage or None when gone) for each passage of
    the cited snapshot the sentence rested on that no longer says the same; the writer
    must rewrite the sentence so it says what the new passages say (or drop it).
    """

    sentence: str  # as it stands in the old body, [n] markers included
    marker: int
    outcome: str  # edited | gone
    passages: tuple[tuple[str, str | None], ...] = ()
    differences: tuple[str, ...] = ()  # "100 MW / 400 MWh → 160 MW / 650 MWh"
    title: str = ""  # the cited page's title
    # the sentence's other passages, still on the page as they were (a size beside a
    # changed status): what a rewrite keeps saying
    intact: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extension:
    """A section that only gains: every claim it makes still holds and no source it
    cites is gone; new pages arrived for it, or a page it cites says something new."""

    heading: str
    body: str
    changes: Sequence[EvidenceChange] = ()
    new_evidence: Sequence[Evidence] = ()


@dataclass(frozen=True)
class OutlineItem:
    heading: str
    level: int
    markers: tuple[int, ...]  # evidence assigned to this section


@dataclass
class Draft:
    """A section body written or revised by a writer."""

    body: str
    markers: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "writer failed: …"
    # what each sentence quotes from the source it cites: {sentence, marker, quote}
    quotes: list[dict[str, object]] = field(default_factory=list)


@runtime_checkable
class Writer(Protocol):
    name: str
    mode_note: str  # shown in the report, e.g. "written in offline extractive mode"

    def plan_queries(self, question: str, max_queries: int = 4) -> list[str]: ...

    def propose_outline(
        self,
        question: str,
        evidence: Sequence[Evidence],
        max_sections: int = 6,
        facets: Sequence[Facet] = (),
    ) -> list[OutlineItem]:
        """Sections for the question. ``facets``: the parts the question names, each with
        the sources the relevance model assigns it; a writer makes them the sections."""
        ...

    def write_section(
        self, question: str, heading: str, evidence: Sequence[Evidence], *, brief: bool = False
    ) -> Draft:
        """A section from ``evidence``. ``brief``: an update writes it from pages new in
        its window; a writer that pays for what it reads reads each of them as an
        extension reads a new source (its opening and its passages nearest the section),
        not as a first report does."""
        ...

    def revise_section(
        self,
        question: str,
        heading: str,
        old_body: str,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
        claims: Sequence[ClaimUpdate] = (),
    ) -> Draft:
        """Revise ``old_body``: every sentence named in ``claims`` is rewritten to say what
        its new passages say (or dropped when they are gone); every other sentence stays
        byte-identical; new evidence is added where it fits."""
        ...

    def extend_sections(self, question: str, parts: Sequence[Extension]) -> list[Draft]:
        """Each part's section with what its sources add after it (one draft per part,
        in order), as ``revise_section`` would extend it; a writer that pays per request
        asks once for all of them."""
        ...

    def summarise_change(self, title: str, change: EvidenceChange) -> str: ...
