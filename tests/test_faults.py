"""Fault injection at the level of a whole update (issue 7, item 4).

Each test creates a web report (Tavily, crawl4ai's HTTP strategy and the LLM or the
offline writer, all against loopback fakes), then makes one thing misbehave and runs
``update_report``. Each asserts the specific outcome: the run completes (awaiting
review), the affected item carries its flag (proposal flags, run summary) and the Review
screen shows it, untouched sections stay byte-identical, and after commit every ``[n]``
of the new version resolves to a snapshot whose content was really fetched.

The site used here, FaultySite, unlike tests/fakes/website.py writes raw HTTP itself,
so it can also cut a response short, send a body without a length, or count how many
bytes a client really read before hanging up. ``fault(path, kind, ...)`` sets how a
page answers from now on:

- ``slow``: answer after ``delay`` seconds
- ``status``: answer HTTP ``status`` (404, 410, 500, ...) ``times`` times (None: always),
  with ``headers`` (e.g. Retry-After), then the page again
- ``truncated``: promise ``Content-Length`` 20,000 bytes, send a few hundred, close
- ``garbage``: binary bytes served as text/html
- ``big``: ``size`` bytes of HTML (with Content-Length, or none and close: ``chunked=True``)
- ``loop``: a redirect loop between ``path`` and ``path + "-again"``
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.dates import utcnow
from core.db import session_scope
from core.models import Citation, PoolEntry, Report, Section, Snapshot, Source, UpdateRun
from core.overview import DERIVED_KEYS
from core.report_state import cited_markers
from core.repository import get_report, get_version, sections_of
from core.research import create_report
from core.review import proposals_of, review_run
from core.review_views import review_cards
from core.update import update_report
from core.writers.llm import LlmWriter
from tests.fakes.env import use_loopback_providers
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.fakes.tavily_server import FakeTavily
from tests.test_web_e2e import OPENAI_KEY, PAGES, QUESTION, TAVILY_KEY

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.fixture
def env(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from web_env(workspace, monkeypatch)


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
    with site, FakeTavily(results, key=TAVILY_KEY) as tavily, FakeOpenAI() as llm:
        use_loopback_providers(
            monkeypatch,
            tavily=tavily,
            tavily_key=TAVILY_KEY,
            llm=llm,
            openai_key=OPENAI_KEY,
            home=workspace,
        )
        yield Env(site, tavily, llm)


# -- helpers ------------------------------------------------------------------------------------
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


def checked(run_id: int, marker: int) -> dict[str, Any]:
    with session_scope() as s:
        run = s.get(UpdateRun, run_id)
        return next(c for c in run.summary["checked"] if c["marker"] == marker)


def card_flags(run_id: int) -> list[str]:
    with session_scope() as s:
        return [f for c in review_cards(s, run_id) for f in c["flags"]]


def review_page(report_id: int, run_id: int) -> str:
    """Everything the Review screen shows for the run (AppTest)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    at.session_state["eg_report"] = report_id
    at.session_state["eg_run"] = run_id
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    parts = [m.value for m in at.markdown] + [e.value for e in at.error]
    parts += [w.value for w in at.warning]  # needs-attention flags are warnings
    parts += [h.proto.body for h in at.get("html")]
    return "\n".join(str(p) for p in parts)


def commit_and_check(env: Env, run_id: int) -> list[Section]:
    """Commit the run; every [n] of the new version has a citation to a snapshot with
    content, of a page the site really served. Returns the version's sections."""
    review_run(run_id, approve_all=True, commit=True)
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


def unreachable(env: Env, run_id: int, path: str, why: str) -> Any:
    """The source at ``path`` was unreachable for ``why``: its section is kept unchanged
    and flagged, the run lists it as an error, and the Review screen shows the flag."""
    marker = env.markers[path]
    row = checked(run_id, marker)
    assert row["kind"] == "error" and why in row["error"], row
    p = citing(proposals(run_id), marker)
    kept_unchanged(p)
    flag = next(f for f in p.flags if f.startswith(f"source [{marker}] unreachable:"))
    assert why in flag
    assert flag in card_flags(run_id)
    return p


