"""Time the Review screen as an analyst feels it: Playwright driving Debian's Chromium
against `streamlit run app.py` on a fresh copy of the sample workspace.

For each round it loads the sample, runs the first update (2026-04-15) so a run awaits
review, then measures in the browser:

- ``open``: from clicking "Review" in the sidebar (on the Reports screen) until
  "Commit version" is shown and Streamlit's running indicator is gone;
- ``approve`` / ``reject``: from the click until that button is disabled (the card shows
  its new decision) and the script run has finished (the running indicator is gone);
- ``save_edit``: from the click until the card says "(edited)", likewise.

With ``--floor`` it first times the same click on a one-button Streamlit fragment app
(``floor``): what any click costs on this machine with this method, the figure the
Review timings are to be read against.

Usage:  python scripts/ui_timing.py [--rounds 3] [--floor] [--json out.json]
Prints the median, minimum and maximum of each figure over the rounds (seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BUSY = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    port = _free_port()
    env = {**os.environ, "EVERGREEN_HOME": str(home)}
    for name in ("EVERGREEN_DB", "EVERGREEN_JOBS"):
        env.pop(name, None)
    server = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
            "--server.port", str(port), "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
        ],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _idle(page: object) -> None:
    page.wait_for_timeout(50)  # type: ignore[attr-defined]
    page.wait_for_function(BUSY, timeout=60_000)  # type: ignore[attr-defined]


def one_round(url: str, page: object) -> dict[str, float]:
    """The four timings of one fresh run awaiting review."""
    from playwright.sync_api import expect

    out: dict[str, float] = {}
    page.goto(f"{url}/")  # type: ignore[attr-defined]
    _idle(page)
    t0 = time.perf_counter()
    page.get_by_role("link", name="Review", exact=True).click()  # type: ignore[attr-defined]
    expect(page.get_by_role("button", name="Commit version")).to_be_visible(timeout=60_000)  # type: ignore[attr-defined]
    _idle(page)
    out["open"] = time.perf_counter() - t0

    approve = page.get_by_role("button", name="Approve", exact=True).first  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    approve.click()
    expect(approve).to_be_disabled(timeout=60_000)
    _idle(page)
    out["approve"] = time.perf_counter() - t0

    reject = page.get_by_role("button", name="Reject", exact=True).nth(1)  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    reject.click()
    expect(reject).to_be_disabled(timeout=60_000)
    _idle(page)
    out["reject"] = time.perf_counter() - t0

    page.get_by_text("Edit the new text").first.click()  # type: ignore[attr-defined]
    _idle(page)
    box = page.locator("textarea:visible").first  # type: ignore[attr-defined]
    box.fill(box.input_value() + " Edited by the timing script.")
    box.press("Control+Enter")
    _idle(page)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Save edit and approve").first.click()  # type: ignore[attr-defined]
    expect(page.get_by_text("(edited)").first).to_be_visible(timeout=60_000)  # type: ignore[attr-defined]
    _idle(page)
    out["save_edit"] = time.perf_counter() - t0
    return out


def floor(browser: object, clicks: int = 8) -> list[float]:
    """Seconds per click on a one-button fragment app (the machine's floor)."""
    from playwright.sync_api import expect

    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="eg-floor-") as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(FLOOR_APP, encoding="utf-8")
        with serve(Path(tmp), str(script)) as url:
            page = browser.new_context().new_page()  # type: ignore[attr-defined]
            page.goto(url)
            _idle(page)
            for n in range(clicks):
                button = page.get_by_role("button", name=f"Click {n}")
                t0 = time.perf_counter()
                button.click()
                expect(page.get_by_role("button", name=f"Click {n + 1}")).to_be_visible()
                _idle(page)
                times.append(time.perf_counter() - t0)
            page.context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--floor", action="store_true", help="time a one-button app first")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rounds: list[dict[str, float]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        floor_times = floor(browser) if args.floor else []
        for n in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="eg-ui-") as tmp:
                home = Path(tmp)
                prepare(home)
                with serve(home) as url:
                    context = browser.new_context(viewport={"width": 1400, "height": 2400})
                    rounds.append(one_round(url, context.new_page()))
                    context.close()
            print(f"round {n + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[-1].items()))
        browser.close()
    keys = ("open", "approve", "reject", "save_edit")
    summary = {
        k: {
            "median": round(statistics.median(r[k] for r in rounds), 3),
            "min": round(min(r[k] for r in rounds), 3),
            "max": round(max(r[k] for r in rounds), 3),
        }
        for k in keys
    }
    if floor_times:
        summary["floor"] = {
            "median": round(statistics.median(floor_times), 3),
            "min": round(min(floor_times), 3),
            "max": round(max(floor_times), 3),
        }
    for k, v in summary.items():
        print(f"{k:>10}: median {v['median']:.2f} s  (min {v['min']:.2f}, max {v['max']:.2f})")
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "summary": summary}, indent=2))


if __name__ == "__main__":
    main()
