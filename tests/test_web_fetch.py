"""Web fetching through crawl4ai: Debian Chromium and the HTTP strategy, on a loopback site.

Browser tests skip only when no Chromium is installed and CI is not "true"."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import EvergreenError
from core.sources import web
from core.sources.base import PageNotFound
from core.sources.urlpolicy import UrlPolicy, UrlRefused
from core.sources.web import WebFetcher
from tests.fakes.website import Page, Website, html_page, tiny_pdf
from tests.helpers.web import FETCH_MODES, HAVE_CHROMIUM, LOOPBACK, NEEDS_CHROMIUM

MODES = FETCH_MODES
FILLER = (
    "The storage market grew steadily through the year as new projects came online. "
    "Analysts expect the trend to continue while component prices keep falling."
)


def site_pages() -> dict[str, Page]:
    return {
        "/prices": Page(
            [
                html_page("Battery prices", "Pack prices were 142 dollars per kWh.", FILLER),
                html_page("Battery prices", "Pack prices fell to 128 dollars per kWh.", FILLER),
            ],
            advance=True,
        ),
        "/notes.txt": Page(["Plain notes.\nSecond line of the notes."], "text/plain"),
        "/report.pdf": Page([tiny_pdf("Grid storage reached 40 GWh in 2025")], "application/pdf"),
        "/logo.png": Page(["\x89PNG fake image"], "image/png"),
        "/big": Page([html_page("Big", "x" * 5000)]),
        "/removed": Page(["<html><body>Gone for good</body></html>"], status=410),
        "/moved": Page([""], status=302, headers={"Location": "/prices"}),
    }


@pytest.fixture
def site() -> Iterator[Website]:
    with Website(site_pages()) as s:
        yield s


@pytest.fixture(params=MODES)
def fetcher(request: pytest.FixtureRequest) -> Iterator[WebFetcher]:
    f = WebFetcher(policy=LOOPBACK, browser=request.param, delay=0, max_bytes=4000, timeout=20)
    yield f
    f.close()


def test_page_changes_between_requests(fetcher: WebFetcher, site: Website) -> None:
    first = fetcher.fetch(site.link("/prices"))
    second = fetcher.fetch(site.link("/prices"))
    assert fetcher.mode == ("chromium" if fetcher.browser == "chromium" else "http")
    assert first.title == "Battery prices"
    assert "# Battery prices" in first.content  # Markdown, headings kept
    assert "142 dollars" in first.content and "128 dollars" in second.content
    assert "<p>" not in first.content
    assert first.meta["via"] == fetcher.mode and first.meta["status"] == 200
    assert site.hits["/prices"] >= 2


def test_dead_pages_are_gone(fetcher: WebFetcher, site: Website) -> None:
    with pytest.raises(PageNotFound, match="HTTP 404"):
        fetcher.fetch(site.link("/never-existed"))
    with pytest.raises(PageNotFound, match="HTTP 410"):
        fetcher.fetch(site.link("/removed"))


def test_text_pdf_and_refused_types(fetcher: WebFetcher, site: Website) -> None:
    text = fetcher.fetch(site.link("/notes.txt"))
    assert "Plain notes." in text.content and "Second line" in text.content
    pdf = fetcher.fetch(site.link("/report.pdf"))
    assert "Grid storage reached 40 GWh in 2025" in pdf.content
    with pytest.raises(EvergreenError, match="image/png"):
        fetcher.fetch(site.link("/logo.png"))
    with pytest.raises(EvergreenError, match="byte limit"):
        fetcher.fetch(site.link("/big"))


def test_redirect_is_followed(fetcher: WebFetcher, site: Website) -> None:
    page = fetcher.fetch(site.link("/moved"))
    assert "dollars per kWh" in page.content
    assert page.meta["final_url"] == site.link("/prices")


def test_concurrent_fetches_from_threads_respect_the_host_limit(site: Website) -> None:
    site.latency = 0.05
    mode = "chromium" if HAVE_CHROMIUM or os.environ.get("CI") == "true" else "http"
    with WebFetcher(policy=LOOPBACK, browser=mode, delay=0, per_host=2) as f:
        results: list[str] = []
        errors: list[Exception] = []

        def one(i: int) -> None:
            try:
                results.append(f.fetch(site.link(f"/prices?i={i}")).title)
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and results == ["Battery prices"] * 8
    assert site.max_in_flight <= 2


@pytest.mark.skipif(
    not HAVE_CHROMIUM and os.environ.get("CI") != "true", reason="no Chromium installed"
)
def test_close_shuts_the_browser_down(site: Website) -> None:
    drivers = _playwright_drivers()
    f = WebFetcher(policy=LOOPBACK, browser="chromium", delay=0)
    f.fetch(site.link("/prices"))
    browser = f._browser
    assert browser is not None and browser.proc.poll() is None
    f.close()
    assert browser.proc.poll() is not None
    assert not os.path.exists(browser.profile)
    assert _playwright_drivers() <= drivers  # nor the crawler's Playwright driver
    assert f.fetch(site.link("/prices")).title == "Battery prices"  # starts again
    f.close()


def _playwright_drivers() -> set[int]:
    """This process's child processes that are Playwright drivers (node)."""
    found = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():  # any thread may have started one
        pids: list[str] = []
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            pids = (task / "children").read_text().split()
        for pid in pids:
            with contextlib.suppress(OSError):
                if "playwright" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    found.add(int(pid))
    return found


