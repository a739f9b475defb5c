"""Reports (home): every tracked report, "Update now", new reports (research or import),
and per report: rebuild from scratch, archive / unarchive, delete (after a confirmation).

Archived reports are hidden unless "Show archived reports" is on. Importing a file that
was imported before asks first; an as-of after today is refused (core.domain.validation)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.app import actions
from core.app.export import version_markdown
from core.app.importer import DuplicateImportError, decode_markdown
from core.app.report_views import as_of_choices, report_cards, source_choices, update_as_of_choices
from core.app.run_views import run_info
from core.app.view_text import esc
from core.dates import day, parse_as_of
from core.domain.labels import run_status_label
from core.domain.validation import check_as_of
from core.engine import jobs
from core.engine.checks import news_since_versions
from core.errors import EvergreenError
from core.source_spec import SourceSpec
from core.states import ChangeKind, RunStatus
from core.store.db import session_scope
from core.store.report_archive import archived_report_ids
from core.store.repository import get_report
from pages._shared import (
    REPORT_KEY,
    RUN_KEY,
    actor,
    progress_line,
    review_link,
    run_action,
    show_error,
    style,
    watch_runs,
)

LIVE_EVERY = 1.0  # seconds between progress polls while a run is working
DELETE_KEY = "eg_confirm_delete"  # the report whose deletion waits for a confirmation
DUPLICATE_KEY = "eg_import_duplicate"  # an import refused as a duplicate, to confirm


def _when(choice: str) -> Any:
    """An as-of choice: None for now; a date after today is refused (EvergreenError)."""
    return None if choice == "now" else check_as_of(parse_as_of(choice))


def _run_status(status: str | None) -> str:
    return f" ({esc(run_status_label(status).lower())})" if status else ""


def _cost_line(cost: dict[str, Any] | None) -> str:
    if not cost:
        return "—"
    parts = [
        f"{cost['llm_calls']} LLM calls",
        f"{cost['tokens_in'] + cost['tokens_out']:,} tokens",
        f"{cost['searches']} searches",
        f"{cost['fetches']} fetches",
        f"${cost['usd']:.2f}",
    ]
    return " · ".join(parts)


@st.fragment(run_every=LIVE_EVERY)
def live_run(run_id: int) -> None:
    """Progress of a working run, polled from the database; reruns the page when it ends."""
    with session_scope() as session:
        run = run_info(session, run_id)
    if run["status"] not in (RunStatus.RUNNING, RunStatus.CANCELLING):
        st.rerun(scope="app")
    progress_line(run)
    c1, c2 = st.columns(2)
    if run["status"] == RunStatus.RUNNING and c1.button("Cancel", key=f"cancel_{run_id}"):
        try:
            jobs.cancel(run_id)
        except EvergreenError as exc:
            show_error(exc)
    if not jobs.is_working(run_id) and c2.button(
        "Mark abandoned",
        key=f"abandon_{run_id}",
        help="No worker in this app is running it (e.g. the app restarted mid-run). "
        "The Review screen can also resume it.",
    ):
        run_action(jobs.abandon, run_id)


def interrupted_run(run: dict[str, Any]) -> None:
    """A run whose worker is gone (killed, crashed, Ctrl-C): it holds the report until it
    is resumed (Review screen) or cancelled."""
    run_id = run["id"]
    st.warning(f"Run {run_id} was interrupted — resume it on the Review screen, or cancel it.")
    review_link(run["report_id"], run_id)
    if st.button("Cancel run", key=f"cancel_interrupted_{run_id}"):
        run_action(jobs.cancel, run_id)


def open_review(report_id: int, run_id: int) -> None:
    st.session_state[REPORT_KEY] = report_id
    st.session_state[RUN_KEY] = run_id
    st.switch_page("pages/review.py")


def awaiting_run(report_id: int, run_id: int) -> None:
    """A run waits for review: the next update starts once it is committed or cancelled."""
    if st.button(f"Review run {run_id}", key=f"review_run_{report_id}", type="primary"):
        open_review(report_id, run_id)
    st.caption("Commit or cancel it on the Review screen before the next update.")


def report_card(card: dict[str, Any], *, archived: bool = False) -> None:
    rid = card["id"]
    run = card["open_run"]
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="medium")
        with left:
            badges = '<span class="eg-badge eg-a-keep">archived</span>' if archived else ""
            if card["needs_review"]:
                badges += '<span class="eg-badge eg-a-revise">needs review</span>'
            elif run and run["status"] in (RunStatus.RUNNING, RunStatus.CANCELLING):
                badges += (
                    f'<span class="eg-badge eg-a-extend">{esc(run_status_label(run["status"]))}'
                    "</span>"
                )
            elif run and run["status"] == RunStatus.INTERRUPTED:
                badges += '<span class="eg-badge eg-a-remove">interrupted</span>'
            if card.get("news"):
                badges += news_badge(card["news"])
            if card["every_days"]:
                badges += (
                    f'<span class="eg-badge eg-a-keep">every {esc(card["every_days"])} days'
                    f"{' · due ' + esc(card['next_due']) if card['next_due'] else ''}</span>"
                )
            version = (
                f"version {esc(card['version'])} as of {esc(card['as_of'])}"
                if card["version"]
                else "no version yet"
            )
            st.html(
                f'<div class="eg-card-head">{esc(card["title"])} {badges}</div>'
                f'<div class="eg-question">{esc(card["query"])}</div>'
                f'<div class="eg-muted">Report {rid} · {version} · source {esc(card["source"])}'
                f" · {esc(card['sources'])} sources · last update "
                f"{esc(card['last_update'] or '—')}{_run_status(card['last_run_status'])}"
                f'</div><div class="eg-muted">Last update\'s cost: '
                f"{esc(_cost_line(card['last_cost']))}</div>"
            )
            b1, b2, b3 = st.columns(3)
            if b1.button("Open", key=f"open_{rid}", disabled=not card["version"]):
                st.session_state[REPORT_KEY] = rid
                st.switch_page("pages/report.py")
            awaiting = run and run["status"] == RunStatus.AWAITING_REVIEW
            if awaiting and b2.button("Review", key=f"review_{rid}", type="primary"):
                open_review(rid, run["id"])
            if b3.button("History", key=f"history_{rid}", disabled=not card["version"]):
                st.session_state[REPORT_KEY] = rid
                st.switch_page("pages/history.py")
        with right:
            if archived:
                archived_controls(card)
            elif run and run["status"] in (RunStatus.RUNNING, RunStatus.CANCELLING):
                live_run(run["id"])
            elif run and run["status"] == RunStatus.INTERRUPTED:
                interrupted_run(run)
            elif run and run["status"] == RunStatus.AWAITING_REVIEW:
                awaiting_run(rid, run["id"])
            elif card["version"]:
                update_controls(card)
            elif card["last_run_status"] == RunStatus.FAILED:
                st.error("Creating this report failed; its run on the Review screen says why.")
                if card.get("last_run_id"):
                    review_link(rid, card["last_run_id"])
            if st.session_state.get(DELETE_KEY) == rid:
                confirm_delete(rid)
            elif not archived:
                manage(card)


def news_badge(news: list[dict[str, Any]]) -> str:
    """The shared pool's news for a report: sources its version cites that another
    report's update found changed (or gone) since; the next update revises them."""
    n = len(news)
    listed = "; ".join(
        f"[{item['marker']}] {item['title']}"
        + (" (gone)" if item["kind"] == ChangeKind.GONE else "")
        for item in news[:8]
    )
    more = f"; and {n - 8} more" if n > 8 else ""
    tip = f"Found by another report's update: {listed}{more}. Update this report to revise them."
    label = f"{n} source{'s' if n != 1 else ''} changed since this version"
    return f'<span class="eg-badge eg-a-revise" title="{esc(tip)}">{esc(label)}</span>'


