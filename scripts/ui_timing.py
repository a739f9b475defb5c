"""Time the Review screen as an analyst feels it: Playwright driving Debian's Chromium
against `streamlit run app.py` on a fresh copy of the sample workspace.

For each round it loads the sample, runs the first update (2026-04-15) so a run awaits
review, then measures in the browser:

- ``open``: from clicking "Review" in the sidebar (on the Reports screen) until
  "Commit version" is shown and Streamlit's running indicator is gone;
- ``approve`` / ``reject``: from the click until that button is disabled (the card shows
  its new decision) and the script run has finished (the running indicator is gone);
- ``save_edit``: from the click until the card says "(edited)", likewise.

Each click is timed by two clocks at once:

- ``old``: ``time.perf_counter()`` around the click and Playwright's ``expect`` (and a
  50 ms pause, then no running indicator) — how this script measured before. ``expect``
  polls at growing intervals (100, 250, 500, 1000 ms), so this figure is rounded up to
  the next poll;
- ``new``: the page's own clock — ``performance.now()`` at the click's ``pointerdown``
  to the first animation frame that shows the result with the script run over
  (``data-test-script-state="notRunning"`` on the app root, no running indicator in the
  DOM). ``shown`` is the first frame with the result, whether or not the run is over.

With ``--floor`` it first times the same click on a one-button Streamlit fragment app
(``floor``): what any click costs on this machine, the figure the Review timings are to
be read against.

Usage:  python scripts/ui_timing.py [--rounds 3] [--floor] [--json out.json]
Prints the median, minimum and maximum of each figure and clock over the rounds (seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the browser tests' helpers serve the app here too
from tests.helpers.browser import serve as serve_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
BUSY = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def prepare(home: Path) -> None:
    """The sample, updated to its first snapshot date: a run awaiting review."""
    env = {**os.environ, "EVERGREEN_HOME": str(home), "EVERGREEN_JOBS": "sync"}
    env.pop("EVERGREEN_DB", None)
    for args in (["demo"], ["update", "1", "--as-of", "2026-04-15"]):
        subprocess.run(
            [sys.executable, "-m", "core.cli", *args],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip


FLOOR_APP = """
import streamlit as st

@st.fragment
def one_button() -> None:
    n = st.session_state.get("n", 0)
    if st.button(f"Click {n}", key="b"):
        st.session_state["n"] = n + 1
        st.rerun(scope="fragment")

st.title("Floor")
one_button()
"""


@contextmanager
def serve(home: Path, script: str = "app.py") -> Iterator[str]:
    """The app (or ``script``) served on ``home``'s workspace: the browser tests' server."""
    server = serve_app(home, home / "streamlit.log", script)
    try:
        yield next(server)
    finally:
        server.close()


def _idle(page: object) -> None:
    page.wait_for_timeout(50)  # type: ignore[attr-defined]
    page.wait_for_function(BUSY, timeout=60_000)  # type: ignore[attr-defined]


# -- the in-page clock -------------------------------------------------------------------------
# Playwright's ``expect`` polls its condition at growing intervals (100, 250, 500, 1000 ms), so
# a figure taken from outside the page is rounded up to the next poll. The page measures
# itself instead: a capturing ``pointerdown`` listener notes ``performance.now()`` at the
# click, then a requestAnimationFrame loop checks every frame for the result and for the
# script run being over ("notRunning" on the app root, no running indicator in the DOM).
ARM = """() => {
  const ready = %s;
  const idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid="stStatusWidget"]');
  };
  const rec = window.__egTiming = {start: null, shown: null, done: null};
  const tick = () => {
    const now = performance.now();
    const ok = ready();
    if (ok && rec.shown === null) rec.shown = now;
    if (ok && idle()) { rec.done = now; return; }
    requestAnimationFrame(tick);
  };
  document.addEventListener('pointerdown', () => {
    rec.start = performance.now();
    requestAnimationFrame(tick);
  }, {capture: true, once: true});
}"""
RESULT = "() => window.__egTiming && window.__egTiming.done !== null ? window.__egTiming : null"


def _button(text: str, nth: int = 0) -> str:
    """JS: the nth button whose text is ``text`` (or undefined)."""
    return (
        f"[...document.querySelectorAll('button')]"
        f".filter(b => b.textContent.trim() === {json.dumps(text)})[{nth}]"
    )


SHOWN = {  # what each figure waits for, as a JS predicate on the page
    "open": f"() => !!{_button('Commit version')}",
    "save_edit": "() => (document.querySelector('[data-testid=\"stMain\"]') || {})"
    ".textContent?.includes('(edited)') || false",
}
INDEX = "(el) => [...document.querySelectorAll('button')].indexOf(el)"


def _disabled(button: Any) -> str:
    """JS: the button the locator ``button`` names (by its place among the page's
    buttons, which a decision leaves as it is) is disabled."""
    index = int(button.evaluate(INDEX))
    return f"() => !!(document.querySelectorAll('button')[{index}] || {{}}).disabled"


def _arm(page: object, shown: str) -> None:
    page.evaluate(ARM % shown)  # type: ignore[attr-defined]


def _in_page(page: object) -> dict[str, float]:
    """The in-page figures of the last armed click: ``shown`` (the result is on screen)
    and ``done`` (the result on screen and the script run over), seconds."""
    handle = page.wait_for_function(RESULT, timeout=60_000, polling=100)  # type: ignore[attr-defined]
    rec = handle.json_value()
    return {
        "shown": (rec["shown"] - rec["start"]) / 1000,
        "done": (rec["done"] - rec["start"]) / 1000,
    }


class Timer:
    """One click timed by both clocks: ``old`` (perf_counter around Playwright's expect
    polling, as this script measured before) and the page's own (``new``)."""

    def __init__(self, page: object) -> None:
        self.page = page
        self.old: dict[str, float] = {}
        self.new: dict[str, float] = {}
        self.shown: dict[str, float] = {}

    def time(self, name: str, click: Any, wait: Any, shown: str | None = None) -> None:
        _arm(self.page, shown or SHOWN[name])
        t0 = time.perf_counter()
        click()
        wait()
        _idle(self.page)
        self.old[name] = time.perf_counter() - t0
        figures = _in_page(self.page)
        self.new[name] = figures["done"]
        self.shown[name] = figures["shown"]


