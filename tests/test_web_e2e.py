"""End to end: create and update a web report with the LLM writer, fake Tavily, crawl4ai
against a loopback site, and a fake OpenAI-compatible server. Nothing leaves 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.dates import utcnow
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.chromium import find_chromium
from core.store.db import session_scope
from core.store.models import Citation, CostEvent, ReportVersion, Snapshot, Source
from core.store.repository import get_report, load_doc
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tavily_server import FakeTavily
from tests.fakes.website import Page, Website
from tests.helpers.web import OPENAI_KEY, PAGES, QUESTION, TAVILY_KEY, loopback_web


def mode() -> str:
    if find_chromium() or os.environ.get("CI") == "true":
        return "chromium"
    return "http"


@pytest.fixture
def servers(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Website, FakeTavily, FakeOpenAI]]:
    site = Website({path: Page(list(v)) for path, v in PAGES.items()})

    def results(body: dict[str, Any]) -> list[dict[str, Any]]:
        paths = ["/sodium"] if body.get("start_date") else ["/lfp", "/nmc", "/flow", "/credit"]
        return [
            {"url": site.link(p), "title": p[1:], "content": "snippet", "score": 1 - i / 10}
            for i, p in enumerate(paths)
        ]

    # no raw content from search: every page goes through crawl4ai
    with site, loopback_web(monkeypatch, results, home=workspace, browser=mode()) as (t, m):
        yield site, t, m


def run_events(run_id: int) -> list[CostEvent]:
    with session_scope() as s:
        return list(s.exec(select(CostEvent).where(CostEvent.run_id == run_id)).all())


def test_create_and_update_a_web_report(servers: tuple[Website, FakeTavily, FakeOpenAI]) -> None:
    site, tavily, llm = servers
    today = utcnow().date().isoformat()
    tavily.expect_dates(None, today)
    made = create_report(QUESTION, source="web", settings={"writer": "openai"})
    assert made["version"] == 1 and made["sources"] == 4
    assert not tavily.mismatches
    assert all(site.hits[p] == 1 for p in ("/lfp", "/nmc", "/flow", "/credit"))
    created = run_events(made["run_id"])
    llm_rows = [e for e in created if e.llm_calls]
    assert {e.stage for e in llm_rows} == {"plan", "outline", "write"}
    assert all((e.provider, e.model) == ("openai", "gpt-4o-mini") for e in llm_rows)
    assert {e.prompt.split("@")[0] for e in llm_rows} >= {"plan_queries", "write_section"}
    assert all(e.prompt.split("@")[1] for e in llm_rows)  # a version with every call
    assert sum(e.llm_calls for e in created) == len(llm.requests)
    assert sum(e.tokens_in for e in created) == llm.usage_totals()["prompt"]
    assert sum(e.tokens_out for e in created) == llm.usage_totals()["completion"]
    assert sum(e.usd for e in created) > 0
    assert sum(e.fetches for e in created) == 4 and sum(e.searches for e in created) >= 1

    site.bump("/lfp")  # the price changes on the live page
    tavily.expect_dates(today, today)  # the update searches only the window
    calls_before, replies_before = len(llm.requests), len(llm.replies)
    result = update_report(made["report_id"], approve_all=True)
    # the last search, not the last request: run beside two benches, the last request the
    # fake recorded had no start_date while no search missed the window (no mismatch): a
    # request that never reached its search check (a wrong path or key, or no body)
    searches = [r for r in tavily.requests if r.get("query")]
    assert not tavily.mismatches and searches[-1]["start_date"] == today
    assert result["version"] == 2
    assert result["evidence"]["changed"] + result["evidence"]["material"] == 1
    assert result["evidence"]["unchanged"] == 3 and result["evidence"]["new"] == 1

    # Cost events of the update: every model call recorded, tokens as the server counted.
    events = run_events(result["run_id"])
    update_requests = llm.requests[calls_before:]
    update_replies = llm.replies[replies_before:]
    assert sum(e.llm_calls for e in events) == len(update_requests) > 0
    assert sum(e.tokens_in for e in events) == sum(
        r["usage"]["prompt_tokens"] for r in update_replies
    )
    assert sum(e.tokens_out for e in events) == sum(
        r["usage"]["completion_tokens"] for r in update_replies
    )
    assert {e.stage for e in events if e.llm_calls} <= {"revise", "summarise", "outline", "write"}
    assert sum(e.fetches for e in events) == 5  # 4 re-checked + 1 new, each once

    # Only sections with changed or new evidence went to the model.
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
    touched = {
        p.heading
        for p in props
        if any(e["kind"] in ("changed", "material", "gone", "new") for e in p.evidence)
    }
    # (the overview and key facts are rebuilt by the engine, with no writer call)
    kept_free = [
        p for p in props if p.heading and p.heading not in touched and p.key not in DERIVED_KEYS
    ]
    asked = {
        line.removeprefix("Section heading: ")
        for r in update_requests
        for line in r["messages"][-1]["content"].splitlines()
        if line.startswith("Section heading: ")
    }
    assert touched and kept_free, "the fixture must leave a section untouched"
    assert asked <= touched | {p.heading for p in props if p.action == "add"}
    for p in kept_free:
        assert p.action == "keep" and p.new_text == p.old_text
        assert "so the section stays as it is" in p.rationale
    assert any("118 dollars" in (p.new_text or "") for p in props)

    # Every citation of the new version resolves to a snapshot fetched from the site.
    with session_scope() as s:
        report = get_report(s, made["report_id"])
        version = s.exec(
            select(ReportVersion).where(
                ReportVersion.report_id == report.id, ReportVersion.number == 2
            )
        ).one()
        doc = load_doc(s, version)
        cited = {m for sec in doc.sections for m in sec.markers}
        rows = s.exec(
            select(Citation, Snapshot, Source)
            .join(Snapshot, Citation.snapshot_id == Snapshot.id)
            .join(Source, Snapshot.source_id == Source.id)
        ).all()
        by_marker = {c.marker: (snap, src) for c, snap, src in rows}
        assert cited and cited <= set(by_marker)
        for marker in cited:
            snap, src = by_marker[marker]
            path = src.url.removeprefix(site.url)
            assert snap.content and site.hits[path] >= 1
        lfp = next(snap for snap, src in by_marker.values() if src.url.endswith("/lfp"))
        assert "118 dollars" in (lfp.content or "")

    # No key reached the database.
    with session_scope() as s:
        dump = repr(s.exec(select(CostEvent)).all()) + repr([p.flags for p in props])
    assert OPENAI_KEY not in dump and TAVILY_KEY not in dump


def test_update_without_changes_makes_no_llm_call(
    servers: tuple[Website, FakeTavily, FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, tavily, llm = servers
    made = create_report(QUESTION, source="web", settings={"writer": "openai"})
    calls = len(llm.requests)
    tavily.results = lambda body: []  # nothing new in the window either
    result = update_report(made["report_id"], approve_all=True)
    assert len(llm.requests) == calls
    assert result["cost"]["llm_calls"] == 0 and result["writer_calls"] == 0
    assert result["evidence"]["unchanged"] == 4
