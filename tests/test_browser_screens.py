"""The analyst's screens in a real browser (Playwright driving Debian's Chromium against
`streamlit run app.py`): what another tab or the CLI did shows up without a reload,
"Update now" gives way to "Review run N", no internal name is shown, and the dead ends
are gone (a future as-of, a duplicate import, archive and delete).

Runs (never skips) under CI=true; locally it skips only when Chromium is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tests.helpers.browser import (
    ROOT,
    click_until_disabled,
    configure_expect,
    evergreen,
    open_screen,
    require_chromium,
    sample_home,
    serve,
    settle,
)

require_chromium()
configure_expect()

from playwright.sync_api import Page, expect  # noqa: E402

SAMPLE_REPORT = ROOT / "data" / "sample" / "report.md"
INTERNAL = re.compile(r"awaiting_review|\bNone\b|snapshot_id|change_kind")
REDRAWN = 20_000  # ms: a screen polls every few seconds; allow for a loaded machine


def visible_text(page: Page) -> str:
    return page.locator("section.main, [data-testid='stMain']").first.inner_text()


def test_other_tabs_and_the_cli_are_reflected_without_a_reload(
    open_page: Callable[[], Page], tmp_path: Path
) -> None:
    home = sample_home(tmp_path)
    server = serve(home, tmp_path / "server.log")
    url = next(server)
    a, b = open_page(), open_page()
    try:
        a.goto(url)
        expect(a.get_by_role("button", name="Update now")).to_be_visible()
        settle(a)
        # An update started from the command line: tab A shows it, unreloaded.
        evergreen(home, "update", "1", "--as-of", "2026-04-15")
        review_run = a.get_by_role("button", name=re.compile(r"^Review run \d+$"))
        expect(review_run).to_be_visible(timeout=REDRAWN)
        expect(a.get_by_role("button", name="Update now")).to_have_count(0)
        assert not INTERNAL.search(visible_text(a))

        # Both tabs on Review; a decision in B shows in A.
        review_run.click()
        a.wait_for_url("**/review")
        expect(a.get_by_role("button", name="Commit version")).to_be_visible()
        settle(a)
        open_screen(b, url, "review", "Review")
        approve_b = b.get_by_role("button", name="Approve", exact=True).first
        click_until_disabled(approve_b)
        approve_a = a.get_by_role("button", name="Approve", exact=True).first
        expect(approve_a).to_be_disabled(timeout=REDRAWN)
        assert not INTERNAL.search(visible_text(a))

        # B commits; A says so on its own.
        b.get_by_role("button", name="Approve all pending").click()
        settle(b)
        b.get_by_role("button", name="Commit version").click()
        expect(b.get_by_text("Committed version 2.")).to_be_visible()
        expect(a.get_by_text("This run was committed as version 2.")).to_be_visible(timeout=REDRAWN)
        expect(a.get_by_role("button", name="Commit version")).to_have_count(0)
        assert not INTERNAL.search(visible_text(a))
        a.screenshot(path=str(tmp_path / "review-other-tab.png"), full_page=True)
    finally:
        server.close()


def test_no_dead_ends_in_the_reports_screen(browser_page: Page, tmp_path: Path) -> None:
    page = browser_page
    home = tmp_path / "ws"
    home.mkdir()
    server = serve(home, tmp_path / "server.log")
    url = next(server)
    try:
        page.goto(url)
        expect(page.get_by_text("Grid-Scale Battery Energy Storage").first).to_be_visible()
        settle(page)
        page.get_by_text("New report", exact=True).click()
        page.get_by_role("tab", name="Import a Markdown report").click()
        page.locator("input[type=file]").set_input_files(str(SAMPLE_REPORT))
        page.get_by_label("The question it answers").fill("What is new in grid batteries?")
        page.get_by_label("As of (YYYY-MM-DD, empty: now)").fill("2099-01-01")
        page.get_by_label("As of (YYYY-MM-DD, empty: now)").press("Enter")
        settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        expect(page.get_by_text(re.compile("is in the future"))).to_be_visible()
        # The same file again: a warning and a choice, not a silent second copy.
        page.get_by_label("As of (YYYY-MM-DD, empty: now)").fill("")
        page.get_by_label("As of (YYYY-MM-DD, empty: now)").press("Enter")
        settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        expect(page.get_by_role("button", name="Import anyway")).to_be_visible()
        page.get_by_role("button", name="Don't import").click()
        settle(page)
        expect(page.get_by_role("button", name="Import anyway")).to_have_count(0)

        # Archive hides the report and keeps it; delete asks first, then removes it.
        page.get_by_text("Rebuild, archive or delete").first.click()
        expect(page.get_by_role("button", name="Rebuild from scratch")).to_be_visible()
        page.get_by_role("button", name="Archive", exact=True).click()
        expect(page.get_by_text(re.compile(r"Archived report 1"))).to_be_visible()
        expect(page.get_by_role("button", name="Update now")).to_have_count(0)
        page.get_by_text(re.compile(r"Show archived reports \(1\)")).click()
        expect(page.get_by_role("button", name="Unarchive")).to_be_visible()
        page.get_by_role("button", name="Delete …").click()
        expect(page.get_by_text(re.compile("cannot be undone"))).to_be_visible()
        page.get_by_role("button", name="Delete for good").click()
        expect(page.get_by_text(re.compile(r"Deleted report 1"))).to_be_visible()
        assert not INTERNAL.search(visible_text(page))
    finally:
        server.close()


def test_a_first_visit_straight_to_a_screen_goes_through_the_app(
    open_page: Callable[[], Page], tmp_path: Path
) -> None:
    """A link to a run (as the app's messages give) opened first thing after the server
    starts: the screen comes through app.py's navigation — its six screens in the
    sidebar, not every file of pages/ — and opens the linked run."""
    home = sample_home(tmp_path, awaiting_review=True)
    server = serve(home, tmp_path / "server.log")
    url = next(server)
    page = open_page()
    try:
        page.goto(f"{url}/review?report=1&run=2")
        expect(page.get_by_role("button", name="Commit version")).to_be_visible(timeout=REDRAWN)
        nav = page.get_by_test_id("stSidebarNav")
        for screen in ("Reports", "Report", "Review", "Evidence", "History", "Settings"):
            expect(nav.get_by_role("link", name=re.compile(rf"{screen}$"))).to_be_visible()
        shown = nav.inner_text().split()
        assert not {"app", "cards", "costs", "shared"} & set(shown), shown
    finally:
        server.close()


def test_with_a_login_configured_no_screen_shows_before_signing_in(
    open_page: Callable[[], Page], tmp_path: Path
) -> None:
    """``[auth]`` in the secrets Streamlit reads: a browser that has not signed in gets
    the sign-in page at every address — the app's root, a screen, a run's link — and
    not one report title, button or screen name besides it."""
    home = sample_home(tmp_path, awaiting_review=True)
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:8501/oauth2callback"\n'
        'cookie_secret = "a-cookie-secret-for-the-test"\n'
        'client_id = "evergreen"\n'
        'client_secret = "not-a-real-secret"\n'
        'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    server = serve(home, tmp_path / "server.log", options=["--secrets.files", str(secrets)])
    url = next(server)
    page = open_page()
    try:
        for address in ("", "/review?report=1&run=2", "/report?report=1", "/settings"):
            page.goto(f"{url}{address}")
            expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=REDRAWN)
            text = page.locator("[data-testid='stApp']").inner_text()
            assert "Grid-Scale" not in text and "Commit version" not in text, address
            for screen in ("Review", "Evidence", "History", "Settings"):
                assert screen not in text.split(), (address, screen)
    finally:
        server.close()


def _choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option).first.click()
    settle(page)


def test_switching_reports_never_shows_another_report_s_version(
    open_page: Callable[[], Page], tmp_path: Path
) -> None:
    """Report 1 has versions 1–3, report 2 only version 1. Read report 2 (its version 1),
    switch to report 1: its latest, version 3 — not "version 1", the number just read —
    and back; a link ``?report=R`` opens Evidence and History on report R."""
    home = sample_home(tmp_path)
    for as_of in ("2026-04-15", "2026-07-15"):
        evergreen(home, "update", "1", "--as-of", as_of, "--approve-all")
    evergreen(home, "import-report", str(SAMPLE_REPORT), "--query", "Storage?",
              "--as-of", "2026-01-15", "--allow-duplicate")  # fmt: skip
    server = serve(home, tmp_path / "server.log")
    url = next(server)
    page = open_page()
    try:
        page.goto(f"{url}/report?report=2")
        version = page.get_by_role("combobox", name="Version")
        expect(version).to_have_value("version 1 · as of 2026-01-15", timeout=REDRAWN)
        _choose(page, "Report", "1 · ")
        expect(version).to_have_value("version 3 · as of 2026-07-15")
        _choose(page, "Version", "version 2 · as of 2026-04-15")
        _choose(page, "Report", "2 · ")
        expect(version).to_have_value("version 1 · as of 2026-01-15")
        _choose(page, "Report", "1 · ")
        expect(version).to_have_value("version 2 · as of 2026-04-15")  # its own pick
        for screen, title in (("evidence", "Evidence"), ("history", "History")):
            page.goto(f"{url}/{screen}?report=2")
            expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
            picker = page.get_by_role("combobox", name="Report")
            expect(picker).to_have_value(re.compile(r"^2 · "))
    finally:
        server.close()
