"""A report's source setting — ``sample``, ``corpus:NAME`` or ``web`` — read in one place.

The database keeps the setting as the plain string (``Report.source``); every door and
the engine turn it into a ``SourceSpec`` with ``SourceSpec.parse`` and never look inside
the string themselves. ``str(spec)`` gives the stored string back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.errors import EvergreenError

SAMPLE_CORPUS = "sample"  # the corpus a "sample" source reads (core.sources.sample_corpus)

SourceKind = Literal["sample", "corpus", "web"]
CORPUS_PREFIX = "corpus:"
SOURCE_HELP = "use sample, corpus:NAME or web"


@dataclass(frozen=True)
class SourceSpec:
    """Where a report's searches and fetches go. ``corpus`` is the name of a local corpus
    for ``kind == "corpus"`` and None otherwise."""

    kind: SourceKind
    corpus: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("sample", "corpus", "web"):
            raise EvergreenError(f"Unknown source kind {self.kind!r}: {SOURCE_HELP}.")
        if (self.kind == "corpus") != (self.corpus is not None):
            raise EvergreenError(
                f"A {self.kind} source {'needs' if self.kind == 'corpus' else 'takes no'} "
                f"corpus name: {SOURCE_HELP}."
            )
        if self.corpus is not None:
            _check_corpus_name(self.corpus)

    @classmethod
    def parse(cls, value: str | SourceSpec) -> SourceSpec:
        """The setting a person typed or the database holds; an unknown one is refused
        with one line saying what is accepted."""
        if isinstance(value, SourceSpec):
            return value
        if not isinstance(value, str):
            raise EvergreenError(f"Unknown source {value!r}: {SOURCE_HELP}.")
        text = value.strip()
        if text == "sample":
            return cls("sample")
        if text == "web":
            return cls("web")
        if text.startswith(CORPUS_PREFIX) and text[len(CORPUS_PREFIX) :]:
            return cls("corpus", text[len(CORPUS_PREFIX) :])
        raise EvergreenError(f"Unknown source {value!r}: {SOURCE_HELP}.")

    @classmethod
    def of_corpus(cls, name: str) -> SourceSpec:
        return cls("corpus", name)

    def __str__(self) -> str:
        return f"{CORPUS_PREFIX}{self.corpus}" if self.kind == "corpus" else self.kind

    @property
    def temporal(self) -> bool:
        """Can pages be read as they stood at a past date (a local corpus), or only as they
        are now (the web)?"""
        return self.kind != "web"

    @property
    def corpus_name(self) -> str | None:
        """The local corpus this source reads (the sample's for ``sample``), else None."""
        return SAMPLE_CORPUS if self.kind == "sample" else self.corpus

    @property
    def fetcher_name(self) -> str:
        """The name of the fetcher its pages are read with (what ``SourceCheck.provider``
        starts with): the corpus's name, or ``web``."""
        return self.corpus_name or "web"


def _check_corpus_name(name: str) -> None:
    from core.sources.corpus import NAME_RE  # lazy: a cycle (corpora read source specs)

    if not NAME_RE.match(name):
        raise EvergreenError(
            f"Unknown source {CORPUS_PREFIX + name!r}: a corpus name uses letters, digits, '-', "
            f"'_' or '.' (at most 64); {SOURCE_HELP}."
        )
