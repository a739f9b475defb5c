"""Which search provider and fetcher serve a report's ``source`` setting."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import EvergreenError
from core.sources.base import Fetcher, SearchProvider


@dataclass
class Providers:
    search: SearchProvider
    fetcher: Fetcher
    temporal: bool  # can fetch a page as it stood at a past date

    def close(self) -> None:
        for part in (self.search, self.fetcher):
            close = getattr(part, "close", None)
            if close:
                close()


def providers_for(source: str) -> Providers:
    from core.sources.corpus import Corpus

    if source == "sample":
        from core.workspace import SAMPLE_CORPUS, ensure_sample_corpus

        try:
            corpus = Corpus.open(SAMPLE_CORPUS)
        except EvergreenError:
            ensure_sample_corpus()
            corpus = Corpus.open(SAMPLE_CORPUS)
        return Providers(corpus, corpus, temporal=True)
    if source.startswith("corpus:"):
        corpus = Corpus.open(source.removeprefix("corpus:"))
        return Providers(corpus, corpus, temporal=True)
    if source == "web":
        raise EvergreenError(
            "Web sources (Tavily search, crawl4ai fetching) are not available in this build; "
            "use source 'sample' or 'corpus:NAME'."
        )
    raise EvergreenError(f"Unknown source {source!r}: use sample, corpus:NAME or web.")