# -- fetch faults -------------------------------------------------------------------------------
def test_fetch_timeout(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    env.create()
    calls = len(env.llm.requests)
    monkeypatch.setenv("EVERGREEN_FETCH_TIMEOUT", "1")
    env.site.fault("/lfp", "slow", delay=2.5)
    result = env.update()
    unreachable(env, result["run_id"], "/lfp", "timed out")
    assert len(env.llm.requests) == calls  # nothing changed: no model call at all
    assert all(p.action == "keep" for p in proposals(result["run_id"]))
    page = review_page(env.report_id, result["run_id"])
    assert f"source [{env.markers['/lfp']}] unreachable" in page and "timed out" in page
    commit_and_check(env, result["run_id"])


def test_page_gone_404_offline_writer_drops_sentences_citing_it(env: Env) -> None:
    env.create(writer="offline")
    gone = env.markers["/flow"]
    env.site.pages.pop("/flow")  # 404 from now on
    result = env.update()
    assert result["evidence"]["gone"] == 1
    assert checked(result["run_id"], gone)["kind"] == "gone"
    p = citing(proposals(result["run_id"]), gone)
    assert p.action in ("revise", "remove")
    assert gone not in cited_markers(p.new_text or "")
    only_gone = [sent for sent in (p.old_text or "").split(". ") if cited_markers(sent) == [gone]]
    assert only_gone and not any(sent in (p.new_text or "") for sent in only_gone)
    for other in others(proposals(result["run_id"]), gone):
        kept_unchanged(other)
    sections = commit_and_check(env, result["run_id"])
    assert all(gone not in cited_markers(sec.body) for sec in sections)


def test_page_gone_410_llm_writer_drops_its_citations_and_says_so(env: Env) -> None:
    env.create()
    gone = env.markers["/flow"]
    env.site.fault("/flow", "status", status=410)
    result = env.update()
    assert checked(result["run_id"], gone)["kind"] == "gone"
    p = citing(proposals(result["run_id"]), gone)
    assert p.action == "revise" and gone not in cited_markers(p.new_text or "")
    assert "Vanadium flow batteries" in p.rationale and "no longer exists" in p.rationale
    sections = commit_and_check(env, result["run_id"])
    assert all(gone not in cited_markers(sec.body) for sec in sections)


def test_5xx_burst_is_retried_and_a_persistent_5xx_is_flagged(env: Env) -> None:
    env.create()
    env.site.bump("/lfp")  # the page changed ...
    env.site.fault("/lfp", "status", status=503, times=2)  # ... behind two 503s
    env.site.fault("/flow", "status", status=500)  # always
    before = dict(env.site.hits)
    result = env.update()
    assert env.site.hits["/lfp"] - before["/lfp"] == 3  # two 503s, then the page
    assert checked(result["run_id"], env.markers["/lfp"])["kind"] in ("changed", "material")
    lfp = citing(proposals(result["run_id"]), env.markers["/lfp"])
    assert lfp.action in ("revise", "extend") and "118 dollars" in lfp.new_text and not lfp.flags
    assert env.site.hits["/flow"] - before["/flow"] == 3  # three attempts, then given up
    unreachable(env, result["run_id"], "/flow", "HTTP 500 after 3 attempts")
    sections = commit_and_check(env, result["run_id"])
    assert any("118 dollars" in s.body for s in sections)


def test_429_retry_after_is_honoured_or_refused_when_too_long(env: Env) -> None:
    env.create()
    env.site.bump("/lfp")
    env.site.fault("/lfp", "status", status=429, times=1, headers={"Retry-After": "1"})
    env.site.fault("/flow", "status", status=429, headers={"Retry-After": "3600"})
    start = time.perf_counter()
    result = env.update()
    elapsed = time.perf_counter() - start
    assert 1.0 <= elapsed < 60  # waited the second it was asked to, not an hour
    assert checked(result["run_id"], env.markers["/lfp"])["kind"] in ("changed", "material")
    unreachable(env, result["run_id"], "/flow", "retry after 3600 s; not waited for")
    lfp = citing(proposals(result["run_id"]), env.markers["/lfp"])
    assert lfp.action in ("revise", "extend") and "118 dollars" in lfp.new_text
    sections = commit_and_check(env, result["run_id"])
    assert any("118 dollars" in s.body for s in sections)


def test_truncated_transfer_and_garbage_html_are_flagged(env: Env) -> None:
    env.create()
    env.site.fault("/lfp", "truncated")  # promises 20,000 bytes, sends 300, hangs up
    env.site.fault("/flow", "garbage")  # binary served as text/html
    with session_scope() as s:
        snapshots = len(s.exec(select(Snapshot)).all())
    result = env.update()
    unreachable(env, result["run_id"], "/lfp", "payload is not completed")
    unreachable(env, result["run_id"], "/flow", "garbled")
    with session_scope() as s:
        assert len(s.exec(select(Snapshot)).all()) == snapshots  # nothing of them stored
    commit_and_check(env, result["run_id"])


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "no-length"])
def test_50_mb_page_is_refused_before_it_is_read(env: Env, chunked: bool) -> None:
    env.create()
    env.site.fault("/lfp", "big", size=50_000_000, chunked=chunked)
    before = env.site.sent["/lfp"]
    result = env.update()
    unreachable(env, result["run_id"], "/lfp", "over the 5,000,000-byte limit")
    # The client hung up early: far less than the 50 MB was ever accepted from the site.
    assert env.site.sent["/lfp"] - before < 20_000_000
    with session_scope() as s:
        lfp = s.exec(select(Source).where(Source.url == env.site.link("/lfp"))).one()
        snaps = s.exec(select(Snapshot).where(Snapshot.source_id == lfp.id)).all()
        assert len(snaps) == 1 and len(snaps[0].content) < 10_000  # only the first fetch
    commit_and_check(env, result["run_id"])