def archived_controls(card: dict[str, Any]) -> None:
    """An archived report: kept whole, not updated; bring it back or delete it."""
    rid = card["id"]
    st.caption("Archived: hidden from the list and never updated on a schedule.")
    c1, c2 = st.columns(2)
    if c1.button("Unarchive", key=f"unarchive_{rid}", type="primary"):
        set_archived(rid, False)
    if c2.button("Delete …", key=f"delete_{rid}"):
        ask_delete(rid)


def manage(card: dict[str, Any]) -> None:
    """Rebuild from scratch, archive, delete: the less frequent actions, folded away."""
    rid = card["id"]
    with st.expander("Rebuild, archive or delete"):
        if card["version"]:
            rebuild_controls(card)
        c1, c2 = st.columns(2)
        if c1.button(
            "Archive",
            key=f"archive_{rid}",
            help="Hide it from this list and from the update schedule; nothing is deleted, "
            "and Show archived reports brings it back.",
        ):
            set_archived(rid, True)
        if c2.button("Delete …", key=f"delete_{rid}", help="Asks for a confirmation first."):
            ask_delete(rid)


def set_archived(report_id: int, archived: bool) -> None:
    try:
        (actions.archive if archived else actions.unarchive)(report_id, actor=actor())
    except EvergreenError as exc:
        show_error(exc)
        return
    st.session_state["eg_flash"] = (
        f"Archived report {report_id}: it is kept; turn on Show archived reports to see it."
        if archived
        else f"Report {report_id} is back in the list."
    )
    st.rerun()


