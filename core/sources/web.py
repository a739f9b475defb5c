"""Fetching live web pages with crawl4ai, rendered by Debian's Chromium when present
(core.sources.chromium); with no Chromium it falls back to crawl4ai's HTTP strategy (no
JavaScript) with a one-line warning.

The engine calls ``fetch`` from worker threads at once, so all crawling happens on one
asyncio loop in a dedicated thread (core.sources.crawl_loop); ``fetch`` submits to it and
waits. Per host, at most ``per_host`` requests run at a time and consecutive request
starts are ``delay`` seconds apart. Each URL (and any redirect target) must pass the URL
policy; what a crawled page becomes, and which pages are refused, is core.sources.web_page's
(a page over ``max_bytes`` is refused over plain HTTP as soon as its headers or its first
``max_bytes`` say so, core.sources.web_http; in the browser, the proxy cuts an answer that
runs past them, core.sources.policy_proxy). 429 and 5xx are
tried ``attempts`` times, honouring Retry-After up to ``max_retry_after`` seconds (a longer
wait is not made: the page fails at once, saying so). ``close()`` stops the crawler and
the browser.

The browser is bound to the URL policy: it is started with a proxy (PolicyProxy) that
checks every request it makes — navigation, redirect hops, sub-resources, scripts'
requests — before a connection leaves, and connects only to addresses the policy
checked; WebRTC may not send UDP around it.

Pages a search already returned in full (RawContentCache) are not fetched again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from core.dates import retry_after_seconds, utcnow
from core.errors import EvergreenError
from core.sources.base import FetchedPage, NotModified, Validators, canonical_url
from core.sources.chromium import Chromium, find_chromium
from core.sources.crawl_loop import shared_loop
from core.sources.policy_proxy import PolicyProxy
from core.sources.tavily import RawContentCache
from core.sources.urlpolicy import UrlPolicy, UrlRefused
from core.sources.web_http import http_session, policy_trace, probe_session, unchanged
from core.sources.web_page import read_page, status_of
from core.sources.web_retry import RETRY, arun_retrying

log = logging.getLogger("evergreen.web")

_NET_ERROR_AT = re.compile(r"net::ERR_[A-Z_]+ at (\S+)")


class WebFetcher:
    """Fetcher for live web pages (not temporal: always the page as it is now)."""

    name = "web"
    revision = ""  # the live web: a stored look at a page ages by time, not by revision

    def __init__(
        self,
        *,
        policy: UrlPolicy | None = None,
        cache: RawContentCache | None = None,
        browser: str = "auto",  # auto | chromium | http
        chromium: str | None = None,
        timeout: float = 30.0,
        max_bytes: int = 5_000_000,
        max_chars: int = 300_000,
        per_host: int = 2,
        delay: float = 0.5,
        attempts: int = 3,
        backoff: float = 0.5,
        max_retry_after: float = 10.0,
    ) -> None:
        if browser not in ("auto", "chromium", "http"):
            raise EvergreenError(f"Unknown browser setting {browser!r}: auto, chromium or http.")
        self.policy = policy or UrlPolicy()
        self.cache = cache
        self.browser = browser
        self.chromium = chromium
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_chars = max_chars
        self.per_host = max(1, per_host)
        self.delay = max(0.0, delay)
        self.attempts = max(1, attempts)
        self.backoff = max(0.0, backoff)
        self.max_retry_after = max_retry_after
        self.mode: str | None = None  # chromium | http, once started
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reset_async_state()

    def _reset_async_state(self) -> None:
        self._start_lock: asyncio.Lock | None = None
        self._crawler: Any = None
        self._http: Any = None
        self._browser: Chromium | None = None
        self._proxy: PolicyProxy | None = None
        self._downloads: str | None = None
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next_start: dict[str, float] = {}
        self._http_headers: dict[str, dict[str, str]] = {}  # last response headers per URL
        self._probe: Any = None  # the plain HTTP session conditional re-checks go over

    @classmethod
    def from_settings(cls, settings: Any, cache: RawContentCache | None = None) -> WebFetcher:
        return cls(
            policy=UrlPolicy.from_allowlist(settings.fetch_allowlist),
            cache=cache,
            browser=settings.fetch_browser,
            chromium=settings.chromium_path,
            timeout=settings.fetch_timeout,
            max_bytes=settings.fetch_max_bytes,
            per_host=settings.fetch_per_host,
            delay=settings.fetch_delay,
        )

    # -- the Fetcher protocol ------------------------------------------------------------
    def fetch(
        self, url: str, as_of: datetime | None = None, *, validators: Validators | None = None
    ) -> FetchedPage:
        """The page as it is now (``as_of`` is ignored: the live web is not temporal).

        With ``validators`` a conditional request goes first, over plain HTTP in either
        mode and under the same URL policy (every redirect hop checked); a 304 raises
        NotModified with no body read and no browser started."""
        url = canonical_url(url)
        cached = self.cache.get(url) if self.cache is not None else None
        if cached is not None:
            title, content = cached
            return FetchedPage(
                url=url,
                title=title,
                content=content[: self.max_chars],
                fetched_at=utcnow(),
                meta={"via": "search raw content"},
            )
        self.policy.check(url)
        future = asyncio.run_coroutine_threadsafe(self._fetch(url, validators), self._ensure_loop())
        try:
            return future.result(timeout=self.timeout * 2 + 30)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise EvergreenError(f"Cannot fetch {url}: no answer in time.") from None

    def close(self) -> None:
        """Stop the crawler and the browser; a later fetch starts them again."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._aclose(), loop).result(timeout=20)
        if self._browser is not None:  # if the async close did not get to it
            self._browser.close()
        self._reset_async_state()

    def __enter__(self) -> WebFetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop thread -------------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            self._loop = shared_loop()
            return self._loop

    async def _start(self) -> None:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._crawler is not None:
                return
            os.environ.setdefault("CRAWL4AI_NO_CLOUD_NOTICE", "1")
            if self.browser != "http":
                executable = find_chromium(self.chromium)
                if executable is None:
                    if self.browser == "chromium":
                        raise EvergreenError(
                            "No Chromium found for web fetching: install Debian's chromium "
                            "(apt-get install chromium) or set EVERGREEN_FETCH_BROWSER=http."
                        )
                    log.warning(
                        "No Chromium found: fetching with crawl4ai's HTTP strategy "
                        "(no JavaScript rendering)."
                    )
                else:
                    try:
                        await self._start_browser(executable)
                        return
                    except Exception as exc:
                        if self.browser == "chromium":
                            raise EvergreenError(f"Chromium would not start: {exc}") from None
                        log.warning(
                            "Chromium would not start (%s): fetching with crawl4ai's HTTP "
                            "strategy (no JavaScript rendering).",
                            exc,
                        )
            self._crawler = await self._http_crawler()
            self.mode = "http"

    async def _start_browser(self, executable: str) -> None:
        from crawl4ai import AsyncWebCrawler, BrowserConfig  # lazy: 3 s import

        proxy = await PolicyProxy(self.policy, max_bytes=self.max_bytes).start()
        try:
            browser = await asyncio.to_thread(Chromium, executable, proxy.url)
        except BaseException:
            await proxy.close()
            raise
        try:
            config = BrowserConfig(
                cdp_url=browser.cdp_url,
                headless=True,
                verbose=False,
                # a context per crawl: with the default one, concurrent crawls over
                # CDP sometimes find their page closed under them
                create_isolated_context=True,
            )
            # on close, also stop the Playwright driver (a node process) the crawler started
            # to reach Chromium over CDP, else every fetcher leaves one running (crawl4ai
            # 0.8+ reads these; set after construction, as 0.7 takes no such arguments)
            config.cdp_cleanup_on_close, config.cdp_close_delay = True, 0
            crawler = AsyncWebCrawler(config=config)
            await crawler.start()
        except BaseException:
            browser.close()
            await proxy.close()
            raise
        self._browser, self._proxy, self._crawler = browser, proxy, crawler
        self.mode = "chromium"

    async def _http_crawler(self) -> Any:
        if self._http is None:
            from crawl4ai import AsyncWebCrawler, BrowserConfig  # lazy: 3 s import
            from crawl4ai.async_configs import HTTPCrawlerConfig
            from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy

            self._downloads = tempfile.mkdtemp(prefix="evergreen-downloads-")
            strategy = AsyncHTTPCrawlerStrategy(
                browser_config=HTTPCrawlerConfig(downloads_path=self._downloads)
            )
            if "_session" in getattr(type(strategy), "__slots__", ()):
                strategy._session = http_session(strategy, self._policy_trace(), self.max_bytes)
            crawler = AsyncWebCrawler(
                crawler_strategy=strategy, config=BrowserConfig(verbose=False)
            )
            await crawler.start()
            self._http = crawler
        return self._http

    def _policy_trace(self) -> Any:
        """aiohttp hooks (``policy_trace``) bound to this fetcher: redirect hops checked
        against its URL policy, response headers kept in ``_http_headers``."""
        return policy_trace(
            lambda hop: self.policy.check(hop), self._remember_headers, self.max_bytes
        )

    def _remember_headers(self, url: str, headers: dict[str, str]) -> None:
        self._http_headers[url] = headers

    async def _unchanged(self, url: str, validators: Validators) -> bool:
        """True when a conditional request for ``url`` answers 304 (``unchanged``)."""
        if self._probe is None:
            self._probe = probe_session(self.timeout, self._policy_trace(), self.max_bytes)
        return await unchanged(self._probe, url, validators)

    async def _aclose(self) -> None:
        if self._probe is not None:
            with contextlib.suppress(Exception):
                await self._probe.close()
            self._probe = None
        for crawler in {id(c): c for c in (self._crawler, self._http) if c is not None}.values():
            with contextlib.suppress(Exception):
                await crawler.close()
        if self._browser is not None:
            await asyncio.to_thread(self._browser.close)
            self._browser = None
        if self._proxy is not None:
            await self._proxy.close()
            self._proxy = None
        if self._downloads:
            shutil.rmtree(self._downloads, ignore_errors=True)

    @contextlib.asynccontextmanager
    async def _host_slot(self, host: str) -> AsyncIterator[None]:
        """At most ``per_host`` requests to a host at once, starts ``delay`` apart."""
        slot = self._slots.setdefault(host, asyncio.Semaphore(self.per_host))
        async with slot:
            loop = asyncio.get_running_loop()
            now = loop.time()
            start = max(now, self._next_start.get(host, 0.0))
            self._next_start[host] = start + self.delay
            if start > now:
                await asyncio.sleep(start - now)
            yield

    # -- one page ---------------------------------------------------------------------------
    def _run_config(self) -> Any:
        from crawl4ai import CacheMode, CrawlerRunConfig  # lazy: 3 s import

        return CrawlerRunConfig(
            cache_mode=CacheMode.BYPASS,
            page_timeout=int(self.timeout * 1000),
            verbose=False,
        )

    async def _fetch(self, url: str, validators: Validators | None = None) -> FetchedPage:
        if validators and await self._probed_unchanged(url, validators):
            raise NotModified(url)
        await self._start()
        pdf_like = urlsplit(url).path.lower().endswith(".pdf")
        async with self._host_slot(urlsplit(url).netloc):
            crawler = await self._http_crawler() if pdf_like else self._crawler
            result, note = await arun_retrying(
                crawler, url, self._run_config, self._retry_wait, self.attempts
            )
            page = await self._page(
                url, result, via="http" if pdf_like else str(self.mode), note=note
            )
            if page is None:  # a PDF the browser cannot read: download it instead
                http = await self._http_crawler()
                result = await http.arun(url, config=self._run_config())
                page = await self._page(url, result, via="http")
        if page is None:
            raise EvergreenError(f"Cannot fetch {url}: the PDF could not be downloaded.")
        return page

    async def _probed_unchanged(self, url: str, validators: Validators) -> bool:
        async with self._host_slot(urlsplit(url).netloc):
            return await self._unchanged(url, validators)

    def _retry_wait(self, url: str, result: Any, attempt: int) -> tuple[float | None, str]:
        """Seconds to wait before trying ``url`` again (None: do not), and a note for the
        error message when the page finally fails."""
        status = status_of(result)
        if status not in RETRY or self._proxy_failure(url, result) is not None:
            return None, ""
        headers = {str(k).lower(): str(v) for k, v in (result.response_headers or {}).items()}
        headers = headers or self._http_headers.get(canonical_url(url), {})
        after = retry_after_seconds(headers.get("retry-after"))
        if after is not None and after > self.max_retry_after:
            return None, f" (the server asks to retry after {after:g} s; not waited for)"
        if attempt >= self.attempts:
            return None, f" after {attempt} attempts" if attempt > 1 else ""
        return (after if after is not None else self.backoff * 2 ** (attempt - 1)), ""

    def _proxy_failure(self, url: str, result: Any) -> EvergreenError | None:
        """The error to raise when the browser's page is the policy proxy's answer (a
        refusal, or a host it could not reach) rather than the page itself."""
        if self._proxy is None:
            return None
        error = str(result.error_message or "")
        urls = [result.redirected_url or url, *_NET_ERROR_AT.findall(error)]
        failure = next((f for u in urls if (f := self._proxy.failure_for(u))), None)
        if failure is None:
            return None
        if failure.refused:
            return UrlRefused(failure.message)
        return EvergreenError(f"Cannot fetch {url}: {failure.message}.")

    async def _page(self, url: str, result: Any, via: str, note: str = "") -> FetchedPage | None:
        failure = self._proxy_failure(url, result) if via == "chromium" else None
        if failure is not None:
            raise failure
        return await read_page(
            url,
            result,
            via,
            note,
            policy=self.policy,
            timeout=self.timeout,
            max_bytes=self.max_bytes,
            max_chars=self.max_chars,
        )
