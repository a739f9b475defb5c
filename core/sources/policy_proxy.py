"""A forward HTTP proxy on 127.0.0.1 that binds the fetcher's Chromium to the URL policy.

The browser is started with ``--proxy-server`` pointing here (and ``<-loopback>`` so that
not even loopback addresses bypass it), so every request it makes — the navigation, each
redirect hop, images, scripts, frames, fetch/XHR, workers, WebSockets — arrives here
first, and nothing leaves before the policy has approved it:

* ``GET http://host:port/path`` (plain HTTP): the URL is checked; refused → 403 with the
  reason, and no connection is made. Approved → one upstream connection to an address the
  policy checked (never a second DNS answer), the request in origin form with
  ``Connection: close``, and the answer passed back.
* ``CONNECT host:port`` (HTTPS, wss): ``https://host:port/`` is checked the same way;
  approved → a TCP tunnel to a checked address, refused → 403 and no connection.

With ``max_bytes`` the proxy also bounds what the browser is sent: a plain-HTTP answer
is asked for without compression (what is counted is what the page holds; one that comes
compressed anyway, a compression bomb's pattern, is refused) and cut past ``max_bytes``;
a tunnel, which carries the page and what it loads from its origin, encrypted, past
TUNNEL_SHARE times that. The fetcher then refuses the page with the reason.

Hosts the allowlist names are trusted by name and connected to by name. The proxy
remembers the last URLs (and, for tunnels, origins) it refused or could not reach, with
the reason, and the redirects it passed on: ``failure_for(url)`` follows a URL's
redirects to such a failure, so that the fetcher can tell a page that is really the
proxy's refusal from the page itself, and say why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ada_url

from core.sources.base import canonical_url
from core.sources.urlpolicy import Target, UrlPolicy, UrlRefused

log = logging.getLogger("evergreen.web")

MAX_HEAD = 64 * 1024  # request / response head limit, bytes
HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"}
_CHUNK = 1 << 16
REMEMBERED = 1000  # failures and redirects kept for failure_for
MAX_HOPS = 20
#: a tunnel (https) carries the page and what it loads from the same origin, encrypted:
#: it is cut past this many times the page cap (a page's images share it)
TUNNEL_SHARE = 4


@dataclass(frozen=True)
class Failure:
    """Why the proxy did not pass a request on: ``refused`` by the policy, or not reachable."""

    message: str
    refused: bool


class PolicyProxy:
    """The proxy server; ``start`` on the event loop that will serve it."""

    def __init__(
        self,
        policy: UrlPolicy,
        *,
        connect_timeout: float = 15.0,
        head_timeout: float = 30.0,
        max_bytes: int = 0,
    ) -> None:
        self.policy = policy
        self.max_bytes = max_bytes  # 0: no cap
        self.connect_timeout = connect_timeout
        self.head_timeout = head_timeout
        self._failures: OrderedDict[str, Failure] = OrderedDict()
        self._redirects: OrderedDict[str, str] = OrderedDict()
        self._server: asyncio.Server | None = None
        self._port = 0

    async def start(self) -> PolicyProxy:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0, limit=MAX_HEAD)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    @property
    def refused(self) -> list[str]:
        """The remembered URLs / origins the policy refused (oldest first)."""
        return [key for key, f in self._failures.items() if f.refused]

    def failure_for(self, url: str) -> Failure | None:
        """Why the proxy refused or could not reach ``url`` (or its origin, for https),
        or a URL the redirects it passed on lead to from ``url``."""
        key = _key(url)
        for _ in range(MAX_HOPS):
            keys = [key]
            with contextlib.suppress(ValueError):
                keys.append(ada_url.URL(key).origin)
            failure = next((self._failures[k] for k in keys if k in self._failures), None)
            if failure is not None or key not in self._redirects:
                return failure
            key = self._redirects[key]
        return None

    def _remember(self, key: str, failure: Failure | None) -> None:
        _put(self._failures, key, failure)

    def _remember_redirect(self, url: str, response_head: bytes) -> None:
        lines = response_head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ")[1] if lines[0].count(" ") else ""
        location = next(
            (ln.partition(":")[2].strip() for ln in lines if ln.lower().startswith("location:")),
            "",
        )
        target = None
        if status.startswith("3") and location:
            with contextlib.suppress(ValueError):
                target = _key(ada_url.URL(location, url).href)
        _put(self._redirects, _key(url), target)

    def _over(self, url: str, key: str | None = None) -> Callable[[int], None]:
        """What to remember when the answer to ``url`` (``key``: the tunnel's origin) runs
        past ``limit`` bytes: the fetcher then refuses the page with this reason."""

        def remember(limit: int) -> None:
            why = (
                f"it sent more than {limit:,} bytes, over the {self.max_bytes:,}-byte limit "
                "(EVERGREEN_FETCH_MAX_BYTES)"
            )
            log.debug("Browser answer cut: %s: %s", url, why)
            self._remember(key or _key(url), Failure(why, refused=False))

        return remember

    # -- one client connection ---------------------------------------------------------------
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.head_timeout)
                method, target, version, headers = _parse_head(head)
            except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, ValueError):
                await _reply(writer, 400, "Bad request")
                return
            if method == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(method, target, version, headers, reader, writer)
        except (TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError):
            pass  # either side went away or stalled: the connection just ends
        finally:
            writer.close()

    async def _approve(self, url: str, key: str, writer: asyncio.StreamWriter) -> Target | None:
        """The policy's Target for ``url``, or None after answering 403 with the reason."""
        try:
            target = await asyncio.to_thread(self.policy.check, url)
        except UrlRefused as exc:
            self._remember(key, Failure(str(exc), refused=True))
            log.debug("Browser request refused: %s", exc)
            await _reply(writer, 403, str(exc))
            return None
        self._remember(key, None)
        return target

    async def _tunnel(
        self, authority: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        url = f"https://{authority}/"
        try:
            key = ada_url.URL(url).origin
        except ValueError:
            key = url
        target = await self._approve(url, key, writer)
        upstream = await self._connect(target, key, writer) if target else None
        if upstream is None:
            return
        up_reader, up_writer = upstream
        try:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
            limit = self.max_bytes * TUNNEL_SHARE
            await _splice(reader, writer, up_reader, up_writer, limit, self._over(url, key))
        finally:
            up_writer.close()

    async def _forward(
        self,
        method: str,
        url: str,
        version: str,
        headers: list[tuple[str, str]],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        if not url.lower().startswith("http://"):
            await _reply(writer, 400, "A proxy request names an absolute http:// URL.")
            return
        target = await self._approve(url, _key(url), writer)
        upstream = await self._connect(target, _key(url), writer) if target else None
        if upstream is None:
            return
        up_reader, up_writer = upstream
        try:
            up_writer.write(_request_head(method, url, version, headers))
            await up_writer.drain()
            response = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), self.head_timeout)
            self._remember_redirect(url, response)
            if self.max_bytes and _encoded(response):  # asked for identity: a bomb's pattern
                why = "the server compressed its answer although asked not to"
                self._remember(_key(url), Failure(why, refused=False))
                await _reply(writer, 502, why)
                return
            writer.write(_closing(response))
            await writer.drain()
            await _splice(reader, writer, up_reader, up_writer, self.max_bytes, self._over(url))
        finally:
            up_writer.close()

    async def _connect(
        self, target: Target, key: str, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to an address the policy checked (by name if allow-listed by name);
        502 to the browser if none answers."""
        hosts = [str(a) for a in target.addresses] or [target.host.strip("[]")]
        for host in hosts:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(host, target.port, limit=MAX_HEAD),
                    self.connect_timeout,
                )
            except (TimeoutError, OSError):
                continue
        why = f"cannot connect to {target.host}:{target.port} (the connection failed)"
        self._remember(key, Failure(why, refused=False))
        await _reply(writer, 502, why)
        return None


def _key(url: str) -> str:
    return canonical_url(url)


def _put(memory: OrderedDict[str, Any], key: str, value: Any) -> None:
    """Set (or, with None, forget) ``key``, keeping at most REMEMBERED entries."""
    memory.pop(key, None)
    if value is not None:
        memory[key] = value
        while len(memory) > REMEMBERED:
            memory.popitem(last=False)


# -- HTTP plumbing ---------------------------------------------------------------------------
def _parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return method.upper(), target, version, headers


def _request_head(method: str, url: str, version: str, headers: list[tuple[str, str]]) -> bytes:
    """The request as the origin server gets it: origin form, no hop-by-hop headers, and
    ``Connection: close`` (one request per upstream connection)."""
    rest = url[len("http://") :]
    slash = min((i for i in (rest.find(c) for c in "/?") if i >= 0), default=len(rest))
    path = rest[slash:] or "/"
    if path.startswith("?"):
        path = "/" + path
    kept = [(k, v) for k, v in headers if k.lower() not in {*HOP_HEADERS, "accept-encoding"}]
    lines = [
        f"{method} {path} {version}",
        *(f"{k}: {v}" for k, v in kept),
        "Accept-Encoding: identity",  # the bytes counted are the bytes the page holds
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _closing(head: bytes) -> bytes:
    """A response head with its hop-by-hop headers replaced by ``Connection: close``."""
    lines = head.decode("latin-1").split("\r\n")
    kept = [ln for ln in lines[1:] if ln and ln.split(":")[0].strip().lower() not in HOP_HEADERS]
    return ("\r\n".join([lines[0], *kept, "Connection: close"]) + "\r\n\r\n").encode("latin-1")


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(status, "Error")
    body = text.encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nX-Evergreen-Proxy: 1\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(ConnectionError, OSError):
        writer.write(head.encode("latin-1") + body)
        await writer.drain()


def _encoded(head: bytes) -> bool:
    """Does a response head declare a content encoding other than identity?"""
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-encoding" and value.strip().lower() not in (
            "",
            "identity",
        ):
            return True
    return False


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    limit: int = 0,
    over: Callable[[int], None] | None = None,
) -> None:
    """Copy ``reader`` to ``writer`` until it ends; past ``limit`` bytes (0: none), call
    ``over(limit)`` and stop (the connection is then closed: the browser sees it cut)."""
    sent = 0
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await reader.read(_CHUNK):
            sent += len(chunk)
            if limit and sent > limit:
                if over is not None:
                    over(limit)
                return
            writer.write(chunk)
            await writer.drain()


async def _splice(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
    limit: int = 0,
    over: Callable[[int], None] | None = None,
) -> None:
    """Copy both ways until either side closes; what comes down stops past ``limit``."""
    tasks = [
        asyncio.ensure_future(_pipe(client_reader, up_writer)),
        asyncio.ensure_future(_pipe(up_reader, client_writer, limit, over)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