def ask_delete(report_id: int) -> None:
    st.session_state[DELETE_KEY] = report_id
    st.rerun()


def confirm_delete(report_id: int) -> None:
    """What deleting removes, and the two ways out: delete for good, or keep it."""
    try:
        message = actions.deletion_warning(report_id)
    except EvergreenError as exc:
        st.session_state.pop(DELETE_KEY, None)
        show_error(exc)
        return
    st.warning(f"{message} This cannot be undone (Archive hides a report and keeps it).")
    c1, c2 = st.columns(2)
    if c1.button("Delete for good", key=f"delete_confirm_{report_id}", type="primary"):
        delete_now(report_id)
    if c2.button("Keep it", key=f"delete_cancel_{report_id}"):
        st.session_state.pop(DELETE_KEY, None)
        st.rerun()


def delete_now(report_id: int) -> None:
    try:
        deleted = actions.delete(report_id, actor=actor()).deleted
    except EvergreenError as exc:
        show_error(exc)
        return
    st.session_state.pop(DELETE_KEY, None)
    for key in (REPORT_KEY, RUN_KEY):
        st.session_state.pop(key, None)  # no screen keeps pointing at it
    st.session_state["eg_flash"] = (
        f"Deleted report {report_id} with its {deleted.versions} version(s) and "
        f"{deleted.runs} run(s)."
    )
    st.rerun()


def rebuild_controls(card: dict[str, Any]) -> None:
    """A from-scratch baseline of the report at a date (``evergreen rebuild``): the cost
    and content updates are compared against."""
    rid = card["id"]
    options = ["now", *as_of_choices(card["source"])[::-1]]  # [] for the web
    c1, c2 = st.columns([2, 3], vertical_alignment="bottom")
    choice = c1.selectbox("Rebuild as of", options, key=f"rebuild_asof_{rid}")
    if c2.button(
        "Rebuild from scratch",
        key=f"rebuild_{rid}",
        help="Research the same question from scratch at that date, as a separate baseline "
        "report: the report itself is not changed.",
    ):
        rebuild(rid, choice)


def rebuild(report_id: int, choice: str) -> None:
    try:
        when = _when(choice)
        plan = actions.baseline(report_id, as_of=when)  # read before the long work starts
        with st.spinner("Rebuilding from scratch …"):
            result = actions.rebuild(plan)
    except EvergreenError as exc:
        show_error(exc)
        return
    st.session_state["eg_flash"] = (
        f"Rebuilt report {report_id} from scratch as of {day(when) if when else 'now'}: "
        f"baseline report {result.report_id}, {result.sections} sections citing "
        f"{result.sources} sources ({result.cost.searches} searches, "
        f"{result.cost.fetches} fetches)."
    )
    st.rerun()


def update_controls(card: dict[str, Any]) -> None:
    rid = card["id"]
    options = ["now"]
    if card["temporal"]:
        with session_scope() as session:
            options += update_as_of_choices(session, rid)[::-1]
    choice = st.selectbox(
        "As of",
        options,
        key=f"asof_{rid}",
        help="The date the update sees the sources as of (a temporal corpus offers its "
        "snapshot dates after the current version).",
    )
    force = st.checkbox(
        "Re-check every source",
        key=f"force_{rid}",
        help="Fetch every cited page again, even one another report's update checked "
        "recently (the shared evidence pool otherwise reuses that check).",
    )
    if st.button("Update now", key=f"update_{rid}", type="primary"):
        try:
            run_id = jobs.start_update(rid, as_of=_when(choice), force_recheck=force)
        except EvergreenError as exc:
            show_error(exc)
            return
        st.session_state[REPORT_KEY] = rid
        st.session_state[RUN_KEY] = run_id
        st.rerun()


def new_report() -> None:
    with st.expander("New report", expanded=False):
        research, upload = st.tabs(["Research a question", "Import a Markdown report"])
        sources = source_choices()
        with research:
            question = st.text_area("Research question", key="new_question", height=80)
            title = st.text_input("Title (optional)", key="new_title")
            c1, c2 = st.columns(2)
            source = c1.selectbox("Source", sources, key="new_source")
            as_of = c2.selectbox("As of", ["now", *as_of_choices(source)], key="new_as_of")
            if st.button("Create report", key="create", type="primary"):
                try:
                    with st.spinner("Researching …"):
                        result = jobs.start_create(
                            question, title=title or None, as_of=_when(as_of), source=source
                        )
                except EvergreenError as exc:
                    show_error(exc)
                else:
                    if result:
                        st.session_state[REPORT_KEY] = result["report_id"]
                        st.session_state["eg_flash"] = (
                            f"Created report {result['report_id']}: {result['sections']} "
                            f"sections citing {result['sources']} sources."
                        )
                    else:
                        st.session_state["eg_flash"] = (
                            "Researching in the background; the report appears below."
                        )
                    st.rerun()
        with upload:
            file = st.file_uploader(
                "Markdown report", type=["md", "markdown", "txt"], key="import_file"
            )
            query = st.text_area("The question it answers", key="import_question", height=70)
            c1, c2 = st.columns(2)
            isource = c1.selectbox("Source for updates", sources, key="import_source")
            iasof = c2.text_input("As of (YYYY-MM-DD, empty: now)", key="import_as_of")
            if st.button("Import", key="import"):
                import_upload(file, query, isource, iasof)
            duplicate_prompt(file, query, isource, iasof)


