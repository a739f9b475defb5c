"""Presentation helpers shared by the screens: styles, the report picker, run progress.

No business logic: numbers and texts come from the ``core.*_views`` read models. Any
HTML built here escapes its text (``core.app.view_text.esc``) before ``st.html`` shows it.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from core.app.services import report_rows
from core.app.view_text import esc
from core.domain.diffing import DIFF_CSS
from core.domain.labels import run_kind_label, run_status_label
from core.domain.untrusted import escape_all
from core.engine import jobs
from core.engine.audit import APP_USER, Actor
from core.errors import EvergreenError, RunBusyError
from core.store.db import session_scope

APP = Path(__file__).resolve().parents[1] / "app.py"  # the entry point: its navigation
REPORT_KEY = "eg_report"  # the report the analyst is looking at (all screens)
RUN_KEY = "eg_run"  # the run being followed or reviewed
VERSION_KEY = "eg_version"  # report id → the version the analyst picked to read
DRAWN_KEY = "eg_drawn"  # how many times this tab drew a whole screen (fragments aside)

ACTION_COLORS = {
    "keep": "#6b7280",
    "revise": "#b45309",
    "extend": "#1d4ed8",
    "add": "#15803d",
    "remove": "#b91c1c",
}
KIND_COLORS = {
    "unchanged": "#6b7280",
    "minor": "#0e7490",
    "material": "#b45309",
    "changed": "#b45309",
    "gone": "#b91c1c",
    "new": "#15803d",
    "imported": "#6b7280",
    "error": "#b91c1c",
}

CSS = (
    DIFF_CSS
    + """
