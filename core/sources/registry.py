"""Which search provider and fetcher serve a report's ``source`` setting (a
``core.source_spec.SourceSpec``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import EvergreenError
from core.settings import get_settings
from core.source_spec import SourceSpec
from core.sources.base import Fetcher, SearchProvider
from core.sources.corpus import Corpus
from core.sources.sample_corpus import ensure_sample_corpus


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


def providers_for(source: str | SourceSpec) -> Providers:
    """The search provider and fetcher a source setting (or its stored string) uses."""
    spec = SourceSpec.parse(source)
    if spec.kind == "web":
        return web_providers()
    name = spec.corpus_name
    assert name is not None  # a sample or corpus source reads a local corpus
    try:
        corpus = Corpus.open(name)
    except EvergreenError:
        if spec.kind != "sample":
            raise
        ensure_sample_corpus()  # the sample corpus is made on first use
        corpus = Corpus.open(name)
    return Providers(corpus, corpus, temporal=spec.temporal)


def web_providers() -> Providers:
    """Tavily search + crawl4ai fetching, sharing the pages a search returns in full.
    Not temporal: the web is fetched as it is now. (Imported here: a corpus report's
    commands need neither client, and they cost every command 0.2 s to load.)"""
    from core.sources.tavily import RawContentCache, TavilySearch
    from core.sources.web import WebFetcher

    settings = get_settings()
    cache = RawContentCache()
    search = TavilySearch.from_settings(settings, cache)  # a clear error without a key
    return Providers(search, WebFetcher.from_settings(settings, cache), temporal=False)


def check_source(source: str | SourceSpec) -> str:
    """Validate a report's source setting before anything is written: it must parse, a
    corpus must exist, and the web needs its key and browser. Returns the string to store."""
    spec = SourceSpec.parse(source)
    if spec.kind == "web":
        providers_for(spec).close()  # a missing key or browser fails here, before any write
    elif spec.kind == "corpus":
        Corpus.open(str(spec.corpus)).close()
    return str(spec)
