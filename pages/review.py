"""Review: one card per section of a run awaiting review — diff, evidence, decision —
cost meters against a from-scratch rebuild, and "Commit version"."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.app.run_views import run_info, runs_of
from core.app.view_text import esc
from core.domain.labels import action_label, change_kind_label, run_kind_label, run_status_label
from core.engine import jobs
from core.errors import EvergreenError
from core.states import RunKind, RunStatus
from core.store.db import session_scope
from pages._cards import sections
from pages._costs import cost_meters
from pages._shared import (
    REPORT_KEY,
    RUN_KEY,
    badge_html,
    deep_link,
    pick_report,
    pin_version,
    progress_line,
    run_action,
    show_error,
    style,
    watch_runs,
)


def pick_run(report_id: int) -> dict[str, Any] | None:
    with session_scope() as session:
        runs = [r for r in runs_of(session, report_id) if r["kind"] != RunKind.IMPORT]
    if not runs:
        st.info("This report has no runs to review yet: use “Update now” on the Reports screen.")
        return None
    ids = [r["id"] for r in runs]
    labels = {
        r["id"]: f"Run {r['id']} · {run_kind_label(r['kind'])} · "
        f"{run_status_label(r['status']).lower()} · as of {r['as_of']}"
        for r in runs
    }
    wanted = st.session_state.get(RUN_KEY)
    if wanted not in ids:  # default: the open run, else the newest
        wanted = next(
            (
                r["id"]
                for r in runs
                if r["status"]
                in (RunStatus.AWAITING_REVIEW, RunStatus.RUNNING, RunStatus.INTERRUPTED)
            ),
            ids[0],
        )

    def remember() -> None:
        st.session_state[RUN_KEY] = st.session_state["review_run_pick"]

    choice = st.selectbox(
        "Run",
        ids,
        index=ids.index(wanted),
        format_func=lambda i: labels[i],
        key="review_run_pick",
        on_change=remember,
    )
    st.session_state[RUN_KEY] = choice
    return next(r for r in runs if r["id"] == choice)


@st.fragment(run_every=1.0)
def follow(run_id: int) -> None:
    """A working run: live progress from the database, and Cancel."""
    with session_scope() as session:
        run = run_info(session, run_id)
    if run["status"] not in (RunStatus.RUNNING, RunStatus.CANCELLING):
        st.rerun(scope="app")
    progress_line(run)
    if run["status"] == RunStatus.RUNNING and st.button("Cancel run", key="cancel_run"):
        try:
            jobs.cancel(run_id)
        except EvergreenError as exc:
            show_error(exc)
    if not jobs.is_working(run_id):
        st.caption("No worker in this app is on this run (it may be running from cron).")
        recover(run)


def recover(run: dict[str, Any]) -> None:
    """Resume a killed or failed update run, or give up on it."""
    run_id = run["id"]
    c1, c2, _ = st.columns([1, 1, 3])
    if run["kind"] == RunKind.UPDATE and c1.button("Resume run", key="resume_run"):
        run_action(jobs.resume, run_id)
    if run["status"] in (
        RunStatus.RUNNING,
        RunStatus.CANCELLING,
        RunStatus.INTERRUPTED,
    ) and c2.button("Mark abandoned", key="abandon_run"):
        run_action(jobs.abandon, run_id)
    refused = jobs.last_error(run_id)
    if refused:
        st.error(f"Resume refused: {refused}")


def main() -> None:
    style()
    st.title("Review")
    deep_link()
    flash = st.session_state.pop("eg_flash", None)
    report_id = pick_report(key="review_report_pick")
    if report_id is None:
        return
    watch_runs(report_id)
    run = pick_run(report_id)
    if run is None:
        return
    if flash:
        st.success(flash)
    run_id = run["id"]
    if run["status"] in (RunStatus.RUNNING, RunStatus.CANCELLING):
        follow(run_id)
        return
    with session_scope() as session:
        info = run_info(session, run_id)
    progress_line(info)
    if (
        info["status"] in (RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED)
        and info["kind"] == RunKind.UPDATE
    ):
        recover(info)
    editable = info["status"] == RunStatus.AWAITING_REVIEW
    if info["status"] == RunStatus.COMMITTED and info["version"]:
        st.success(f"This run was committed as version {info['version']}.")
        if st.button("Read the version", key="read_version"):
            st.session_state[REPORT_KEY] = report_id
            pin_version(report_id, info["version"], elsewhere=True)
            st.switch_page("pages/report.py")
    summary = info["summary"]
    if summary.get("actions"):
        acts = " ".join(
            badge_html(f"{n} {action_label(a).lower()}", a)
            for a, n in summary["actions"].items()
            if n
        )
        ev = ", ".join(
            f"{change_kind_label(k).lower()} {n}"
            for k, n in summary.get("evidence", {}).items()
            if n
        )
        st.html(f"<div>{acts} <span class='eg-muted'>evidence: {esc(ev)}</span></div>")
    if summary.get("flags"):  # run-level problems, e.g. search down during discovery
        st.html("".join(f'<div class="eg-muted">⚑ {esc(f)}</div>' for f in summary["flags"]))
    st.subheader("Cost of this run")
    cost_meters(run_id)
    sections(run_id, editable)


main()