def test_redirect_loop_is_flagged(env: Env) -> None:
    env.create()
    before = env.site.hits["/lfp"] + env.site.hits["/lfp-again"]
    env.site.fault("/lfp", "loop")
    result = env.update()
    unreachable(env, result["run_id"], "/lfp", "too many redirects")
    hops = env.site.hits["/lfp"] + env.site.hits["/lfp-again"] - before
    assert 2 <= hops <= 12  # the client gave up after a bounded number of hops
    commit_and_check(env, result["run_id"])


def test_search_provider_down_keeps_the_refresh_and_flags_discovery(env: Env) -> None:
    made = utcnow()
    env.create()
    while utcnow() <= made:  # instants are whole seconds: let one pass, a window to search
        time.sleep(0.05)
    env.site.bump("/lfp")
    env.tavily.fail_with = 503
    result = env.update()
    with session_scope() as s:
        run = s.get(UpdateRun, result["run_id"])
        flags = run.summary["flags"]
    assert len(flags) == 1 and flags[0].startswith("discovery failed, no new evidence searched")
    assert "Tavily search failed" in flags[0] and TAVILY_KEY not in flags[0]
    assert result["evidence"]["new"] == 0
    lfp = citing(proposals(result["run_id"]), env.markers["/lfp"])
    assert lfp.action in ("revise", "extend") and "118 dollars" in lfp.new_text  # refresh kept
    page = review_page(env.report_id, result["run_id"])
    assert "discovery failed, no new evidence searched" in page
    sections = commit_and_check(env, result["run_id"])
    assert any("118 dollars" in s.body for s in sections)


