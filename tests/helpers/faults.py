"""A whole web update against loopback fakes, where one thing can be made to misbehave
(shared by tests/test_faults.py and tests/test_hostile.py).

FaultySite, unlike tests/fakes/website.py, writes raw HTTP itself, so it can also cut a
response short, send a body without a length, or count how many bytes a client really
read before hanging up. ``fault(path, kind, ...)`` sets how a page answers from now on:

- ``slow``: answer after ``delay`` seconds
- ``status``: answer HTTP ``status`` (404, 410, 500, ...) ``times`` times (None: always),
  with ``headers`` (e.g. Retry-After), then the page again
- ``truncated``: promise ``Content-Length`` 20,000 bytes, send a few hundred, close
- ``garbage``: binary bytes served as text/html
- ``big``: ``size`` bytes of HTML (with Content-Length, or none and close: ``chunked=True``)
- ``loop``: a redirect loop between ``path`` and ``path + "-again"``
"""

from __future__ import annotations

import gzip
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.app.actions import review
from core.domain.citations import cited_markers
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.models import Citation, PoolEntry, Section, Snapshot, Source
from core.store.repository import get_report, get_version, sections_of
from core.writers.llm import LlmWriter
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tavily_server import FakeTavily
from tests.helpers.web import PAGES, QUESTION, loopback_web


@dataclass
class Fault:
    kind: str
    status: int = 500
    times: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    size: int = 0
    chunked: bool = False


class FaultySite:
    def __init__(self, pages: dict[str, list[str]]) -> None:
        self.pages = {path: list(versions) for path, versions in pages.items()}
        self.current: dict[str, int] = dict.fromkeys(self.pages, 0)
        self.faults: dict[str, Fault] = {}
        self.hits: Counter[str] = Counter()
        # when each request arrived (time.monotonic()), per path: the waits between them
        self.arrivals: defaultdict[str, list[float]] = defaultdict(list)
        self.sent: Counter[str] = Counter()  # body bytes a client accepted, per path
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                try:
                    outer._serve(self)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- control ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def link(self, path: str) -> str:
        return self.url + path

    def bump(self, path: str) -> None:
        with self._lock:
            self.current[path] = min(self.current[path] + 1, len(self.pages[path]) - 1)

    def fault(self, path: str, kind: str, **kw: Any) -> None:
        with self._lock:
            self.faults[path] = Fault(kind, **kw)

    def clear(self, path: str) -> None:
        with self._lock:
            self.faults.pop(path, None)

    def __enter__(self) -> FaultySite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- serving -------------------------------------------------------------------------------
    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        with self._lock:
            self.hits[path] += 1
            self.arrivals[path].append(time.monotonic())
            base = path.removesuffix("-again")
            fault = self.faults.get(base)
            if fault and fault.kind == "status" and fault.times is not None:
                if fault.times <= 0:
                    fault = None
                else:
                    fault.times -= 1
            page = self.pages.get(path)
            body = page[self.current[path]].encode() if page else None
        if fault and fault.kind == "slow":
            time.sleep(fault.delay)
        if fault and fault.kind == "status":
            self._send(h, path, fault.status, b"<html><body>error</body></html>", fault.headers)
        elif fault and fault.kind == "loop":
            target = base + "-again" if path == base else base
            self._send(h, path, 302, b"", {"Location": target})
        elif fault and fault.kind == "truncated":
            h.send_response(200)
            h.send_header("Content-Type", "text/html; charset=utf-8")
            h.send_header("Content-Length", "20000")
            h.end_headers()
            h.wfile.write(body[:300] if body else b"<html><body><p>Cut")
            h.wfile.flush()
            h.close_connection = True
        elif fault and fault.kind == "garbage":
            rnd = random.Random(7)
            self._send(h, path, 200, bytes(rnd.randrange(256) for _ in range(20_000)))
        elif fault and fault.kind == "big":
            self._send_big(h, path, fault.size, fault.chunked)
        elif fault and fault.kind == "bomb":  # gzip whatever the client accepts
            packed = gzip.compress(b"<p>" + b"0" * fault.size + b"</p>", compresslevel=9)
            self._send(h, path, 200, packed, {"Content-Encoding": "gzip"})
        elif body is None:
            self._send(h, path, 404, b"<html><body><h1>Not found</h1></body></html>")
        else:
            self._send(h, path, 200, body)

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        path: str,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)
        with self._lock:
            self.sent[path] += len(body)

    def _send_big(self, h: BaseHTTPRequestHandler, path: str, size: int, chunked: bool) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        if chunked:  # no length: the body ends when the connection closes
            h.send_header("Connection", "close")
            h.close_connection = True
        else:
            h.send_header("Content-Length", str(size))
        h.end_headers()
        block = (b"<p>" + b"word " * 200 + b"</p>\n") * 64  # ~64 KB
        left = size
        while left > 0:  # bounded by size; stops when the client hangs up
            chunk = block[: min(left, len(block))]
            h.wfile.write(chunk)
            with self._lock:
                self.sent[path] += len(chunk)
            left -= len(chunk)


