"""Fetching live web pages with crawl4ai, rendered by Debian's Chromium when present.

crawl4ai's own browser download does not work offline, so the fetcher starts the
system Chromium itself (headless, on a DevTools port it picks, in a private profile)
and attaches crawl4ai to it over CDP; with no Chromium it falls back to crawl4ai's
HTTP strategy (no JavaScript) with a one-line warning.

The engine calls ``fetch`` from worker threads at once, so all crawling happens on one
asyncio loop in a dedicated thread; ``fetch`` submits to it and waits. Per host, at
most ``per_host`` requests run at a time and consecutive request starts are ``delay``
seconds apart. Each URL (and any redirect target) must pass the URL policy; HTML and
text pages become Markdown / text, PDFs become text (pypdf), anything else is refused;
a page bigger than ``max_bytes`` is refused (over plain HTTP as soon as its headers or
its first ``max_bytes`` say so, before the rest is read; a browser loads it first), and so
is a page whose text is garbled (binary served as HTML). 404 and 410 mean the page is gone
(PageNotFound). 429 and 5xx are tried ``attempts`` times, honouring Retry-After up to
``max_retry_after`` seconds (a longer wait is not made: the page fails at once, saying so).
``close()`` stops the crawler and the browser.

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
import io
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from core.dates import http_date, retry_after_seconds, utcnow
from core.errors import EvergreenError
from core.sources.base import (
    FetchedPage,
    NotModified,
    PageNotFound,
    Validators,
    canonical_url,
)
from core.sources.policy_proxy import PolicyProxy
from core.sources.tavily import RawContentCache
from core.sources.urlpolicy import UrlPolicy, UrlRefused
from core.validation import strip_controls

log = logging.getLogger("evergreen.web")

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "chromium")
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain", "text/markdown", "text/x-markdown", "text/csv")
PDF_TYPES = ("application/pdf", "application/x-pdf")
GONE = (404, 410)
RETRY = (429, 500, 502, 503, 504)
PROBE_AGENT = "Evergreen (conditional re-check)"
_STATUS_IN_ERROR = re.compile(r"\bHTTP (\d{3})\b")
_TOO_BIG = re.compile(r"over the byte limit: (\d+)")
_REFUSED = re.compile(r"Refused to fetch [^\n]*")
_NET_ERROR_AT = re.compile(r"net::ERR_[A-Z_]+ at (\S+)")


class _TooBig(Exception):
    """Raised inside the HTTP client once a response is known to exceed the byte limit."""

    def __init__(self, size: int) -> None:
        super().__init__(f"over the byte limit: {size}")


def find_chromium(path: str | None = None) -> str | None:
    """The Chromium executable to drive: ``path`` if given, else Debian's."""
    for candidate in [path] if path else list(CHROMIUM_CANDIDATES):
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    return None


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _shared_loop() -> asyncio.AbstractEventLoop:
    """The one event loop (in a daemon thread) all crawling runs on. One per process,
    not per fetcher: crawl4ai keeps class-level asyncio locks bound to the first loop
    that uses them, so a second loop would fail under contention."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="evergreen-web", daemon=True).start()
            _LOOP = loop
        return _LOOP


class _Chromium:
    """A headless Chromium this process started, reachable over CDP on 127.0.0.1."""

    def __init__(self, executable: str, proxy: str, timeout: float = 20.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="evergreen-chromium-")
        args = [
            executable,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            # every request through the policy proxy, loopback included (no implicit bypass)
            f"--proxy-server={proxy}",
            "--proxy-bypass-list=<-loopback>",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: close() ends all its children
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while True:
            text = port_file.read_text() if port_file.exists() else ""
            if text.strip():
                self.port = int(text.split()[0])
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.05)

    @property
    def cdp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        shutil.rmtree(self.profile, ignore_errors=True)


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
        self._browser: _Chromium | None = None
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
            self._loop = _shared_loop()
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
        from crawl4ai import AsyncWebCrawler, BrowserConfig

        proxy = await PolicyProxy(self.policy).start()
        try:
            browser = await asyncio.to_thread(_Chromium, executable, proxy.url)
        except BaseException:
            await proxy.close()
            raise
        try:
            crawler = AsyncWebCrawler(
                config=BrowserConfig(
                    cdp_url=browser.cdp_url,
                    headless=True,
                    verbose=False,
                    # a context per crawl: with the default one, concurrent crawls over
                    # CDP sometimes find their page closed under them
                    create_isolated_context=True,
                )
            )
            await crawler.start()
        except BaseException:
            browser.close()
            await proxy.close()
            raise
        self._browser, self._proxy, self._crawler = browser, proxy, crawler
        self.mode = "chromium"

    async def _http_crawler(self) -> Any:
        if self._http is None:
            from crawl4ai import AsyncWebCrawler, BrowserConfig
            from crawl4ai.async_configs import HTTPCrawlerConfig
            from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy

            self._downloads = tempfile.mkdtemp(prefix="evergreen-downloads-")
            strategy = AsyncHTTPCrawlerStrategy(
                browser_config=HTTPCrawlerConfig(downloads_path=self._downloads)
            )
            if "_session" in getattr(type(strategy), "__slots__", ()):
                strategy._session = self._http_session(strategy)
            crawler = AsyncWebCrawler(
                crawler_strategy=strategy, config=BrowserConfig(verbose=False)
            )
            await crawler.start()
            self._http = crawler
        return self._http

    def _http_session(self, strategy: Any) -> Any:
        """The aiohttp session crawl4ai's HTTP strategy would make, plus hooks that check
        each redirect hop against the URL policy, keep the response headers (so 429 / 5xx
        Retry-After is seen) and stop reading a response once it is over the byte limit
        (at its headers if it declares a length, else as it arrives)."""
        import aiohttp

        return aiohttp.ClientSession(
            headers=dict(strategy._BASE_HEADERS),
            connector=aiohttp.TCPConnector(
                limit=strategy.max_connections, ttl_dns_cache=strategy.dns_cache_ttl
            ),
            timeout=aiohttp.ClientTimeout(total=strategy.DEFAULT_TIMEOUT),
            trace_configs=[self._policy_trace()],
            response_class=_capped_response(self.max_bytes),
        )

    def _policy_trace(self) -> Any:
        """aiohttp hooks: every redirect hop checked against the URL policy, response
        headers kept per URL, a response over the byte limit stopped at its headers."""
        import aiohttp
        import yarl

        trace = aiohttp.TraceConfig()

        async def on_redirect(_s: Any, _ctx: Any, params: Any) -> None:
            target = params.response.headers.get("Location")
            if target:
                hop = str(params.response.url.join(yarl.URL(target)))
                await asyncio.to_thread(self.policy.check, hop)

        async def on_end(_s: Any, ctx: Any, params: Any) -> None:
            headers = {k.lower(): v for k, v in params.response.headers.items()}
            self._http_headers[canonical_url(str(params.url))] = headers
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise _TooBig(int(declared))

        trace.on_request_redirect.append(on_redirect)
        trace.on_request_end.append(on_end)
        return trace

    async def _unchanged(self, url: str, validators: Validators) -> bool:
        """Ask for ``url`` conditionally (If-None-Match / If-Modified-Since): True on a 304.
        The request is a HEAD, so a page that changed costs no second body: any other
        answer (200, or a server that refuses HEAD) sends the page to the usual fetch. A
        policy refusal of a redirect hop raises as it would for the fetch."""
        import aiohttp

        if self._probe is None:
            self._probe = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                trace_configs=[self._policy_trace()],
                response_class=_capped_response(self.max_bytes),
            )
        headers = {"User-Agent": PROBE_AGENT}
        if validators.etag:
            headers["If-None-Match"] = validators.etag
        if validators.last_modified:
            headers["If-Modified-Since"] = validators.last_modified
        try:
            async with self._probe.head(
                url, headers=headers, allow_redirects=True, max_redirects=10
            ) as response:
                return response.status == 304
        except (UrlRefused, _TooBig):
            raise
        except Exception as exc:  # the fetch that follows reports what is wrong
            log.debug("conditional request to %s failed: %s", url, exc)
            return False

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
        from crawl4ai import CacheMode, CrawlerRunConfig

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
            result, note = await self._arun_retrying(crawler, url)
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

    async def _arun_retrying(self, crawler: Any, url: str) -> tuple[Any, str]:
        """The crawler's result for ``url``, tried again (tenacity) while the server answers
        429 or 5xx, waiting as ``_retry_wait`` says — inside the host's slot: the host asked
        us to wait. Returns the last result and the note for an error message."""
        notes = [""]

        def wait_of(state: RetryCallState) -> float | None:
            outcome = state.outcome
            assert outcome is not None  # tenacity asks after an attempt
            wait, notes[0] = self._retry_wait(url, outcome.result(), state.attempt_number)
            return wait

        async def attempt() -> Any:
            result = await crawler.arun(url, config=self._run_config())
            if result.status_code is None and "has been closed" in str(result.error_message):
                result = await crawler.arun(url, config=self._run_config())  # a browser race
            return result

        retrying = AsyncRetrying(
            retry=lambda state: wait_of(state) is not None,
            wait=lambda state: wait_of(state) or 0.0,
            stop=stop_after_attempt(self.attempts),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
            sleep=asyncio.sleep,
        )
        result = await retrying(attempt)
        return result, notes[0]

    def _retry_wait(self, url: str, result: Any, attempt: int) -> tuple[float | None, str]:
        """Seconds to wait before trying ``url`` again (None: do not), and a note for the
        error message when the page finally fails."""
        status = _status_of(result)
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
        status = _status_of(result)
        error = str(result.error_message or "")
        failure = self._proxy_failure(url, result) if via == "chromium" else None
        if failure is not None:
            raise failure
        if status in GONE:
            raise PageNotFound(f"{url} is gone (HTTP {status}).")
        big = _TOO_BIG.search(error)
        if big:
            self._check_size(url, int(big.group(1)))
        refused = _REFUSED.search(error)
        if status is None and refused:  # a redirect hop the policy refused (HTTP mode)
            raise UrlRefused(refused.group(0))
        if status is None:
            raise EvergreenError(f"Cannot fetch {url}: {_short_error(error, self.timeout)}")
        if status >= 400:
            raise EvergreenError(f"Cannot fetch {url}: HTTP {status}{note}.")
        final = canonical_url(result.redirected_url or url)
        if final != url:
            await asyncio.to_thread(self.policy.check, final)
        headers = {str(k).lower(): str(v) for k, v in (result.response_headers or {}).items()}
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if 300 <= status < 400:  # the browser followed a redirect; headers are the hop's
            ctype, headers = "", {}
        declared = (
            int(headers.get("content-length") or 0)
            if headers.get("content-length", "").isdigit()
            else 0
        )
        files = list(result.downloaded_files or [])
        if ctype in PDF_TYPES or any(str(f).lower().endswith(".pdf") for f in files):
            if not files:
                return None if via != "http" else self._refuse_empty_pdf(url)
            data = _read_and_remove(files)
            self._check_size(url, max(declared, len(data)))
            title, content = pdf_to_text(data, url)
            return self._finish(url, final, title, content, via, status, ctype, headers)
        for f in files:  # any other download is not wanted
            with contextlib.suppress(OSError):
                os.remove(f)
        if ctype and ctype not in HTML_TYPES and not ctype.startswith("text/"):
            raise EvergreenError(
                f"Cannot use {url}: its content type {ctype} is neither HTML, text nor PDF."
            )
        html = result.html or ""
        self._check_size(url, max(declared, len(html.encode("utf-8", "ignore"))))
        if ctype in TEXT_TYPES or (ctype.startswith("text/") and ctype not in HTML_TYPES):
            text = html if via == "http" else _html_text(html)
            title = ""
        else:
            markdown = result.markdown
            text = getattr(markdown, "raw_markdown", None) or str(markdown or "")
            title = str((result.metadata or {}).get("title") or "")
        if not text.strip():
            raise EvergreenError(f"Cannot use {url}: the page has no readable text.")
        if text.lstrip().startswith("Crawl4AI Error:") or _garbled(text):  # not the page's
            raise EvergreenError(
                f"Cannot use {url}: its text is garbled (binary data or a broken encoding)."
            )
        return self._finish(url, final, title, text, via, status, ctype or "text/html", headers)

    def _finish(
        self,
        url: str,
        final: str,
        title: str,
        content: str,
        via: str,
        status: int,
        ctype: str,
        headers: dict[str, str],
    ) -> FetchedPage:
        content = content.replace("\r\n", "\n").replace("\x00", "").strip() + "\n"
        meta: dict[str, object] = {"via": via, "status": status, "content_type": ctype}
        if final != url:
            meta["final_url"] = final
        if len(content) > self.max_chars:
            content = content[: self.max_chars]
            meta["truncated"] = True
        if not title:
            heading = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", content, re.M)
            title = heading.group(1) if heading else url
        return FetchedPage(
            url=url,
            title=strip_controls(title)[:300],
            content=content,
            fetched_at=utcnow(),
            published=_last_modified(headers),
            meta=meta,
            validators=Validators(headers.get("etag"), headers.get("last-modified")) or None,
        )

    def _check_size(self, url: str, size: int) -> None:
        if size > self.max_bytes:
            raise EvergreenError(
                f"Cannot use {url}: {size:,} bytes is over the {self.max_bytes:,}-byte limit "
                "(EVERGREEN_FETCH_MAX_BYTES)."
            )

    @staticmethod
    def _refuse_empty_pdf(url: str) -> FetchedPage:
        raise EvergreenError(f"Cannot use {url}: the PDF came back empty.")


# -- helpers -------------------------------------------------------------------------------
def pdf_to_text(data: bytes, url: str) -> tuple[str, str]:
    """(title, text) of a PDF, with pypdf."""
    try:
        import pypdf
    except ImportError:
        raise EvergreenError(f"Cannot use {url}: reading PDFs needs pypdf.") from None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages[:300]]
        title = str((reader.metadata or {}).get("/Title") or "")
    except Exception as exc:
        raise EvergreenError(f"Cannot use {url}: unreadable PDF ({exc}).") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise EvergreenError(f"Cannot use {url}: the PDF has no extractable text.")
    return title, text


def _read_and_remove(files: list[str]) -> bytes:
    data = b""
    for f in files:
        with contextlib.suppress(OSError):
            data = data or Path(f).read_bytes()
            os.remove(f)
    return data


def _html_text(html: str) -> str:
    from core.sources.corpus import html_to_text

    return html_to_text(html)[0]


def _last_modified(headers: dict[str, str]) -> datetime | None:
    return http_date(headers.get("last-modified"))


def _capped_response(limit: int) -> Any:
    """An aiohttp response class whose body read stops once it passes ``limit`` bytes
    (aiohttp itself reads a body without a Content-Length to the end before any hook)."""
    import aiohttp

    class CappedResponse(aiohttp.ClientResponse):
        async def read(self) -> bytes:
            if self._body is None:
                buf = bytearray()
                try:
                    async for chunk in self.content.iter_chunked(1 << 16):
                        buf += chunk
                        if len(buf) > limit:
                            raise _TooBig(len(buf))
                except BaseException:
                    self.close()
                    raise
                self._body = bytes(buf)
            return await super().read()

    return CappedResponse


def _status_of(result: Any) -> int | None:
    if result.status_code is not None:
        return int(result.status_code)
    m = _STATUS_IN_ERROR.search(str(result.error_message or ""))
    return int(m.group(1)) if m else None


_UNREADABLE = re.compile(r"[\ufffd\x00-\x08\x0e-\x1f\x7f-\x9f\ue000-\uf8ff]")


def _garbled(text: str) -> bool:
    """Mostly replacement, control or private-use characters: binary served as text."""
    sample = text[:20000]
    return len(_UNREADABLE.findall(sample)) > max(20, len(sample) // 20)


def _short_error(error: str, timeout: float | None = None) -> str:
    """One line from crawl4ai's error text (which appends a code listing): what failed."""
    head = error.split("Code context:")[0]
    if "TOO_MANY_REDIRECTS" in head or "HTTP client error: 0, message=''" in head:
        return "too many redirects (a redirect loop)"
    if re.search(r"timed out|Timeout \d+ms exceeded|TimeoutError", head, re.I):
        return f"no answer within {timeout:g} s (timed out)" if timeout else "timed out"
    m = re.search(r"net::(ERR_[A-Z_]+)", head)
    if m:
        return m.group(1)
    lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
    text = next((ln for ln in lines if ln.startswith("Error:")), lines[-1] if lines else "")
    text = re.sub(r"^.*?Error:\s*", "", text)
    text = re.sub(r"\s*\(\S+\.py\)", "", text)
    return " ".join(text.split())[:200] or "the request failed"
