"""Web search through Tavily (tavily-python), bounded by the update window.

``start_date`` / ``end_date`` (YYYY-MM-DD) come from the window the engine searches:
a new report asks for pages up to its date, an update for pages published since the
last version (the paper's temporal control; Tavily filters by publication date, so
pages without one may still appear). With ``include_raw_content`` each hit carries its
page text; it is kept in a RawContentCache that the web fetcher of the same run reads
first, saving a fetch. The engine counts every search.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import requests
from tavily import TavilyClient
from tavily import errors as tavily_errors
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from core.dates import http_date
from core.domain.validation import strip_controls
from core.errors import EvergreenError
from core.redact import redact_credentials
from core.sources.base import SearchResult, canonical_url

MAX_RESULTS = 20  # Tavily's upper bound per request


class RawContentCache:
    """Page text a search returned with its hits, for the fetcher of the same run."""

    def __init__(self) -> None:
        self._pages: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def put(self, url: str, title: str, content: str) -> None:
        with self._lock:
            self._pages[canonical_url(url)] = (title, content)

    def get(self, url: str) -> tuple[str, str] | None:
        with self._lock:
            return self._pages.get(canonical_url(url))

    def __len__(self) -> int:
        return len(self._pages)


class TavilySearch:
    """SearchProvider over the Tavily API (or anything answering like it)."""

    name = "tavily"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        cache: RawContentCache | None = None,
        raw_content: bool = True,
        search_depth: str = "basic",
        timeout: float = 30.0,
        attempts: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not api_key:
            raise EvergreenError("Web search needs a Tavily API key: set TAVILY_API_KEY.")
        self._client = TavilyClient(api_key=api_key, api_base_url=base_url or None)
        self._key = api_key
        self.base_url = base_url or "https://api.tavily.com"
        self.cache = cache
        self.raw_content = raw_content and cache is not None
        self.search_depth = search_depth
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = max(0.0, backoff)

    @classmethod
    def from_settings(cls, settings: Any, cache: RawContentCache | None = None) -> TavilySearch:
        if settings.tavily_api_key is None:
            raise EvergreenError(
                "Source 'web' needs a Tavily API key: set TAVILY_API_KEY "
                "(and TAVILY_BASE_URL for a compatible endpoint)."
            )
        return cls(
            settings.tavily_api_key.get_secret_value(),
            base_url=settings.tavily_base_url,
            cache=cache,
            raw_content=settings.tavily_raw_content,
        )

    def search(
        self,
        query: str,
        *,
        max_results: int = 10,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
    ) -> list[SearchResult]:
        params: dict[str, Any] = {
            "max_results": max(1, min(int(max_results), MAX_RESULTS)),
            "search_depth": self.search_depth,
            "timeout": self.timeout,
        }
        if start_date is not None:
            params["start_date"] = _day(start_date)
        if end_date is not None:
            params["end_date"] = _day(end_date)
        if self.raw_content:
            params["include_raw_content"] = "markdown"
        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.backoff, max=8 * max(self.backoff, 0.01)),
            retry=retry_if_exception(_transient),
            reraise=True,
        )
        try:
            data = retrying(self._client.search, query[:400], **params)
        except Exception as exc:  # tavily-python raises many kinds; all mean "search failed"
            tries = retrying.statistics.get("attempt_number", 1)
            note = f" (after {tries} attempts)" if tries > 1 else ""
            raise EvergreenError(self._message(exc, note)) from None
        return self._results(data)

    def _results(self, data: Any) -> list[SearchResult]:
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise EvergreenError("Tavily search failed: the reply holds no result list.")
        out: list[SearchResult] = []
        seen: set[str] = set()
        for hit in data["results"]:
            if not isinstance(hit, dict) or not str(hit.get("url") or "").startswith("http"):
                continue
            url = canonical_url(str(hit["url"]))
            if url in seen:
                continue
            seen.add(url)
            title = strip_controls(str(hit.get("title") or url))
            raw = hit.get("raw_content")
            raw = raw if isinstance(raw, str) and raw.strip() else None
            if raw is not None and self.cache is not None:
                self.cache.put(url, title, raw)
            published = _parse_date(hit.get("published_date"))
            out.append(
                SearchResult(
                    url=url,
                    title=title,
                    snippet=" ".join(str(hit.get("content") or "").split()),
                    date=published,
                    score=float(hit.get("score") or 0.0),
                    raw_content=raw,
                    first_seen=published,  # Tavily dates a page by its publication
                )
            )
        return out

    def _message(self, exc: Exception, note: str = "") -> str:
        where = "" if self.base_url == "https://api.tavily.com" else f" at {self.base_url}"
        where = redact_credentials(where)  # a base URL may carry user:password@
        if isinstance(exc, tavily_errors.InvalidAPIKeyError | tavily_errors.MissingAPIKeyError):
            why = "the API key was refused (HTTP 401); check TAVILY_API_KEY"
        elif isinstance(exc, tavily_errors.UsageLimitExceededError):
            why = "the plan's usage limit or rate limit was reached (HTTP 429); try again later"
        elif isinstance(exc, tavily_errors.ForbiddenError):
            why = "access was denied (HTTP 403); check the key's plan and permissions"
        elif isinstance(exc, tavily_errors.BadRequestError):
            why = f"the request was rejected (HTTP 400: {_short(str(exc))})"
        elif isinstance(exc, tavily_errors.TimeoutError | requests.Timeout):
            why = f"no answer within {self.timeout:g} s"
        elif isinstance(exc, requests.HTTPError) and exc.response is not None:
            why = f"the service answered HTTP {exc.response.status_code}"
        elif isinstance(exc, requests.ConnectionError):
            why = "the service cannot be reached"
        else:
            why = f"{type(exc).__name__}: {_short(str(exc))}"
        text = f"Tavily search failed{where}: {why}{note}."
        return redact_credentials(text).replace(self._key, "***")


def _transient(exc: BaseException) -> bool:
    """A failure worth another try: the service down for a moment (HTTP 5xx), no
    connection, no answer in time. A refused key, a bad request or a spent plan are not
    (the same request would fail the same way)."""
    if isinstance(exc, requests.HTTPError):
        return exc.response is not None and exc.response.status_code >= 500
    return isinstance(exc, requests.ConnectionError | requests.Timeout | tavily_errors.TimeoutError)


def _day(when: datetime) -> str:
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.date().isoformat()


def _parse_date(value: Any) -> datetime | None:
    if not value:
        return None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return http_date(text)  # a feed's RFC 822 date
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