def test_without_a_browser_http_strategy_with_one_warning(
    site: Website, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(web, "find_chromium", lambda path=None: None)
    with (
        caplog.at_level(logging.WARNING, logger="evergreen.web"),
        WebFetcher(policy=LOOPBACK, browser="auto", delay=0) as f,
    ):
        f.fetch(site.link("/prices"))
        f.fetch(site.link("/notes.txt"))
        assert f.mode == "http"
    warnings = [r for r in caplog.records if "No Chromium found" in r.getMessage()]
    assert len(warnings) == 1
    with (
        WebFetcher(policy=LOOPBACK, browser="chromium") as strict,
        pytest.raises(EvergreenError, match="No Chromium found"),
    ):
        strict.fetch(site.link("/prices"))


def test_politeness_delay_spaces_requests_to_a_host(site: Website) -> None:
    import time

    with WebFetcher(policy=LOOPBACK, browser="http", delay=0.3, per_host=4) as f:
        f.fetch(site.link("/notes.txt"))  # start the crawler first
        start = time.perf_counter()
        threads = [
            threading.Thread(target=f.fetch, args=(site.link(f"/notes.txt?{i}"),)) for i in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert time.perf_counter() - start >= 0.6  # three starts, 0.3 s apart


# -- the URL policy -----------------------------------------------------------------------
def test_private_addresses_refused_without_allowlist(site: Website) -> None:
    with WebFetcher(browser="http") as f:
        with pytest.raises(UrlRefused, match="loopback address") as err:
            f.fetch(site.link("/prices"))
        assert "EVERGREEN_FETCH_ALLOWLIST" in str(err.value)
    assert site.hits["/prices"] == 0  # refused before any request
    policy = UrlPolicy()
    for url, why in [
        ("http://10.1.2.3/x", "private"),
        ("http://192.168.0.10/", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://localhost:9/", "loopback"),
    ]:
        with pytest.raises(UrlRefused, match=why):
            policy.check(url)
    for url in ["file:///etc/passwd", "ftp://example.org/x", "javascript:alert(1)"]:
        with pytest.raises(UrlRefused, match="only http and https"):
            policy.check(url)


def test_allowlist_hosts_and_ranges() -> None:
    policy = UrlPolicy.from_allowlist(["10.0.0.0/8", "intranet.example", ".corp.example", "::1"])
    policy.check("http://10.20.30.40/page")
    policy.check("https://intranet.example/wiki")  # allowed by name, never resolved
    policy.check("https://docs.corp.example/a")
    policy.check("http://[::1]/")
    with pytest.raises(UrlRefused):
        policy.check("http://192.168.1.1/")
    with pytest.raises(UrlRefused, match="does not resolve"):
        UrlPolicy().check("http://no-such-host.invalid/")


@NEEDS_CHROMIUM
def test_chromium_fetches_obey_the_byte_cap_too() -> None:
    """In the browser, a page streamed without a length past the cap is cut by the policy
    proxy and refused with the reason (not a timeout, not gigabytes in the browser), and a
    compressed answer to a request that asked for none — a compression bomb's pattern —
    is refused before the browser inflates it."""
    from tests.helpers.faults import FaultySite

    page = html_page("Fine", "A fine page about storage.", "Storage keeps growing.")
    with FaultySite({"/big": [page], "/bomb": [page], "/fine": [page]}) as site:
        site.fault("/big", "big", size=50_000_000, chunked=True)
        site.fault("/bomb", "bomb", size=200_000_000)
        with WebFetcher(
            policy=LOOPBACK, browser="chromium", delay=0, max_bytes=2_000_000, timeout=60
        ) as f:
            assert "storage" in f.fetch(site.link("/fine")).content.lower()
            assert f.mode == "chromium"
            with pytest.raises(EvergreenError, match="over the 2,000,000-byte limit"):
                f.fetch(site.link("/big"))
            assert site.sent["/big"] < 20_000_000  # cut early: far from the 50 MB
            with pytest.raises(EvergreenError, match="compressed its answer"):
                f.fetch(site.link("/bomb"))
            assert "storage" in f.fetch(site.link("/fine")).content.lower()  # still works