# -- the environment ------------------------------------------------------------------------
class Env:
    def __init__(self, site: FaultySite, tavily: FakeTavily, llm: FakeOpenAI) -> None:
        self.site, self.tavily, self.llm = site, tavily, llm
        self.report_id = 0
        self.markers: dict[str, int] = {}  # path -> marker in the report's pool

    def create(self, writer: str = "openai") -> dict[str, Any]:
        made = create_report(QUESTION, source="web", settings={"writer": writer})
        self.report_id = made["report_id"]
        with session_scope() as s:
            rows = s.exec(
                select(PoolEntry.marker, Source.url)
                .join(Source, Source.id == PoolEntry.source_id)
                .where(PoolEntry.report_id == self.report_id)
            ).all()
        self.markers = {url.removeprefix(self.site.url): m for m, url in rows}
        return made

    def update(self, as_of: datetime | None = None) -> dict[str, Any]:
        result = update_report(self.report_id, as_of=as_of)
        assert result["status"] == "awaiting_review", result
        return result


def web_env(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """The loopback site, search and model, and the settings that point at them."""
    site = FaultySite({path: list(v) for path, v in PAGES.items()})

    def results(body: dict[str, Any]) -> list[dict[str, Any]]:
        if body.get("start_date"):
            return []  # nothing new in an update's window unless a test says so
        return [
            {"url": site.link(p), "title": p[1:], "content": "snippet", "score": 1 - i / 10}
            for i, p in enumerate(["/lfp", "/nmc", "/flow", "/credit"])
        ]

    real = LlmWriter.from_settings.__func__  # type: ignore[attr-defined]

    def quick(cls: type[LlmWriter], settings: Any) -> LlmWriter:
        writer = real(cls, settings)
        writer.backoff = 0.01  # retries still happen, without seconds of backoff
        return writer

    monkeypatch.setattr(LlmWriter, "from_settings", classmethod(quick))
    with site, loopback_web(monkeypatch, results, home=workspace) as (tavily, llm):
        yield Env(site, tavily, llm)


def proposals(run_id: int) -> list[Any]:
    with session_scope() as s:
        return proposals_of(s, run_id)


def citing(props: list[Any], marker: int) -> Any:
    """The writer's section citing ``marker`` (the overview and key facts, which the
    engine builds from the sections, cite it too)."""
    [p] = [
        p for p in props if marker in cited_markers(p.old_text or "") and p.key not in DERIVED_KEYS
    ]
    return p


def others(props: list[Any], marker: int) -> list[Any]:
    """The writer's sections not citing ``marker``."""
    return [
        p
        for p in props
        if marker not in cited_markers(p.old_text or "") and p.key not in DERIVED_KEYS
    ]


def commit_and_check(env: Env, run_id: int) -> list[Section]:
    """Commit the run; every [n] of the new version has a citation to a snapshot with
    content, of a page the site really served. Returns the version's sections."""
    review(run_id, approve_all=True, commit=True)
    with session_scope() as s:
        version = get_version(s, get_report(s, env.report_id))
        sections = sections_of(s, version.id)
        for sec in sections:
            rows = s.exec(
                select(Citation.marker, Snapshot, Source)
                .join(Snapshot, Snapshot.id == Citation.snapshot_id)
                .join(Source, Source.id == Snapshot.source_id)
                .where(Citation.section_id == sec.id)
            ).all()
            by_marker = {m: (snap, src) for m, snap, src in rows}
            assert set(cited_markers(sec.body)) <= set(by_marker), sec.body
            for snap, src in by_marker.values():
                assert snap.content and snap.content_hash
                assert src.url.startswith(env.site.url)
                assert env.site.hits[src.url.removeprefix(env.site.url)] >= 1
        for sec in sections:
            s.expunge(sec)
    return sections


def kept_unchanged(p: Any) -> None:
    assert p.action == "keep" and p.new_text == p.old_text and p.decision == "approved"
