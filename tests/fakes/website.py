"""A loopback web site whose pages change between requests.

Each page has a list of versions; `bump(path)` moves it to its next version (the
next request sees it), or a page can advance on every request (`advance=True`).
A page may be gone (404 / 410), plain text, a PDF, an image, too large, or a redirect.
The site counts requests per path and the most requests it served at once. With
``validators`` it answers like a well-kept server: an ETag and a Last-Modified date per
version, and 304 (no body) to a conditional request for the version it still serves;
it counts the 304s and the body bytes it sent.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from tests.fakes.loopback import LoopbackServer, Reply, Request


@dataclass
class Page:
    versions: list[str]
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    advance: bool = False  # move to the next version after every request
    headers: dict[str, str] = field(default_factory=dict)
    current: int = 0


def html_page(title: str, *paragraphs: str) -> str:
    body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><nav><a href='/'>Home</a></nav><main><h1>{title}</h1>\n{body}</main>"
        "<footer>Loopback site</footer></body></html>"
    )


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` (Helvetica), built by hand with a valid xref."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


class Website:
    def __init__(
        self,
        pages: dict[str, Page] | None = None,
        *,
        latency: float = 0.0,
        validators: bool = False,
    ) -> None:
        self.pages: dict[str, Page] = dict(pages or {})
        self.latency = latency
        self.validators = validators
        self.hits: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.body_bytes = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self.server = LoopbackServer(self._handle)

    @property
    def url(self) -> str:
        return self.server.url

    def link(self, path: str) -> str:
        return f"{self.server.url}{path}"

    def bump(self, path: str) -> None:
        with self._lock:
            page = self.pages[path]
            page.current = min(page.current + 1, len(page.versions) - 1)

    def __enter__(self) -> Website:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def _handle(self, req: Request) -> Reply:
        path = req.path.split("?")[0]
        with self._lock:
            self.hits[path] += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            with self._lock:
                page = self.pages.get(path)
                if page is None:
                    return Reply(
                        404,
                        "<html><body><h1>Not found</h1></body></html>",
                        content_type="text/html",
                    )
                body = page.versions[page.current]
                version = page.current
                if page.advance:
                    page.current = min(page.current + 1, len(page.versions) - 1)
            headers = dict(page.headers)
            if self.validators and page.status == 200:
                headers.update(_validators(body, version))
                if _unchanged(req.headers, headers):
                    with self._lock:
                        self.not_modified[path] += 1
                    return Reply(304, b"", headers=headers, content_type=page.content_type)
            reply = Reply(page.status, body, headers=headers, content_type=page.content_type)
            if req.method != "HEAD":  # a HEAD answer carries the headers only
                with self._lock:
                    self.body_bytes += len(reply.body)
            return reply
        finally:
            with self._lock:
                self._in_flight -= 1


_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _validators(body: str | bytes, version: int) -> dict[str, str]:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return {
        "ETag": f'"{hashlib.sha1(data).hexdigest()[:16]}"',
        "Last-Modified": format_datetime(_EPOCH + timedelta(days=version), usegmt=True),
    }


def _unchanged(asked: dict[str, str], current: dict[str, str]) -> bool:
    """RFC 9110: If-None-Match decides when sent; else If-Modified-Since."""
    if "if-none-match" in asked:
        tags = [t.strip() for t in asked["if-none-match"].split(",")]
        return current["ETag"] in tags or "*" in tags
    if "if-modified-since" in asked:
        try:
            since = parsedate_to_datetime(asked["if-modified-since"])
        except (TypeError, ValueError):
            return False
        return parsedate_to_datetime(current["Last-Modified"]) <= since
    return False
