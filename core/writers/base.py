"""The writer protocol: who turns evidence into prose.

One interface, several implementations (the offline extractive writer here,
an LLM writer against any OpenAI-compatible server). Writers never touch the
database; the engine hands them evidence and records what each call cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from core.changes import ClaimChange
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


@runtime_checkable
class Writer(Protocol):
    name: str
    mode_note: str  # shown in the report, e.g. "written in offline extractive mode"

    def plan_queries(self, question: str, max_queries: int = 4) -> list[str]: ...

    def propose_outline(
        self, question: str, evidence: Sequence[Evidence], max_sections: int = 6
    ) -> list[OutlineItem]: ...

    def write_section(self, question: str, heading: str, evidence: Sequence[Evidence]) -> Draft: ...

    def revise_section(
        self,
        question: str,
        heading: str,
        old_body: str,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
    ) -> Draft: ...

    def summarise_change(self, title: str, change: EvidenceChange) -> str: ...
