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


def corpus_name(source: str) -> str | None:
    """The local corpus a source setting reads (``sample`` or ``corpus:NAME``), else None."""
    if source == "sample":
        from core.workspace import SAMPLE_CORPUS

        return SAMPLE_CORPUS
    if source.startswith("corpus:"):
        return source.removeprefix("corpus:")
    return None


def fetcher_name(source: str) -> str:
    """The name of the fetcher ``providers_for(source)`` reads pages with (a corpus's
    name, or ``web``), without opening it."""
    return corpus_name(source) or source


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
        return web_providers()
    raise EvergreenError(f"Unknown source {source!r}: use sample, corpus:NAME or web.")


def web_providers() -> Providers:
    """Tavily search + crawl4ai fetching, sharing the pages a search returns in full.
    Not temporal: the web is fetched as it is now."""
    from core.settings import get_settings
    from core.sources.tavily import RawContentCache, TavilySearch
    from core.sources.web import WebFetcher

    settings = get_settings()
    cache = RawContentCache()
    search = TavilySearch.from_settings(settings, cache)  # a clear error without a key
    return Providers(search, WebFetcher.from_settings(settings, cache), temporal=False)
