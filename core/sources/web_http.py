"""Plain HTTP for web fetching, bound to the URL policy and the byte limit: the aiohttp
session crawl4ai's HTTP strategy runs on, and the conditional re-check (a HEAD with the
stored validators) that goes first in either mode.

Every redirect hop is checked against the URL policy before it is followed, each
response's headers are kept (so a 429 / 5xx Retry-After is seen), and a response over
``max_bytes`` is stopped at its headers if it declares its length, else as it arrives.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from core.sources.base import Validators, canonical_url
from core.sources.urlpolicy import UrlRefused

log = logging.getLogger("evergreen.web")

PROBE_AGENT = "Evergreen (conditional re-check)"


class TooBig(Exception):
    """Raised inside the HTTP client once a response is known to exceed the byte limit."""

    def __init__(self, size: int) -> None:
        super().__init__(f"over the byte limit: {size}")


def http_session(strategy: Any, trace: Any, max_bytes: int) -> Any:
    """The aiohttp session crawl4ai's HTTP strategy would make, plus hooks (``trace``, from
    ``policy_trace``) that check each redirect hop against the URL policy, keep the
    response headers (so 429 / 5xx Retry-After is seen) and stop reading a response once
    it is over the byte limit (at its headers if it declares a length, else as it
    arrives)."""
    import aiohttp  # lazy: 140 ms import, only once a page is fetched

    return aiohttp.ClientSession(
        headers=dict(strategy._BASE_HEADERS),
        connector=aiohttp.TCPConnector(
            limit=strategy.max_connections, ttl_dns_cache=strategy.dns_cache_ttl
        ),
        timeout=aiohttp.ClientTimeout(total=strategy.DEFAULT_TIMEOUT),
        trace_configs=[trace],
        response_class=capped_response(max_bytes),
    )


def probe_session(timeout: float, trace: Any, max_bytes: int) -> Any:
    """The plain HTTP session conditional re-checks go over, with the same hooks."""
    import aiohttp  # lazy: 140 ms import, only once a page is fetched

    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=timeout),
        trace_configs=[trace],
        response_class=capped_response(max_bytes),
    )


def policy_trace(
    check: Callable[[str], None],
    remember: Callable[[str, dict[str, str]], None],
    max_bytes: int,
) -> Any:
    """aiohttp hooks: every redirect hop checked against the URL policy (``check``),
    response headers kept per URL (``remember``), a response over the byte limit stopped
    at its headers."""
    import aiohttp  # lazy: 140 ms import, only once a page is fetched
    import yarl

    trace = aiohttp.TraceConfig()

    async def on_redirect(_s: Any, _ctx: Any, params: Any) -> None:
        target = params.response.headers.get("Location")
        if target:
            hop = str(params.response.url.join(yarl.URL(target)))
            await asyncio.to_thread(check, hop)

    async def on_end(_s: Any, ctx: Any, params: Any) -> None:
        headers = {k.lower(): v for k, v in params.response.headers.items()}
        remember(canonical_url(str(params.url)), headers)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise TooBig(int(declared))

    trace.on_request_redirect.append(on_redirect)
    trace.on_request_end.append(on_end)
    return trace


async def unchanged(probe: Any, url: str, validators: Validators) -> bool:
    """Ask for ``url`` conditionally (If-None-Match / If-Modified-Since) over the session
    ``probe``: True on a 304. The request is a HEAD, so a page that changed costs no second
    body: any other answer (200, or a server that refuses HEAD) sends the page to the usual
    fetch. A policy refusal of a redirect hop raises as it would for the fetch."""
    headers = {"User-Agent": PROBE_AGENT}
    if validators.etag:
        headers["If-None-Match"] = validators.etag
    if validators.last_modified:
        headers["If-Modified-Since"] = validators.last_modified
    try:
        async with probe.head(
            url, headers=headers, allow_redirects=True, max_redirects=10
        ) as response:
            return response.status == 304
    except (UrlRefused, TooBig):
        raise
    except Exception as exc:  # the fetch that follows reports what is wrong
        log.debug("conditional request to %s failed: %s", url, exc)
        return False


def capped_response(limit: int) -> Any:
    """An aiohttp response class whose body read stops once it passes ``limit`` bytes
    (aiohttp itself reads a body without a Content-Length to the end before any hook)."""
    import aiohttp  # lazy: 140 ms import, only once a page is fetched

    class CappedResponse(aiohttp.ClientResponse):
        async def read(self) -> bytes:
            if self._body is None:
                buf = bytearray()
                try:
                    async for chunk in self.content.iter_chunked(1 << 16):
                        buf += chunk
                        if len(buf) > limit:
                            raise TooBig(len(buf))
                except BaseException:
                    self.close()
                    raise
                self._body = bytes(buf)
            return await super().read()

    return CappedResponse