# -- model faults ---------------------------------------------------------------------------------
def llm_fault(env: Env, *steps: Step | str) -> tuple[dict[str, Any], Any]:
    """Create, change /lfp, script the model's next replies, update: (result, the /lfp
    section's proposal). The other section must be untouched and cost no model call."""
    env.create()
    env.site.bump("/lfp")
    calls = len(env.llm.requests)
    env.llm.script(*steps)
    result = env.update()
    props = proposals(result["run_id"])
    for other in others(props, env.markers["/lfp"]):
        kept_unchanged(other)
    asked = [json.dumps(r["messages"]) for r in env.llm.requests[calls:]]
    untouched = [o.heading for o in others(props, env.markers["/lfp"]) if o.heading]
    assert untouched and asked
    assert not any(f"Section heading: {h}\\n" in a for h in untouched for a in asked)
    return result, citing(props, env.markers["/lfp"])


def writer_failed(p: Any, run_id: int, why: str) -> None:
    # kept as it was, but never pre-approved: a sentence in it is no longer true
    assert p.action == "keep" and p.new_text == p.old_text and p.decision == "pending"
    flag = next(f for f in p.flags if "writer failed:" in f)
    assert why in flag and flag in card_flags(run_id)
    assert "118 dollars" not in p.new_text


def test_llm_malformed_json_twice_keeps_the_section_flagged(env: Env) -> None:
    result, p = llm_fault(env, "malformed", "malformed")
    writer_failed(p, result["run_id"], "not valid JSON")
    assert p.evidence and p.evidence[0]["kind"] in ("changed", "material")  # for the reviewer
    sections = commit_and_check(env, result["run_id"])
    assert not any("118 dollars" in s.body for s in sections)


def test_llm_malformed_json_once_is_repaired(env: Env) -> None:
    result, p = llm_fault(env, "malformed")
    assert p.action in ("revise", "extend") and "118 dollars" in p.new_text and not p.flags
    commit_and_check(env, result["run_id"])


def test_llm_empty_message_keeps_the_section_flagged(env: Env) -> None:
    result, p = llm_fault(env, "empty", "empty")
    writer_failed(p, result["run_id"], "the reply was empty")
    commit_and_check(env, result["run_id"])


def test_llm_citations_to_unknown_ids_are_dropped_and_flagged(env: Env) -> None:
    result, p = llm_fault(env, "unknown_ids")
    assert p.action in ("revise", "extend") and "[99]" not in p.new_text
    assert "dropped 1 unknown citation ([99])" in p.flags
    assert "dropped 1 unknown citation ([99])" in card_flags(result["run_id"])
    sections = commit_and_check(env, result["run_id"])
    assert all(99 not in cited_markers(s.body) for s in sections)
    with session_scope() as s:
        assert not s.exec(select(Citation).where(Citation.marker == 99)).all()


def test_llm_timeout_keeps_the_section_flagged(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    env.create()
    monkeypatch.setenv("EVERGREEN_LLM_TIMEOUT", "0.5")
    env.site.bump("/lfp")
    env.llm.script(*[Step("slow", delay=1.2)] * 4)  # every attempt of the revise call
    start = time.perf_counter()
    result = env.update()
    assert time.perf_counter() - start < 30
    p = citing(proposals(result["run_id"]), env.markers["/lfp"])
    writer_failed(p, result["run_id"], "timed out")
    with session_scope() as s:
        report = s.get(Report, env.report_id)
        assert report is not None
    page = review_page(env.report_id, result["run_id"])
    assert "writer failed" in page and "timed out" in page
    commit_and_check(env, result["run_id"])


def test_llm_429_with_retry_after_is_waited_for(env: Env) -> None:
    start = time.perf_counter()
    result, p = llm_fault(env, Step("status", status=429, headers={"Retry-After": "1"}))
    assert time.perf_counter() - start >= 1.0
    assert p.action in ("revise", "extend") and "118 dollars" in p.new_text and not p.flags
    commit_and_check(env, result["run_id"])
