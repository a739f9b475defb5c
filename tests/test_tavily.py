"""Tavily search against a fake Tavily API on loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from core.errors import EvergreenError
from core.sources.registry import providers_for
from core.sources.tavily import RawContentCache, TavilySearch
from core.sources.urlpolicy import UrlPolicy
from core.sources.web import WebFetcher
from tests.fakes.tavily_server import FakeTavily

KEY = "tvly-secret-123456789"
HITS = [
    {
        "url": "https://example.org/grid-storage#intro",
        "title": "Grid storage  outlook",
        "content": "Grid storage grew  fast.",
        "score": 0.9,
        "published_date": "2026-03-02",
        "raw_content": "# Grid storage outlook\n\nGrid storage grew fast in 2026.",
    },
    {
        "url": "https://example.org/prices",
        "title": "Prices",
        "content": "Prices fell.",
        "score": 0.5,
    },
    {"url": "not a url", "title": "junk", "content": "", "score": 0.1},
]


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(HITS, key=KEY) as fake:
        yield fake


def test_window_dates_and_parameters_reach_the_api(tavily: FakeTavily) -> None:
    search = TavilySearch(KEY, base_url=tavily.url, cache=RawContentCache())
    tavily.expect_dates("2026-01-15", "2026-04-15")
    hits = search.search(
        "grid storage",
        max_results=7,
        start_date=datetime(2026, 1, 15, 9, 30, tzinfo=UTC),
        end_date=datetime(2026, 4, 15, 23, 0, tzinfo=UTC),
    )
    assert not tavily.mismatches
    body = tavily.requests[-1]
    assert body["query"] == "grid storage" and body["max_results"] == 7
    assert body["include_raw_content"] == "markdown"
    assert tavily.headers[-1]["authorization"] == f"Bearer {KEY}"
    assert [h.url for h in hits] == [
        "https://example.org/grid-storage",
        "https://example.org/prices",
    ]
    assert hits[0].title == "Grid storage outlook" and hits[0].snippet == "Grid storage grew fast."
    assert hits[0].date == hits[0].first_seen == datetime(2026, 3, 2, tzinfo=UTC)
    assert hits[0].raw_content and hits[1].raw_content is None


def test_new_report_sends_only_end_date(tavily: FakeTavily) -> None:
    search = TavilySearch(KEY, base_url=tavily.url)
    tavily.expect_dates(None, "2026-04-15")
    search.search("q", end_date=datetime(2026, 4, 15, tzinfo=UTC), max_results=50)
    assert not tavily.mismatches
    assert tavily.requests[-1]["max_results"] == 20  # Tavily's ceiling
    assert "include_raw_content" not in tavily.requests[-1]  # no cache: no raw content


def test_raw_content_saves_the_fetch(tavily: FakeTavily) -> None:
    cache = RawContentCache()
    search = TavilySearch(KEY, base_url=tavily.url, cache=cache)
    search.search("grid storage")
    # The default policy refuses nothing public, but this fetcher must not fetch at all:
    fetcher = WebFetcher(policy=UrlPolicy(), cache=cache, browser="http")
    page = fetcher.fetch("https://example.org/grid-storage")
    assert page.meta["via"] == "search raw content"
    assert "grew fast in 2026" in page.content and page.title == "Grid storage outlook"
    assert fetcher._loop is None  # no crawler was started
    fetcher.close()


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "API key was refused"), (429, "usage limit"), (500, "HTTP 500"), (403, "denied")],
)
def test_errors_are_clear_and_keyless(tavily: FakeTavily, status: int, message: str) -> None:
    search = TavilySearch(KEY, base_url=tavily.url)
    tavily.fail_with = status
    with pytest.raises(EvergreenError, match=message) as err:
        search.search("q")
    assert KEY not in str(err.value)


def test_a_service_down_for_a_moment_is_asked_again(tavily: FakeTavily) -> None:
    search = TavilySearch(KEY, base_url=tavily.url, backoff=0)
    tavily.fail_with, tavily.fail_times = 503, 2
    hits = search.search("grid storage")
    assert [h.url for h in hits] == [
        "https://example.org/grid-storage",
        "https://example.org/prices",
    ]
    assert len(tavily.requests) == 3  # two 503s, then the answer


@pytest.mark.parametrize("status", [400, 401, 403, 429])
def test_a_refusal_is_not_asked_again(tavily: FakeTavily, status: int) -> None:
    """The same request would be refused the same way (and a spent plan stays spent)."""
    search = TavilySearch(KEY, base_url=tavily.url, backoff=0)
    tavily.fail_with = status
    with pytest.raises(EvergreenError, match="Tavily search failed") as err:
        search.search("q")
    assert len(tavily.requests) == 1 and "attempts" not in str(err.value)


def test_a_service_that_stays_down_fails_saying_how_often_it_was_asked(
    tavily: FakeTavily,
) -> None:
    search = TavilySearch(KEY, base_url=tavily.url, backoff=0, attempts=3)
    tavily.fail_with = 502
    with pytest.raises(EvergreenError, match=r"HTTP 502 \(after 3 attempts\)"):
        search.search("q")
    assert len(tavily.requests) == 3


def test_wrong_key_and_unreachable_service(tavily: FakeTavily) -> None:
    with pytest.raises(EvergreenError, match="TAVILY_API_KEY") as err:
        TavilySearch("tvly-wrong-key-000000", base_url=tavily.url).search("q")
    assert "tvly-wrong-key" not in str(err.value)  # the fake echoes it; we never do
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(EvergreenError, match="cannot be reached"):
        TavilySearch(KEY, base_url=f"http://127.0.0.1:{port}", timeout=3).search("q")


def test_web_source_needs_a_key(workspace: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(EvergreenError, match="TAVILY_API_KEY"):
        providers_for("web")
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    monkeypatch.setenv("TAVILY_BASE_URL", "http://127.0.0.1:9")
    providers = providers_for("web")
    try:
        assert providers.temporal is False
        assert providers.search.name == "tavily" and providers.fetcher.name == "web"
        assert providers.search.cache is providers.fetcher.cache  # type: ignore[attr-defined]
    finally:
        providers.close()


def test_credentials_in_the_endpoint_are_redacted() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there
    base = f"http://evergreen:pw-very-secret-42@127.0.0.1:{port}"
    with pytest.raises(EvergreenError, match="cannot be reached") as err:
        TavilySearch(KEY, base_url=base, timeout=3).search("q")
    assert "pw-very-secret-42" not in str(err.value)
    assert f"at http://***@127.0.0.1:{port}" in str(err.value)
