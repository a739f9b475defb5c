"""One protocol per kind of provider: where evidence is searched and fetched.

Search providers (local corpus, Tavily) return ranked SearchResults bounded by
dates; fetchers (corpus, crawl4ai, HTTP) return the page as it stood at a time.
A page that does not exist (at that date) raises PageNotFound, which the
evidence pool records as ``gone`` rather than as an error. A fetcher that reads
pages over HTTP keeps each response's validators (ETag, Last-Modified); given them
back, it asks conditionally and raises NotModified on a 304.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from core.errors import NotFoundError


class PageNotFound(NotFoundError):
    """The page does not exist at the requested date (or at all)."""


class NotModified(Exception):  # noqa: N818 - named for the HTTP status it stands for
    """The server says the page is as it was when these validators were given (HTTP 304):
    no body was transferred."""


@dataclass(frozen=True)
class Validators:
    """What a conditional re-check sends: the page's ETag and Last-Modified as the server
    gave them (either may be missing)."""

    etag: str | None = None
    last_modified: str | None = None

    def __bool__(self) -> bool:
        return bool(self.etag or self.last_modified)


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    snippet: str
    date: datetime | None  # when this content was published / last updated
    score: float
    raw_content: str | None = None  # when the provider returns the page with the hit
    first_seen: datetime | None = None  # when the page first appeared, if known


@dataclass(frozen=True)
class FetchedPage:
    url: str
    title: str
    content: str
    fetched_at: datetime
    as_of: datetime | None = None  # the instant asked for
    published: datetime | None = None  # when this content became valid, if known
    meta: dict[str, object] = field(default_factory=dict)
    validators: Validators | None = None  # the response's ETag / Last-Modified, if any


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
    #: what else a stored look at a page depends on: a corpus changes it when pages are
    #: imported into it, so the shared evidence pool does not reuse an older look
    revision: str

    def fetch(
        self, url: str, as_of: datetime | None = None, *, validators: Validators | None = None
    ) -> FetchedPage:
        """The page as it stood at ``as_of`` (now if None); PageNotFound if absent.
        With ``validators`` (from an earlier response) a fetcher that speaks HTTP asks
        conditionally and raises NotModified when the page is unchanged."""
        ...


@runtime_checkable
class Collection(Protocol):
    """A search provider that holds the whole collection it searches (a corpus, your
    folder), so relevance can be measured by what sets a page apart within it
    (``core.domain.relevance.collection_centre``). The web is no such collection."""

    revision: str  # changes whenever the collection's pages do

    def identity(self) -> str:
        """What tells this collection from any other (for a corpus, its index file)."""
        ...

    def page_count(self) -> int: ...

    def sample_pages(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` pages, (title, content) of each page's newest version, the same
        ones every time for the same collection."""
        ...

    def recall(self, key: str) -> str | None:
        """A value stored with the collection (None when there is none)."""
        ...

    def remember(self, key: str, value: str) -> None:
        """Store a value with the collection (derived data: safe to lose)."""
        ...


def canonical_url(url: str) -> str:
    """One spelling per page: trimmed, scheme and host lower-cased, no fragment."""
    parts = urlsplit(url.strip())
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, "")
    )