def one_round(url: str, page: object) -> dict[str, dict[str, float]]:
    """The four timings of one fresh run awaiting review, by both clocks."""
    from playwright.sync_api import expect

    timer = Timer(page)
    page.goto(f"{url}/")  # type: ignore[attr-defined]
    _idle(page)
    page.wait_for_timeout(1_000)  # type: ignore[attr-defined]
    commit = page.get_by_role("button", name="Commit version")  # type: ignore[attr-defined]
    timer.time(
        "open",
        page.get_by_role("link", name="Review", exact=True).click,  # type: ignore[attr-defined]
        lambda: expect(commit).to_be_visible(timeout=60_000),
    )
    page.wait_for_timeout(500)  # type: ignore[attr-defined]

    approve = page.get_by_role("button", name="Approve", exact=True).first  # type: ignore[attr-defined]
    timer.time(
        "approve",
        approve.click,
        lambda: expect(approve).to_be_disabled(timeout=60_000),
        _disabled(approve),
    )
    page.wait_for_timeout(500)  # type: ignore[attr-defined]

    reject = page.get_by_role("button", name="Reject", exact=True).nth(1)  # type: ignore[attr-defined]
    timer.time(
        "reject",
        reject.click,
        lambda: expect(reject).to_be_disabled(timeout=60_000),
        _disabled(reject),
    )
    page.wait_for_timeout(500)  # type: ignore[attr-defined]

    page.get_by_text("Edit the new text").first.click()  # type: ignore[attr-defined]
    _idle(page)
    box = page.locator("textarea:visible").first  # type: ignore[attr-defined]
    box.fill(box.input_value() + " Edited by the timing script.")
    box.press("Control+Enter")
    _idle(page)
    page.wait_for_timeout(500)  # type: ignore[attr-defined]
    edited = page.get_by_text("(edited)").first  # type: ignore[attr-defined]
    timer.time(
        "save_edit",
        page.get_by_role("button", name="Save edit and approve").first.click,  # type: ignore[attr-defined]
        lambda: expect(edited).to_be_visible(timeout=60_000),
    )
    return {"old": timer.old, "new": timer.new, "shown": timer.shown}


def floor(browser: object, clicks: int = 8) -> dict[str, list[float]]:
    """Seconds per click on a one-button fragment app (the machine's floor), by both
    clocks."""
    from playwright.sync_api import expect

    out: dict[str, list[float]] = {"old": [], "new": [], "shown": []}
    with tempfile.TemporaryDirectory(prefix="eg-floor-") as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(FLOOR_APP, encoding="utf-8")
        with serve(Path(tmp), str(script)) as url:
            page = browser.new_context().new_page()  # type: ignore[attr-defined]
            page.goto(url)
            _idle(page)
            for n in range(clicks):
                button = page.get_by_role("button", name=f"Click {n}")
                _arm(page, f"() => !!{_button(f'Click {n + 1}')}")
                t0 = time.perf_counter()
                button.click()
                expect(page.get_by_role("button", name=f"Click {n + 1}")).to_be_visible()
                _idle(page)
                out["old"].append(time.perf_counter() - t0)
                figures = _in_page(page)
                out["new"].append(figures["done"])
                out["shown"].append(figures["shown"])
                page.wait_for_timeout(300)
            page.context.close()
    return out


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


KEYS = ("open", "approve", "reject", "save_edit")
CLOCKS = ("old", "new", "shown")


def _round_line(r: dict[str, dict[str, float]]) -> str:
    return ", ".join(f"{k} {r['new'][k]:.3f} (old {r['old'][k]:.2f})" for k in KEYS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--floor", action="store_true", help="time a one-button app first")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rounds: list[dict[str, dict[str, float]]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        floor_times = floor(browser) if args.floor else {}
        for n in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="eg-ui-") as tmp:
                home = Path(tmp)
                prepare(home)
                with serve(home) as url:
                    context = browser.new_context(viewport={"width": 1400, "height": 2400})
                    rounds.append(one_round(url, context.new_page()))
                    context.close()
            print(f"round {n + 1}: " + _round_line(rounds[-1]))
        browser.close()
    summary = {clock: {k: _spread([r[clock][k] for r in rounds]) for k in KEYS} for clock in CLOCKS}
    for clock in CLOCKS:
        if floor_times:
            summary[clock]["floor"] = _spread(floor_times[clock])
    for clock, figures in summary.items():
        print(f"-- {clock}")
        for k, v in figures.items():
            print(f"{k:>10}: median {v['median']:.3f} s  (min {v['min']:.3f}, max {v['max']:.3f})")
    if args.json:
        payload = {"rounds": rounds, "floor": floor_times, "summary": summary}
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
