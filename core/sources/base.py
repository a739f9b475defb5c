"""One protocol per kind of provider: where evidence is searched and fetched.

Search providers (local corpus, Tavily) return ranked SearchResults bounded by
dates; fetchers (corpus, crawl4ai, HTTP) return the page as it stood at a time.
A page that does not exist (at that date) raises PageNotFound, which the
evidence pool records as ``gone`` rather than as an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from core.errors import NotFoundError


class PageNotFound(NotFoundError):
    """The page does not exist at the requested date (or at all)."""


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    snippet: str
    date: datetime | None  # when this content was published / last updated
    score: float
    raw_content: str | None = None  # when the provider returns the page with the hit


@dataclass(frozen=True)
class FetchedPage:
    url: str
    title: str
    content: str
    fetched_at: datetime
    as_of: datetime | None = None  # the instant asked for
    published: datetime | None = None  # when this content became valid, if known
    meta: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    def search(
        self,
        query: str,
        *,
        max_results: int = 10,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
    ) -> list[SearchResult]:
        """Ranked hits for ``query`` among pages published/updated in
        (start_date, end_date] and visible at end_date."""
        ...


@runtime_checkable
class Fetcher(Protocol):
    name: str

    def fetch(self, url: str, as_of: datetime | None = None) -> FetchedPage:
        """The page as it stood at ``as_of`` (now if None); PageNotFound if absent."""
        ...


def canonical_url(url: str) -> str:
    """One spelling per page: trimmed, scheme and host lower-cased, no fragment."""
    parts = urlsplit(url.strip())
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, "")
    )