.eg-badge { display: inline-block; padding: 0.05em 0.55em; border-radius: 0.8em;
  font-size: 0.8em; font-weight: 600; color: #fff; margin-right: 0.4em; }
.eg-card-head { font-size: 1.1rem; font-weight: 600; margin: 0.1em 0 0.2em 0; }
.eg-muted { color: #6b7280; font-size: 0.85em; }
.eg-url { color: #6b7280; font-size: 0.75em; overflow-wrap: anywhere; }
.eg-kind { display: inline-block; padding: 0 0.45em; border-radius: 0.6em; color: #fff;
  font-size: 0.8em; }
table.eg-ev { width: 100%; border-collapse: collapse; font-size: 0.9em; table-layout: fixed; }
table.eg-ev th, table.eg-ev td { border: 1px solid #d0d7de; padding: 0.3em 0.5em;
  vertical-align: top; text-align: left; overflow-wrap: anywhere; }
table.eg-ev th.eg-w-n { width: 3.2em; } table.eg-ev th.eg-w-s { width: 24%; }
table.eg-ev th.eg-w-d { width: 8.5em; } table.eg-ev th.eg-w-x { width: 6em; }
table.eg-ev th.eg-w-k { width: 9em; }
table.eg-ev details summary { cursor: pointer; color: #1d4ed8; }
table.eg-ev th { background: #f6f8fa; }
table.eg-ev ul { margin: 0; padding-left: 1.1em; }
.eg-report h1 { font-size: 1.8rem; } .eg-report h2 { font-size: 1.4rem; margin-top: 1em; }
.eg-report h3 { font-size: 1.15rem; }
.eg-report table { border-collapse: collapse; } .eg-report td, .eg-report th {
  border: 1px solid #d0d7de; padding: 0.2em 0.5em; }
.eg-refs { padding-left: 0; list-style: none; } .eg-refs li { margin: 0.3em 0; }
.eg-refs li:target { background: #fff7d6; }
a.eg-cite { text-decoration: none; font-weight: 600; }
.eg-question { color: #374151; }
.eg-flag { display: inline-block; font-size: 0.78em; padding: 0 0.4em; border-radius: 0.4em;
  margin: 0 0.15em; cursor: help; line-height: 1.5; }
.eg-flag-stale { background: #fef3c7; color: #92400e; }
.eg-flag-unsupported { background: #f3e8ff; color: #6b21a8; }
.eg-flag-ok { background: #dcfce7; color: #166534; cursor: default; }
.eg-flag-list { font-size: 0.9em; color: #374151; }
.eg-version-line { color: #4b5563; font-style: italic; margin-top: -0.4em; }
ul.eg-claims { margin: 0.2em 0 0.4em 0; padding-left: 1.1em; }
ul.eg-claims li { margin: 0.35em 0; }
.eg-claim-sentence { color: #4b5563; font-size: 0.9em; }
ul.eg-claims details summary { cursor: pointer; color: #1d4ed8; font-size: 0.85em; }
.eg-p-del { background: #fde8e8; color: #9b1c1c; text-decoration: line-through; }
.eg-p-ins { background: #e6f6ea; color: #14532d; text-decoration: none; }
.eg-stale-count { color: #92400e; font-weight: 600; }
"""
    + "".join(f".eg-a-{k} {{ background: {c}; }}\n" for k, c in ACTION_COLORS.items())
    + "".join(f".eg-kind-{k} {{ background: {c}; }}\n" for k, c in KIND_COLORS.items())
)


def actor() -> Actor:
    """Who is acting in this browser session, for the audit trail: the signed-in user
    (``[auth]`` configured), else "app user" (an app without a login knows no one)."""
    user = st.user
    if user.get("is_logged_in"):
        name = user.get("email") or user.get("name")
        if name:
            return Actor(str(name), "app")
    return APP_USER


def style() -> None:
    """Every screen starts here: through the app's own navigation, wide, with the app's
    CSS (a style-only st.html takes no space on the page)."""
    through_the_app()
    st.set_page_config(layout="wide")
    st.html(f"<style>{CSS}</style>")
    st.session_state[DRAWN_KEY] = st.session_state.get(DRAWN_KEY, 0) + 1


def through_the_app() -> None:
    """Run the screen through ``app.py``'s navigation. Until ``st.navigation`` has run once
    in the server's process, Streamlit takes a ``pages/`` folder for an old-style page
    folder: a first visit straight to a screen's address after a restart (a link from a
    message, a bookmark) ran that screen alone — every file of ``pages/`` in the sidebar,
    helpers included, no sample loading, no secrets. The old-style mode is switched off
    and the app is run in its place (in the same run: a click that brought the screen here
    is not lost)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        runpy.run_path(str(APP), run_name="__main__")  # its navigation runs this screen
        st.stop()  # the screen has been drawn, through the app


def badge_html(text: str, kind: str) -> str:
    return f'<span class="eg-badge eg-a-{esc(kind)}">{esc(text)}</span>'


def show_error(exc: BaseException) -> None:
    text = str(exc) if isinstance(exc, EvergreenError) else f"{type(exc).__name__}: {exc}"
    st.error(escape_all(text))  # a message may quote a page or a model: no link, no image
    if isinstance(exc, RunBusyError):  # the way on is a screen of this app, not a command
        review_link(exc.report_id, exc.run_id)


def review_link(report_id: int, run_id: int, label: str | None = None) -> None:
    """A link to one run on the Review screen (``?report=…&run=…``, read by ``deep_link``)."""
    st.page_link(
        "pages/review.py",
        label=label or f"Open run {run_id} on the Review screen",
        icon=":material/rate_review:",
        query_params={"report": str(report_id), "run": str(run_id)},
    )


def deep_link() -> None:
    """Take ``?run=…`` from the address into the screen's choice, once (``?report=…`` is
    taken by ``pick_report``, on every screen)."""
    value = st.query_params.get("run")
    if value is not None:
        if str(value).isdigit():
            st.session_state[RUN_KEY] = int(value)
        del st.query_params["run"]


def run_action(action: Callable[[int], Any], run_id: int) -> None:
    """Cancel, resume or abandon a run; the screen redraws, or says why it could not."""
    try:
        action(run_id)
    except EvergreenError as exc:
        show_error(exc)
    else:
        st.rerun(scope="app")


def guarded(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an EvergreenError becomes a red message instead of a traceback."""
    try:
        return fn()
    except EvergreenError as exc:
        show_error(exc)
        return None


def pinned_version(report_id: int) -> int | None:
    """The version of ``report_id`` the analyst picked to read in this tab, if any: each
    report keeps its own (a version number of one report never selects another's)."""
    return st.session_state.get(VERSION_KEY, {}).get(report_id)


def version_picker(report_id: int) -> str:
    """The key of the Report screen's version picker for ``report_id``."""
    return f"version_pick_{report_id}"


def pin_version(report_id: int, number: int | None, *, elsewhere: bool = False) -> None:
    """Read ``number`` of ``report_id`` next (None: its latest). ``elsewhere``: picked on
    another screen ("Read the version"), so the Report screen's picker starts from it."""
    pins = dict(st.session_state.get(VERSION_KEY, {}))
    if number is None:
        pins.pop(report_id, None)
    else:
        pins[report_id] = number
    st.session_state[VERSION_KEY] = pins
    if elsewhere:
        st.session_state.pop(version_picker(report_id), None)


def unpin_versions() -> None:
    """Every report reads its latest version next (after a commit: the new one), its
    Report-screen picker starting afresh."""
    for report_id in st.session_state.pop(VERSION_KEY, {}):
        st.session_state.pop(version_picker(report_id), None)


def pick_report(label: str = "Report", *, key: str) -> int | None:
    """The report selector every screen shares; remembers the choice across screens. A
    link ``?report=R`` opens the screen on report R (taken once, then left to the picker)."""
    with session_scope() as session:
        rows = report_rows(session)
    if not rows:
        st.info("No reports yet: create or import one on the Reports screen.")
        return None
    ids = [r["id"] for r in rows]
    titles = {r["id"]: f"{r['id']} · {r['title']}" for r in rows}
    linked = st.query_params.get("report")  # a link to this screen for one report
    if linked is not None:
        if str(linked).isdigit() and int(linked) in ids:
            st.session_state[REPORT_KEY] = int(linked)
            st.session_state.pop(key, None)  # the picker starts from the link
        del st.query_params["report"]
    current = st.session_state.get(REPORT_KEY)
    index = ids.index(current) if current in ids else 0

    def remember() -> None:
        st.session_state[REPORT_KEY] = st.session_state[key]

    choice = st.selectbox(
        label, ids, index=index, format_func=lambda i: titles[i], key=key, on_change=remember
    )
    st.session_state[REPORT_KEY] = choice
    return choice


def progress_line(run: dict[str, Any]) -> None:
    """One run's live state: status, progress text, and any error."""
    status = run_status_label(run["status"])
    kind = run_kind_label(run["kind"]).lower()
    text = f"Run {run['id']} ({kind}, as of {run['as_of']}): **{status.lower()}**"
    if run.get("progress") and run["progress"].lower() != status.lower():
        st.markdown(text + " — " + _md_escape(run["progress"]))
    else:
        st.markdown(text)
    if run.get("error"):
        st.error(escape_all(run["error"]))


def _md_escape(text: str) -> str:
    """Text shown through st.markdown without being read as Markdown."""
    out = []
    for ch in str(text):
        out.append("\\" + ch if ch in "\\`*_{}[]()#+-.!|<>~$" else ch)
    return "".join(out)


md_escape = _md_escape


WATCH_EVERY = 3.0  # seconds between a screen's looks at the runs (a run started elsewhere)


@st.fragment(run_every=WATCH_EVERY)
def watch_runs(report_id: int | None = None) -> None:
    """Redraw the screen when a run of the report (or of any report) starts, finishes or
    is cancelled elsewhere: in another tab, by a worker, from cron or the CLI."""
    key = f"eg_runs_seen:{report_id}"
    try:
        now = jobs.runs_signature(report_id)
    except EvergreenError:
        return  # a damaged database is reported by the screen itself
    drawn = st.session_state.get(DRAWN_KEY, 0)
    seen = st.session_state.get(key)
    st.session_state[key] = (drawn, now)
    if seen is not None and seen[0] == drawn and seen[1] != now:  # a poll, not a redraw
        st.rerun(scope="app")
