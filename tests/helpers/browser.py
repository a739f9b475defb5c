"""Driving the app in a real browser: Debian's Chromium through Playwright against
`streamlit run app.py` on a workspace of the test's own.

A module of browser tests calls ``require_chromium()`` first: under CI=true a missing
Chromium is an error (the tests must run); locally the module is skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1400, "height": 2400}


def require_chromium() -> None:
    if Path(CHROMIUM).exists() or shutil.which("chromium"):
        return
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but Chromium is missing: .ci/run installs it with apt-get.")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)


def configure_expect() -> None:
    """Streamlit reruns a whole page per click; on a loaded 2-core machine that can take
    longer than Playwright's 5 s default, so every expectation waits up to 30 s."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)


def evergreen(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI on ``home``'s workspace, in this process (runs finish before it returns);
    raises CalledProcessError if it fails."""
    from core.store.db import dispose_engine
    from tests.conftest import run_cli  # lazy: scripts/ui_timing.py imports this module

    done = run_cli(home, *args, env={"EVERGREEN_JOBS": "sync", "EVERGREEN_DB": None})
    dispose_engine(f"sqlite:///{home / 'evergreen.db'}")  # as a command's exit closes them
    done.check_returncode()
    return done


def sample_home(tmp_path: Path, *, awaiting_review: bool = False) -> Path:
    """A workspace holding the sample; with ``awaiting_review``, its first update (to
    2026-04-15) waits for review."""
    home = tmp_path / "ws"
    home.mkdir()
    evergreen(home, "demo")
    if awaiting_review:
        evergreen(home, "update", "1", "--as-of", "2026-04-15")
    return home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(
    home: Path, log: Path, script: str = "app.py", options: Sequence[str] = ()
) -> Iterator[str]:
    """`streamlit run app.py` (or another ``script``) on ``home``'s workspace with
    background workers, and Streamlit ``options`` (``--secrets.files``, …); yields its URL
    once healthy (a generator: ``next()`` it, ``close()`` it to stop the server). Also
    what ``scripts/ui_timing.py`` measures with."""
    port = _free_port()
    env = {**os.environ, "EVERGREEN_HOME": str(home)}
    for name in ("EVERGREEN_DB", "EVERGREEN_CORPORA", "EVERGREEN_JOBS"):
        env.pop(name, None)  # the real thing: background workers
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", script,
                "--server.headless", "true",
                "--server.port", str(port),
                "--server.address", "127.0.0.1",
                "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none",
                *options,
            ],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log.read_text()}")
                time.sleep(0.2)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


def new_page(browser: Any) -> Any:
    """A page of its own context (a tab with its own Streamlit session)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    return page


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium per test module; each test works in contexts of its own
    (``open_page``, ``browser_page``), closed when it ends. Not one per session: while
    Playwright's sync API is open, its event loop counts as running in the thread, and
    every later ``asyncio.run`` there fails ("cannot be called from a running event
    loop": the queue's workers, crawl4ai)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Callable[[], Any]]:
    """Opens pages of contexts of their own (tabs with their own Streamlit sessions) in
    the session's Chromium; every one is closed when the test ends."""
    contexts: list[Any] = []

    def make() -> Any:
        page = new_page(chromium)
        contexts.append(page.context)
        return page

    try:
        yield make
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def browser_page(open_page: Callable[[], Any]) -> Any:
    return open_page()


def settle(page: Any) -> None:
    """Wait until the script run triggered by the last action has finished."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000
    )


def click_until_disabled(button: Any, *, patience: float = 5_000) -> int:
    """Click a decision button until it shows the decision (disabled); returns the clicks
    it took. Streamlit sometimes drops a click that lands while another fragment of the
    page is redrawing (seen here about one time in five with the Review polls running in
    a second tab): the analyst clicks again, and so does this — at most three times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    for clicks in (1, 2):
        button.click()
        try:
            expect(button).to_be_disabled(timeout=patience)
            return clicks
        except (AssertionError, PlaywrightTimeout):
            continue
    button.click()
    expect(button).to_be_disabled()
    return 3


def open_screen(page: Any, url: str, path: str, title: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/{path}")
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    settle(page)
