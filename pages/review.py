"""Review: one card per section of a run awaiting review — diff, evidence, decision —
cost meters against a from-scratch rebuild, and "Commit version"."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import jobs
from core.db import session_scope
from core.errors import EvergreenError
from core.review import commit_run, decide, get_run
from core.review_views import review_cards
from core.views import esc, run_info, runs_of
from pages._costs import cost_meters
from pages._shared import (
    REPORT_KEY,
    RUN_KEY,
    VERSION_KEY,
    badge_html,
    pick_report,
    progress_line,
    show_error,
    style,
)


def _status(status: str) -> str:
    return status.replace("_", " ")


def pick_run(report_id: int) -> dict[str, Any] | None:
    with session_scope() as session:
        runs = [r for r in runs_of(session, report_id) if r["kind"] != "import"]
    if not runs:
        st.info("This report has no runs to review yet: use “Update now” on the Reports screen.")
        return None
    ids = [r["id"] for r in runs]
    labels = {
        r["id"]: f"Run {r['id']} · {r['kind']} · {_status(r['status'])} · as of {r['as_of']}"
        for r in runs
    }
    wanted = st.session_state.get(RUN_KEY)
    if wanted not in ids:  # default: the open run, else the newest
        wanted = next(
            (r["id"] for r in runs if r["status"] in ("awaiting_review", "running", "interrupted")),
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
    if run["status"] not in ("running", "cancelling"):
        st.rerun(scope="app")
    progress_line(run)
    if run["status"] == "running" and st.button("Cancel run", key="cancel_run"):
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
    if run["kind"] == "update" and c1.button("Resume run", key="resume_run"):
        try:
            jobs.resume(run_id)
        except EvergreenError as exc:
            show_error(exc)
        else:
            st.rerun(scope="app")
    if run["status"] in ("running", "cancelling", "interrupted") and c2.button(
        "Mark abandoned", key="abandon_run"
    ):
        try:
            jobs.abandon(run_id)
        except EvergreenError as exc:
            show_error(exc)
        else:
            st.rerun(scope="app")
    refused = jobs.last_error(run_id)
    if refused:
        st.error(f"Resume refused: {refused}")


# -- cards -----------------------------------------------------------------------------------
def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _become(n: int) -> str:
    return "becomes" if n == 1 else "become"


def claims_block(c: dict[str, Any]) -> None:
    """The claims whose source passage changed, and how many would be left stale."""
    if not c["claim_changes"]:
        return
    kept, approved = c["stale_if_kept"], c["stale_if_approved"]
    line = f"⚠ {_plural(kept, 'stale claim')} if kept as is"
    if c["action"] == "remove":
        line += " · removing the section drops them"
    elif c["changed"]:
        line += (
            f" · {approved} still unchanged in the new text"
            if approved
            else " · the new text revises all of them"
        )
    st.html(
        f'<div class="eg-stale-count">{esc(line)}</div>'
        f'<div class="eg-muted">Claims whose source passage changed:</div>'
        f"{c['claim_changes_html']}"
    )


def edit_box(run_id: int, c: dict[str, Any], *, primary: bool = False) -> None:
    key = c["key"]
    label = "Revised text" if c["action"] == "keep" else "New text"
    text = st.text_area(
        f"{label} (Markdown; cite sources as [n])",
        value=c["proposed_text"],
        key=f"edit:{key}",
        height=220,
    )
    kind = "primary" if primary else "secondary"
    if st.button("Save edit and approve", key=f"save:{key}", type=kind):
        _decide(run_id, edits={key: text})


def card(run_id: int, c: dict[str, Any], editable: bool) -> None:
    key = c["key"]
    keep = c["action"] == "keep"
    with st.container(border=True):
        decision = c["decision"] + (" (edited)" if c["edited"] else "")
        if keep and c["decision"] == "rejected" and not c["edited"]:
            decision += " (to be revised)"
        others = [f for f in c["flags"] if f not in c["attention"]]
        flags = "".join(f'<div class="eg-muted">⚑ {esc(f)}</div>' for f in others)
        stats = c["diff_stats"]
        words = f" · +{stats['words_inserted']} / −{stats['words_deleted']} words" if stats else ""
        st.html(
            f'<div class="eg-card-head">{badge_html(c["action"], c["action"])}'
            f"{esc(c['heading'])}</div>"
            f'<div class="eg-muted">decision: <b>{esc(decision)}</b>{esc(words)}</div>'
        )
        for flag in c["attention"]:  # e.g. the writer failed: the section was kept as it was
            st.warning(flag, icon="⚠️")
        st.html(f"<div>{esc(c['rationale'])}</div>{flags}")
        claims_block(c)
        if not c["changed"]:
            with st.expander("Unchanged text", expanded=False):
                st.html(f'<div style="white-space: pre-wrap">{esc(c["old_text"])}</div>')
        else:
            st.html(c["diff_html"])
        if c["evidence"]:
            with st.expander(f"Evidence behind it ({len(c['evidence'])})", expanded=c["changed"]):
                st.html(c["evidence_html"])
        if not editable:
            return
        b1, b2, _ = st.columns([1, 1, 4])
        if keep:  # keep as is, or reject the keep: the analyst revises it by hand
            if b1.button(
                "Keep as is",
                key=f"keep:{key}",
                disabled=c["decision"] == "approved",
                type="primary",
            ):
                _decide(run_id, approve=[key])
            if b2.button(
                "Reject",
                key=f"reject:{key}",
                disabled=c["decision"] == "rejected",
                help="Keeping it is wrong: revise this section by hand.",
            ):
                _decide(run_id, reject=[key])
            if c["decision"] == "rejected" and not c["edited"]:
                stale = c["stale_if_kept"]
                st.caption(
                    "Type the revision below and save it. Committed without one, the section "
                    "stays as it is"
                    + (f" and {_plural(stale, 'claim')} {_become(stale)} stale." if stale else ".")
                )
                edit_box(run_id, c, primary=True)
            else:
                with st.expander("Edit this section"):
                    edit_box(run_id, c)
            return
        if b1.button(
            "Approve", key=f"approve:{key}", disabled=c["decision"] == "approved", type="primary"
        ):
            _decide(run_id, approve=[key])
        if b2.button("Reject", key=f"reject:{key}", disabled=c["decision"] == "rejected"):
            _decide(run_id, reject=[key])
        if c["action"] != "remove":
            with st.expander("Edit the new text"):
                edit_box(run_id, c)


def _decide(run_id: int, **kwargs: Any) -> None:
    try:
        with session_scope() as session:
            decide(session, get_run(session, run_id), **kwargs)
    except EvergreenError as exc:
        show_error(exc)
        return
    st.rerun()


def commit(run_id: int) -> None:
    try:
        with session_scope() as session:
            version = commit_run(session, get_run(session, run_id))
            number = version.number
    except EvergreenError as exc:
        show_error(exc)
        return
    st.session_state[VERSION_KEY] = number
    st.session_state["eg_flash"] = f"Committed version {number}."
    st.rerun()


def main() -> None:
    style()
    st.title("Review")
    flash = st.session_state.pop("eg_flash", None)
    report_id = pick_report(key="review_report_pick")
    if report_id is None:
        return
    run = pick_run(report_id)
    if run is None:
        return
    if flash:
        st.success(flash)
    run_id = run["id"]
    if run["status"] in ("running", "cancelling"):
        follow(run_id)
        return
    with session_scope() as session:
        info = run_info(session, run_id)
        cards = review_cards(session, run_id)
    progress_line(info)
    if info["status"] in ("failed", "cancelled", "interrupted") and info["kind"] == "update":
        recover(info)
    editable = info["status"] == "awaiting_review"
    if info["status"] == "committed" and info["version"]:
        st.success(f"This run was committed as version {info['version']}.")
        if st.button("Read the version", key="read_version"):
            st.session_state[REPORT_KEY] = report_id
            st.session_state[VERSION_KEY] = info["version"]
            st.switch_page("pages/report.py")
    summary = info["summary"]
    if summary.get("actions"):
        acts = " ".join(badge_html(f"{n} {a}", a) for a, n in summary["actions"].items() if n)
        ev = ", ".join(f"{n} {k}" for k, n in summary.get("evidence", {}).items() if n)
        st.html(f"<div>{acts} <span class='eg-muted'>evidence: {esc(ev)}</span></div>")
    if summary.get("flags"):  # run-level problems, e.g. search down during discovery
        st.html("".join(f'<div class="eg-muted">⚑ {esc(f)}</div>' for f in summary["flags"]))
    st.subheader("Cost of this run")
    cost_meters(run_id)
    if not cards:
        return
    st.subheader("Sections")
    pending = sum(1 for c in cards if c["decision"] == "pending")
    if editable:
        c1, c2, c3 = st.columns([1, 1, 3])
        if c1.button("Approve all pending", key="approve_all", disabled=not pending):
            _decide(run_id, approve_all=True)
        if c2.button("Cancel this run", key="drop_run"):
            try:
                jobs.cancel(run_id)
            except EvergreenError as exc:
                show_error(exc)
            else:
                st.rerun()
        c3.caption(f"{pending} of {len(cards)} section(s) still pending.")
    for c in cards:
        card(run_id, c, editable)
    if editable:
        if st.button("Commit version", key="commit", type="primary", disabled=bool(pending)):
            commit(run_id)
        if pending:
            st.caption("Decide every pending section to commit.")
        else:
            stale = sum(c["stale_on_commit"] or 0 for c in cards)
            st.caption(
                f"Committing with these decisions leaves {_plural(stale, 'claim')} stale."
                if stale
                else "Committing with these decisions leaves no claim stale."
            )


main()
