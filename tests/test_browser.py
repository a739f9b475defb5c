"""The app in a real browser: Playwright driving Debian's Chromium against
`streamlit run app.py`, with updates running in the background worker.

Runs (never skips) under CI=true; locally it skips only when Chromium is missing.
Screenshots of the Review and History screens are saved under the test's tmp_path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from tests.helpers.browser import (
    click_until_disabled,
    configure_expect,
    open_screen,
    require_chromium,
    settle,
)
from tests.helpers.browser import serve as _serve

require_chromium()
configure_expect()

from playwright.sync_api import Page, expect  # noqa: E402

PAYLOAD_SCRIPT = "<script>window.__pwned=1</script>"
PAYLOAD_IMG = '<img src=x onerror="window.__pwned=1">'
PAYLOAD = PAYLOAD_SCRIPT + " " + PAYLOAD_IMG


def test_analyst_flow_in_chromium(browser_page: Page, tmp_path: Path) -> None:
    page = browser_page
    home = tmp_path / "ws"
    home.mkdir()
    server = _serve(home, tmp_path / "server.log")
    url = next(server)
    try:
        page.goto(url)
        expect(page.get_by_text("Grid-Scale Battery Energy Storage").first).to_be_visible()
        settle(page)
        # Update now: the run is worked on by a background thread; the page polls it.
        page.get_by_role("button", name="Update now").click()
        review = page.get_by_role("button", name="Review", exact=True)
        expect(review).to_be_visible(timeout=90_000)
        expect(page.get_by_text("needs review")).to_be_visible()
        expect(page.get_by_role("button", name=re.compile(r"^Review run \d+$"))).to_be_visible()
        expect(page.get_by_role("button", name="Update now")).to_have_count(0)
        settle(page)
        review.click()
        page.wait_for_url("**/review")
        commit = page.get_by_role("button", name="Commit version")
        expect(commit).to_be_visible()
        settle(page)
        expect(page.locator("table.eg-diff").first).to_be_visible()
        expect(page.locator("del.eg-del, ins.eg-ins").first).to_be_visible()
        # The cost story: one line against starting over, the stage bars on request.
        expect(page.get_by_text(re.compile(r"^Saved vs starting over: "))).to_be_visible()
        expect(page.locator(".js-plotly-plot")).to_have_count(0)
        page.get_by_text("Cost and time by stage").click()
        expect(page.locator(".js-plotly-plot").first).to_be_visible()
        # Each changed claim is one plain sentence; its report sentence is marked "Before".
        claim = page.locator(".eg-claim-line").first
        expect(claim).to_contain_text(re.compile(r"→ .*\(source \[\d+\], \d{1,2} \w{3} → "))
        expect(page.locator("mark.eg-hl").first).to_be_visible()
        main = page.locator("[data-testid='stMain']").first.inner_text()
        leak = re.search(r"awaiting_review|\bNone\b|snapshot_id", main)
        assert not leak, main[max(0, leak.start() - 300) : leak.end() + 300]
        claims = "\n".join(page.locator(".eg-claim-line, .eg-claim-sentence").all_inner_texts())
        assert claims and not re.search(r"\|\s*---|^\s*#+ |\*\*|\]\(", claims, re.M), claims

        # a click that lands while a fragment redraws can be dropped: click_until_disabled
        click_until_disabled(page.get_by_role("button", name="Approve", exact=True).first)
        settle(page)
        click_until_disabled(page.get_by_role("button", name="Reject", exact=True).nth(1))
        settle(page)
        approve_all = page.get_by_role("button", name="Approve all pending")
        if approve_all.is_enabled():
            approve_all.click()
            settle(page)
        expect(page.get_by_text("decision: rejected")).to_have_count(1)
        page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
        expect(commit).to_be_enabled()
        commit.click()
        expect(page.get_by_text("Committed version 2.")).to_be_visible()

        # Report: the new version, a clickable citation, Markdown and PDF downloads.
        open_screen(page, url, "report", "Report")
        version_box = page.get_by_role("combobox", name="Version", exact=True)
        expect(version_box).to_have_value(re.compile(r"^version 2 · as of"))
        page.locator("a.eg-cite").first.click()
        expect(page.locator(".eg-refs li").first).to_be_visible()
        with page.expect_download() as md_download:
            page.get_by_role("button", name="Download Markdown").click()
        md = Path(md_download.value.path()).read_text(encoding="utf-8")
        assert md.startswith("# Grid-Scale Battery Energy Storage") and "## References" in md
        page.get_by_role("button", name="Prepare PDF").click()
        with page.expect_download() as pdf_download:
            page.get_by_role("button", name="Download PDF").click()
        pdf = Path(pdf_download.value.path()).read_bytes()
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:
            text = " ".join(p.get_text() for p in doc)
            pages = doc.page_count
            links = sum(len(p.get_links()) for p in doc)
        assert "Grid-Scale Battery Energy Storage" in text and "References" in text
        assert f"1 / {pages}" in text and f"{pages} / {pages}" in text  # page numbers
        assert links > 0  # each [n] is a link to its reference entry
        name = pdf_download.value.suggested_filename
        assert name.startswith("Grid-Scale Battery Energy Storage") and name.endswith(" — v2.pdf")
        title_words = re.findall(r"[\w-]+", md.splitlines()[0])
        assert all(w in title_words for w in re.findall(r"[\w-]+", name[: -len(" — v2.pdf")]))

        # History: four charts across the two versions.
        open_screen(page, url, "history", "History")
        expect(page.locator(".js-plotly-plot")).to_have_count(4)
        page.wait_for_timeout(500)  # let plotly finish drawing
        page.screenshot(path=str(tmp_path / "history.png"), full_page=True)
    finally:
        server.close()
    assert (tmp_path / "review.png").stat().st_size > 10_000
    assert (tmp_path / "history.png").stat().st_size > 10_000


def _plant_payloads(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run awaiting review whose proposal and evidence carry script payloads, and a
    source whose newest snapshot (title, text, claims) carries them too."""
    monkeypatch.setenv("EVERGREEN_HOME", str(home))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    from core.dates import parse_as_of
    from core.engine.update import begin_update
    from core.store.db import session_scope
    from core.store.models import PoolEntry, SectionProposal, Snapshot, UpdateRun
    from core.store.pool import pool_of
    from core.workspace import load_sample

    with session_scope() as session:
        report_id = load_sample(session)["report_id"]
    run_id = begin_update(report_id, as_of=parse_as_of("2026-04-15"))
    with session_scope() as session:
        entry: PoolEntry = pool_of(session, report_id)[0]
        snap = Snapshot(
            source_id=entry.source_id,
            title=f"Hostile page {PAYLOAD}",
            content=f"Body {PAYLOAD} end.",
            content_hash="x",
            as_of=parse_as_of("2026-04-15"),
            change_kind="material",
            similarity=0.91,
            reasons=[PAYLOAD],
            claim_diff=[{"kind": "modified", "before": "Status: Draft", "after": PAYLOAD}],
            run_id=run_id,
        )
        session.add(snap)
        session.flush()
        entry.latest_snapshot_id = snap.id
        entry.status = "material"
        session.add(entry)
        session.add(
            SectionProposal(
                run_id=run_id,
                key="technologies",
                action="revise",
                heading=f"Technologies {PAYLOAD}",
                level=2,
                order=1,
                old_text="Lithium iron phosphate dominates [1].",
                new_text=f"Lithium iron phosphate dominates [1]. {PAYLOAD}",
                rationale=f"Model said {PAYLOAD}",
                flags=[PAYLOAD],
                evidence=[
                    {
                        "marker": entry.marker,
                        "url": "javascript:window.__pwned=1",
                        "title": f"Evil {PAYLOAD}",
                        "kind": "material",
                        "similarity": 0.91,
                        "reasons": [PAYLOAD],
                        "claims": [{"before": "Status: Draft", "after": PAYLOAD}],
                        "old_date": "2026-01-15",
                        "new_date": "2026-04-15",
                    }
                ],
            )
        )
        run = session.get(UpdateRun, run_id)
        run.status = "awaiting_review"
        run.progress = f"awaiting review {PAYLOAD}"
        session.add(run)


def test_script_payloads_do_not_run(
    browser_page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = browser_page
    home = tmp_path / "ws"
    home.mkdir()
    _plant_payloads(home, monkeypatch)
    server = _serve(home, tmp_path / "server.log")
    url = next(server)
    try:
        open_screen(page, url, "review", "Review")
        expect(page.get_by_role("button", name="Commit version")).to_be_visible()
        expect(page.get_by_text(PAYLOAD_SCRIPT).first).to_be_visible()  # shown as text
        page.wait_for_timeout(500)
        assert page.evaluate("() => typeof window.__pwned") == "undefined"
        assert page.locator("a[href^='javascript:']").count() == 0
        page.screenshot(path=str(tmp_path / "review-xss.png"), full_page=True)

        open_screen(page, url, "evidence", "Evidence")
        expect(page.get_by_text(PAYLOAD_SCRIPT).first).to_be_visible()
        page.wait_for_timeout(500)
        assert page.evaluate("() => typeof window.__pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "evidence-xss.png"), full_page=True)
    finally:
        server.close()
