"""The shared evidence pool: one look at a source serves every report citing it (a corpus
page once per as-of, a web page once per freshness window), and a web re-check after the
window is a conditional request that a 304 answers with no body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select
from streamlit.testing.v1 import AppTest

from core.app.actions import review
from core.app.report_deletion import delete_report
from core.dates import parse_as_of
from core.engine.checks import news_since_versions, source_use
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.base import NotModified, Validators
from core.sources.corpus import add_corpus
from core.sources.urlpolicy import UrlRefused
from core.sources.web import WebFetcher
from core.store.db import session_scope
from core.store.models import CheckUse, CostEvent, Snapshot, Source, SourceCheck
from core.store.repository import get_report
from tests.conftest import APP, run_cli, write_jsonl
from tests.fakes.tavily_server import FakeTavily
from tests.fakes.website import Page, Website, html_page
from tests.helpers.apptest import ok
from tests.helpers.corpus import corpus_records, make_report, page
from tests.helpers.web import FETCH_MODES, LOOPBACK, PAGES, loopback_web
from tests.helpers.web import QUESTION as WEB_QUESTION

JUNE = parse_as_of("2024-06-30")
FILLER = "The storage market grew steadily through the year as new projects came online."


def costs(run_id: int, stage: str = "refresh") -> dict[str, int]:
    with session_scope() as s:
        rows = s.exec(
            select(CostEvent).where(CostEvent.run_id == run_id, CostEvent.stage == stage)
        ).all()
    keys = ("fetches", "bytes", "not_modified", "shared_checks")
    return {k: int(sum(getattr(r, k) for r in rows)) for k in keys}


def served(url_end: str) -> list[tuple[int, int]]:
    """(check id, report id) of every use of a check of the page ending in ``url_end``."""
    with session_scope() as s:
        rows = s.exec(
            select(CheckUse.check_id, CheckUse.report_id)
            .join(SourceCheck, col(SourceCheck.id) == CheckUse.check_id)
            .join(Source, col(Source.id) == SourceCheck.source_id)
            .where(col(Source.url).endswith(url_end))
            .order_by(col(CheckUse.id))
        ).all()
    return [(int(c), int(r)) for c, r in rows]


# -- a temporal corpus: once per as-of ----------------------------------------------------
@pytest.fixture
def corpus(workspace: Path, tmp_path: Path) -> str:
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", corpus_records()))
    return "corpus:fx"


def test_a_corpus_page_is_looked_at_once_per_as_of_for_every_report(corpus: str) -> None:
    first, second = make_report(corpus), make_report(corpus)
    a = update_report(first, as_of=JUNE)
    b = update_report(second, as_of=JUNE)
    cited = a["evidence"]["checked"]
    assert cited >= 3 and b["evidence"]["checked"] == cited
    assert costs(a["run_id"])["fetches"] == cited and costs(a["run_id"])["shared_checks"] == 0
    assert costs(b["run_id"]) == {"fetches": 0, "bytes": 0, "not_modified": 0,
                                  "shared_checks": cited}  # fmt: skip
    # the second report still learns what changed, from the first report's look
    for key in ("material", "minor", "unchanged", "gone"):
        assert b["evidence"][key] == a["evidence"][key]
    with session_scope() as s:
        revised = [  # the sections citing the changed page (the overview is rebuilt)
            p
            for p in proposals_of(s, b["run_id"])
            if p.action == "revise" and p.key not in DERIVED_KEYS
        ]
        assert revised and all("128 dollars" in (p.new_text or "") for p in revised)
        # the changed page is stored once, with its diff, and serves both reports
        june = s.exec(
            select(Snapshot)
            .join(Source, col(Source.id) == Snapshot.source_id)
            .where(Source.url == "https://ex.org/lfp", Snapshot.change_kind == "material")
        ).all()
        assert len(june) == 1 and june[0].claim_diff
    uses = served("/lfp")
    assert len({check for check, _ in uses}) == 1
    assert [report for _, report in uses] == [first, second]
    out = review(b["run_id"], approve_all=True, commit=True)
    assert out.stale_citations == 0


def test_another_as_of_a_reimported_corpus_or_force_looks_again(
    corpus: str, tmp_path: Path
) -> None:
    first, second, third = make_report(corpus), make_report(corpus), make_report(corpus)
    a = update_report(first, as_of=JUNE)
    # another as-of: a look of its own
    b = update_report(second, as_of=parse_as_of("2024-07-01"))
    assert costs(b["run_id"])["fetches"] == b["evidence"]["checked"]
    assert costs(b["run_id"])["shared_checks"] == 0
    # the same as-of, but asked to re-check
    c = update_report(third, as_of=JUNE, force_recheck=True)
    assert costs(c["run_id"])["fetches"] == c["evidence"]["checked"]
    for run in (a, b, c):
        review(run["run_id"], approve_all=True, commit=True)
    # pages imported into the corpus since: earlier looks at that as-of no longer serve
    later = parse_as_of("2024-09-30")
    update_report(first, as_of=later, approve_all=True)
    changed = [*corpus_records(), page("flow", "Vanadium flow batteries", "2024-08-01",
                                       "Vanadium flow batteries now reach 80 MWh.")]  # fmt: skip
    add_corpus("fx", write_jsonl(tmp_path / "fx2.jsonl", changed))
    d = update_report(second, as_of=later)
    assert costs(d["run_id"])["shared_checks"] == 0
    assert d["evidence"]["changed"] + d["evidence"]["material"] >= 1  # the new flow page


def test_the_cli_shares_looks_and_forces_a_recheck(corpus: str, workspace: Path) -> None:
    first, second, third = make_report(corpus), make_report(corpus), make_report(corpus)
    cited = update_report(first, as_of=JUNE)["evidence"]["checked"]
    shared = run_cli(workspace, "update", str(second), "--as-of", "2024-06-30", "--json")
    forced = run_cli(
        workspace, "update", str(third), "--as-of", "2024-06-30", "--force-recheck", "--json"
    )
    assert shared.returncode == 0 and forced.returncode == 0, shared.stderr + forced.stderr
    assert costs(json.loads(shared.stdout)["run_id"])["shared_checks"] == cited
    assert costs(json.loads(forced.stdout)["run_id"]) == {
        "fetches": cited,
        "bytes": costs(json.loads(forced.stdout)["run_id"])["bytes"],
        "not_modified": 0,
        "shared_checks": 0,
    }


def test_deleting_a_report_keeps_the_looks_that_served_another(corpus: str) -> None:
    first, second = make_report(corpus), make_report(corpus)
    update_report(first, as_of=JUNE, approve_all=True)
    update_report(second, as_of=JUNE, approve_all=True)
    with session_scope() as s:
        delete_report(s, get_report(s, first))
    uses = served("/lfp")
    assert uses and {report for _, report in uses} == {second}
    later = update_report(second, as_of=parse_as_of("2024-09-30"), approve_all=True)
    assert later["version"] == 3
    with session_scope() as s:
        delete_report(s, get_report(s, second))
    with session_scope() as s:
        assert not s.exec(select(SourceCheck)).all() and not s.exec(select(CheckUse)).all()


# -- the live web: once per window, then conditional ----------------------------------------
@pytest.fixture
def web(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Website, FakeTavily]]:
    site = Website({path: Page(list(v)) for path, v in PAGES.items()}, validators=True)
    paths = ["/lfp", "/nmc", "/flow", "/credit"]

    def results(body: dict[str, Any]) -> list[dict[str, Any]]:
        if body.get("start_date"):
            return []  # nothing new in the window: only the re-checks are measured
        return [
            {"url": site.link(p), "title": p[1:], "content": "snippet", "score": 1 - i / 10}
            for i, p in enumerate(paths)
        ]

    with site, loopback_web(monkeypatch, results, home=workspace) as (tavily, _llm):
        yield site, tavily


def test_web_pages_are_shared_within_the_window_then_asked_conditionally(
    web: tuple[Website, FakeTavily], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _tavily = web
    made = [create_report(WEB_QUESTION, source="web") for _ in range(2)]
    first, second = (m["report_id"] for m in made)
    n = made[0]["sources"]
    assert n >= 3 and made[1]["sources"] == n
    hits = sum(site.hits.values())

    a = update_report(first, approve_all=True)
    assert costs(a["run_id"])["fetches"] == n and a["evidence"]["unchanged"] == n
    with session_scope() as s:
        looks = s.exec(select(SourceCheck).where(SourceCheck.run_id == a["run_id"])).all()
    assert len(looks) == n and all(c.etag and c.last_modified for c in looks)
    assert sum(site.hits.values()) == hits + n

    # within the window the other report is served by those looks: no request at all
    b = update_report(second, approve_all=True)
    assert costs(b["run_id"]) == {"fetches": 0, "bytes": 0, "not_modified": 0,
                                  "shared_checks": n}  # fmt: skip
    assert b["evidence"]["unchanged"] == n and sum(site.hits.values()) == hits + n

    # the window over: a conditional request each, a 304 each, no body
    monkeypatch.setenv("EVERGREEN_RECHECK_HOURS", "0")
    sent = site.body_bytes
    c = update_report(first, approve_all=True)
    assert costs(c["run_id"]) == {"fetches": 0, "bytes": 0, "not_modified": n,
                                  "shared_checks": 0}  # fmt: skip
    assert c["evidence"]["unchanged"] == n
    assert site.body_bytes == sent and sum(site.not_modified.values()) == n

    # a page that changed answers 200 with its new text; the others stay 304s
    site.bump("/lfp")
    d = update_report(second)
    assert costs(d["run_id"])["fetches"] == 1 and costs(d["run_id"])["not_modified"] == n - 1
    assert d["evidence"]["changed"] + d["evidence"]["material"] == 1
    with session_scope() as s:
        texts = [p.new_text or "" for p in proposals_of(s, d["run_id"])]
    assert any("118 dollars" in t for t in texts)


def test_a_server_that_ignores_validators_is_fetched_as_usual(
    web: tuple[Website, FakeTavily], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _tavily = web
    rid = create_report(WEB_QUESTION, source="web")["report_id"]
    update_report(rid, approve_all=True)
    site.validators = False  # validators sent, a 200 comes back every time
    monkeypatch.setenv("EVERGREEN_RECHECK_HOURS", "0")
    site.bump("/lfp")
    result = update_report(rid)
    assert costs(result["run_id"])["fetches"] == result["evidence"]["checked"]
    assert costs(result["run_id"])["not_modified"] == 0
    assert result["evidence"]["changed"] + result["evidence"]["material"] == 1


# -- the conditional request itself ----------------------------------------------------------
@pytest.mark.parametrize("mode", FETCH_MODES)
def test_a_304_reads_no_body_and_starts_no_browser(mode: str) -> None:
    versions = [
        html_page("Prices", "Pack prices were 142 dollars per kWh.", FILLER),
        html_page("Prices", "Pack prices fell to 128 dollars per kWh.", FILLER),
    ]
    pages = {
        "/p": Page(versions),
        "/away": Page([""], status=302, headers={"Location": "http://10.255.0.1/p"}),
    }
    with Website(pages, validators=True) as site:
        url = site.link("/p")
        with WebFetcher(policy=LOOPBACK, browser=mode, delay=0) as first:
            page = first.fetch(url)
        assert page.validators and page.validators.etag and page.validators.last_modified
        with WebFetcher(policy=LOOPBACK, browser=mode, delay=0) as fetcher:
            sent = site.body_bytes
            with pytest.raises(NotModified):
                fetcher.fetch(url, validators=page.validators)
            with pytest.raises(NotModified):  # Last-Modified alone is enough
                fetcher.fetch(url, validators=Validators(None, page.validators.last_modified))
            assert fetcher.mode is None and site.body_bytes == sent  # nothing started, no body
            site.bump("/p")
            changed = fetcher.fetch(url, validators=page.validators)
            assert "128 dollars" in changed.content and fetcher.mode == mode
            assert changed.validators and changed.validators.etag != page.validators.etag
            # the conditional request obeys the address policy on every redirect hop
            with pytest.raises(UrlRefused):
                fetcher.fetch(site.link("/away"), validators=page.validators)


# -- what the screens show -------------------------------------------------------------------
def test_reports_and_evidence_show_what_another_reports_update_found(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = make_report(corpus), make_report(corpus)
    update_report(first, as_of=JUNE, approve_all=True)
    with session_scope() as s:
        news = news_since_versions(s)
        lfp = s.exec(select(Source).where(Source.url == "https://ex.org/lfp")).one()
        use = source_use(s, [int(lfp.id)])[int(lfp.id)]
    # the first report is current; the second cites pages the first one's update saw change
    assert first not in news
    assert {n["title"] for n in news[second]} >= {"Lithium iron phosphate storage costs"}
    assert {n["kind"] for n in news[second]} == {"changed"}
    assert [r["id"] for r in use["reports"]] == [first, second]
    assert use["last_check"]["outcome"] == "fetched"
    assert use["last_check"]["report_id"] == first

    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    at = ok(AppTest.from_file(APP, default_timeout=90).run())
    page = "\n".join(h.proto.body for h in at.get("html"))
    n = len(news[second])
    assert f"{n} source{'s' if n != 1 else ''} changed since this version" in page
    at.session_state["eg_report"] = first
    ok(at.switch_page("pages/evidence.py").run())
    page = "\n".join(h.proto.body for h in at.get("html"))
    captions = "\n".join(str(c.value) for c in at.caption)
    assert "1 other report" in page
    assert "Also cited by" in captions and f"by report {first}'s update: read" in captions

    # once the second report is updated too, it has no news left
    update_report(second, as_of=JUNE, approve_all=True)
    with session_scope() as s:
        assert second not in news_since_versions(s)