def duplicate_prompt(file: Any, query: str, source: str, as_of: str) -> None:
    """The chosen file was imported before: say where, and import it only if confirmed."""
    pending = st.session_state.get(DUPLICATE_KEY)
    if not pending:
        return
    if file is None or pending["file"] != file.file_id:  # another file: another question
        st.session_state.pop(DUPLICATE_KEY, None)
        return
    st.warning(f"{pending['message']} Import a second copy anyway?")
    c1, c2 = st.columns(2)
    if c1.button("Import anyway", key="import_anyway"):
        import_upload(file, query, source, as_of, allow_duplicate=True)
    if c2.button("Don't import", key="import_skip"):
        st.session_state.pop(DUPLICATE_KEY, None)
        st.rerun()


def import_upload(
    file: Any, query: str, source: str, as_of: str, *, allow_duplicate: bool = False
) -> None:
    if file is None:
        st.error("Choose a Markdown file to import.")
        return
    st.session_state.pop(DUPLICATE_KEY, None)
    try:
        summary = actions.import_markdown(
            decode_markdown(file.getvalue(), file.name),
            query=query,
            as_of=parse_as_of(as_of) if as_of.strip() else None,
            source=source,
            default_title=actions.title_from_file_name(file.name) or "Imported report",
            allow_duplicate=allow_duplicate,
        )
    except DuplicateImportError as exc:
        st.session_state[DUPLICATE_KEY] = {"file": file.file_id, "message": str(exc)}
        return
    except EvergreenError as exc:
        show_error(exc)
        return
    st.session_state[REPORT_KEY] = summary.report_id
    st.session_state["eg_flash"] = (
        f"Imported report {summary.report_id}: {summary.sections} sections, "
        f"{summary.references} references."
    )
    st.rerun()


def quick_look(cards: list[dict[str, Any]]) -> None:
    """The chosen report's current version, as plain Markdown (no HTML rendered)."""
    ids = [c["id"] for c in cards if c["version"]]
    if not ids:
        return
    titles = {c["id"]: f"{c['id']} · {c['title']}" for c in cards}
    current = st.session_state.get(REPORT_KEY)
    st.subheader("Current version")
    choice = st.selectbox(
        "Report",
        ids,
        index=ids.index(current) if current in ids else 0,
        format_func=lambda i: titles[i],
        key="report_pick",
    )
    with session_scope() as session:
        report = get_report(session, choice)
        text = version_markdown(session, report)
        source = report.source
    if SourceSpec.parse(source).kind == "sample":
        st.caption("Sample data: invented for demonstration, not real reporting.")
    with st.container(border=True, height=420):
        st.markdown(text)


def main() -> None:
    style()
    st.title("Reports")
    st.caption("Research reports kept current by reviewed, incremental updates.")
    flash = st.session_state.pop("eg_flash", None)
    if flash:
        st.success(flash)
    new_report()
    try:
        with session_scope() as session:
            cards = report_cards(session)
            archived = archived_report_ids(session)
            news = news_since_versions(session)
    except EvergreenError as exc:
        show_error(exc)
        return
    watch_runs()
    if not cards:
        st.info("No reports yet: research a question or import a Markdown report above.")
        return
    st.subheader("Tracked reports")
    shown = show_archived(cards, archived)
    for card in shown:
        report_card({**card, "news": news.get(card["id"], [])}, archived=card["id"] in archived)
    quick_look(shown)


def show_archived(cards: list[dict[str, Any]], archived: set[int]) -> list[dict[str, Any]]:
    """The cards to list: archived ones only with the toggle on (offered when there are)."""
    count = sum(1 for c in cards if c["id"] in archived)
    if not count:
        return cards
    on = st.toggle(f"Show archived reports ({count})", key="show_archived")
    shown = [c for c in cards if on or c["id"] not in archived]
    if not shown:
        st.info("Every report is archived: turn on Show archived reports to see them.")
    return shown


main()
