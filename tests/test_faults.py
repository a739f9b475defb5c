"""Fault injection at the level of a whole update (issue 7, item 4).

Each test creates a web report (Tavily, crawl4ai's HTTP strategy and the LLM or the
offline writer, all against loopback fakes), then makes one thing misbehave and runs
``update_report``. Each asserts the specific outcome: the run completes (awaiting
review), the affected item carries its flag (proposal flags, run summary) and the Review
screen shows it, untouched sections stay byte-identical, and after commit every ``[n]``
of the new version resolves to a snapshot whose content was really fetched.

The site, the environment and the shared checks live in tests/helpers/faults.py;
FaultySite's ``fault(path, kind, ...)`` sets how a page misbehaves.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.app.review_views import review_cards
from core.dates import utcnow
from core.domain.citations import cited_markers
from core.store.db import session_scope
from core.store.models import Citation, Snapshot, Source, UpdateRun
from core.store.repository import get_report, get_version, sections_of
from tests.fakes.openai_server import Step
from tests.helpers.faults import (
    Env,
    citing,
    commit_and_check,
    kept_unchanged,
    others,
    proposals,
    web_env,
)
from tests.helpers.web import TAVILY_KEY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from web_env(workspace, monkeypatch)


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
    said = re.split(r"(?<=\.)\s+", p.old_text or "")  # its sentences, across paragraphs
    only_gone = [sent for sent in said if cited_markers(sent) == [gone]]
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
    lfp, flow = len(env.site.arrivals["/lfp"]), len(env.site.arrivals["/flow"])
    result = env.update()
    lfp_asked = env.site.arrivals["/lfp"][lfp:]
    assert len(lfp_asked) == 2 and lfp_asked[1] - lfp_asked[0] >= 1.0  # waited the second
    assert len(env.site.arrivals["/flow"]) - flow == 1  # an hour: asked once, never retried
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
    calls = len(env.llm.requests)
    result = env.update()
    assert len(env.llm.requests) - calls == 4  # the writer's 4 attempts, then it gave up
    p = citing(proposals(result["run_id"]), env.markers["/lfp"])
    writer_failed(p, result["run_id"], "timed out")
    with session_scope() as s:  # until review the report still reads as it did
        version = get_version(s, get_report(s, env.report_id))
        assert version.number == 1
        assert p.old_text in [sec.body for sec in sections_of(s, version.id)]
    page = review_page(env.report_id, result["run_id"])
    assert "writer failed" in page and "timed out" in page
    commit_and_check(env, result["run_id"])


def test_llm_429_with_retry_after_is_waited_for(env: Env) -> None:
    seen: list[tuple[float, bytes, int]] = []  # (arrival, body, status) of each model request
    handle = env.llm.server.handler

    def timed(req: Any) -> Any:
        arrival = time.monotonic()
        reply = handle(req)
        seen.append((arrival, req.body, reply.status))
        return reply

    env.llm.server.handler = timed
    result, p = llm_fault(env, Step("status", status=429, headers={"Retry-After": "1"}))
    [(refused_at, body)] = [(at, b) for at, b, status in seen if status == 429]
    [retried_at] = [at for at, b, status in seen if b == body and status == 200]
    assert retried_at - refused_at >= 1.0  # the same request again, the second it was asked
    assert p.action in ("revise", "extend") and "118 dollars" in p.new_text and not p.flags
    commit_and_check(env, result["run_id"])
