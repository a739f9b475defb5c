"""Report: read any version (clickable [n] citations → References), the version
timeline, the diff between two versions, and Markdown / PDF export."""

from __future__ import annotations

import streamlit as st

from core.app.export import export_file_name, version_markdown
from core.app.version_views import export_bytes, version_diff, version_html, version_timeline
from core.app.view_text import esc
from core.domain.labels import section_status_label
from core.domain.pdf import PDF_TIME_LIMIT, render_pdf
from core.errors import EvergreenError
from core.source_spec import SourceSpec
from core.states import ClaimState
from core.store.db import session_scope
from core.store.repository import get_report
from pages._shared import (
    badge_html,
    pick_report,
    pin_version,
    pinned_version,
    show_error,
    style,
    version_picker,
    watch_runs,
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _support(claims: dict) -> str:
    """ "supported 32 of 33" (or "—" for a version that cites nothing)."""
    total = claims.get("claims", 0)
    return f"supported {claims.get('supported', 0)} of {total}" if total else "—"


def _metric(value: float | None) -> str:
    """A quality metric for the timeline: "—" when the version has none."""
    return "—" if value is None else f"{value:.3f}"


def timeline(rows: list[dict]) -> None:
    st.dataframe(
        [
            {
                "version": r["number"],
                "as of": r["as_of"],
                "committed": r["committed"],
                "made by": f"{r['kind_label']} (run {r['run_id']})" if r["run_id"] else "—",
                "sections": r["sections"],
                "changed": ", ".join(
                    f"{n} {label.lower()}"
                    for label, n in sorted(r["status_labels"].items())
                    if label != section_status_label("kept")
                )
                or "—",
                "stale claims": r["stale_citations"],
                "claim support": _support(r["claims"]),
                "wording kept": _metric(r["metrics"].get("content_rouge_l")),
                "headings kept": _metric(r["metrics"].get("outline_em_f1")),
            }
            for r in rows[::-1]
        ],
        hide_index=True,
        width="stretch",
    )


def export(report_id: int, number: int, title: str) -> None:
    c1, c2 = st.columns(2)
    try:
        with session_scope() as session:
            md = export_bytes(session, get_report(session, report_id), number, "md")
    except EvergreenError as exc:
        show_error(exc)
    else:
        c1.download_button(
            "Download Markdown",
            md,
            file_name=export_file_name(title, number, "md"),
            mime="text/markdown",
            key="download_md",
            on_click="ignore",
        )
    pdf_key = f"eg_pdf_{report_id}_{number}"
    if pdf_key in st.session_state:
        c2.download_button(
            "Download PDF",
            st.session_state[pdf_key],
            file_name=export_file_name(title, number, "pdf"),
            mime="application/pdf",
            key="download_pdf",
            on_click="ignore",
        )
    elif c2.button("Prepare PDF", key="make_pdf"):
        try:
            with st.spinner("Rendering the PDF …"):
                with session_scope() as session:
                    report = get_report(session, report_id)
                    markdown = version_markdown(session, report, number, with_version_line=True)
                # a worker process, stopped after PDF_TIME_LIMIT s: never a stalled script
                data = render_pdf(markdown, time_limit=PDF_TIME_LIMIT)
        except EvergreenError as exc:
            st.session_state.pop(pdf_key, None)
            st.error(f"PDF export failed: {exc}")
        else:
            st.session_state[pdf_key] = data
            st.rerun()


def compare(report_id: int, numbers: list[int]) -> None:
    if len(numbers) < 2:
        st.info("Only one version so far: nothing to compare.")
        return
    c1, c2 = st.columns(2)
    a = c1.selectbox("From version", numbers, index=len(numbers) - 2, key="diff_a")
    b = c2.selectbox("To version", numbers, index=len(numbers) - 1, key="diff_b")
    with session_scope() as session:
        rows = version_diff(session, get_report(session, report_id), a, b)
    changed = [r for r in rows if r["kind"] != "unchanged"]
    st.caption(f"{len(changed)} of {len(rows)} section(s) differ.")
    for r in rows:
        if r["kind"] == "unchanged":
            continue
        st.html(
            f'<div class="eg-card-head">{badge_html(_DIFF_LABEL[r["kind"]], _KIND[r["kind"]])}'
            f"{esc(r['heading'])}</div>{r['html']}"
        )
    unchanged = [r["heading"] for r in rows if r["kind"] == "unchanged"]
    if unchanged:
        with st.expander(f"Unchanged sections ({len(unchanged)})"):
            st.html("<ul>" + "".join(f"<li>{esc(h)}</li>" for h in unchanged) + "</ul>")


_KIND = {"added": "add", "removed": "remove", "changed": "revise"}
_DIFF_LABEL = {"added": "Added", "removed": "Removed", "changed": "Changed"}


def main() -> None:
    style()
    st.title("Report")
    report_id = pick_report(key="report_report_pick")
    if report_id is None:
        return
    watch_runs(report_id)  # a run committed elsewhere: a new version to show
    with session_scope() as session:
        report = get_report(session, report_id)
        title, source = report.title, report.source
        rows = version_timeline(session, report_id)
    if not rows:
        st.warning("This report has no committed version yet.")
        return
    numbers = [r["number"] for r in rows]
    as_of = {r["number"]: r["as_of"] for r in rows}
    linked = st.query_params.get("version")  # ?report=R&version=N: that version of R
    if linked is not None:
        if str(linked).isdigit() and int(linked) in numbers:
            pin_version(report_id, int(linked), elsewhere=True)
        del st.query_params["version"]
    wanted = pinned_version(report_id)
    index = numbers[::-1].index(wanted) if wanted in numbers else 0
    pick = version_picker(report_id)  # each report its own picker: never another's number

    def remember() -> None:
        pin_version(report_id, st.session_state[pick])

    number = st.selectbox(
        "Version",
        numbers[::-1],
        index=index,
        format_func=lambda n: f"version {n} · as of {as_of[n]}",
        key=pick,
        on_change=remember,
    )
    pin_version(report_id, number)
    if SourceSpec.parse(source).kind == "sample":
        st.caption("Sample data: invented for demonstration, not real reporting.")
    read, versions, diff = st.tabs(["Read", "Timeline", "Compare versions"])
    with read:
        export(report_id, number, title)
        claims = next(r["claims"] for r in rows if r["number"] == number)
        flagged = [
            _plural(claims.get(state, 0), f"{state} claim")
            for state in (ClaimState.STALE, ClaimState.UNSUPPORTED)
            if claims.get(state)
        ]
        if flagged:
            st.warning(
                f"This version has {' and '.join(flagged)}: each is marked ⚠ after its "
                "sentence (hover for what the source says now)."
            )
        with session_scope() as session:
            body = version_html(session, get_report(session, report_id), number)
        st.html(body)
    with versions:
        timeline(rows)
        st.caption(
            "A stale claim is a sentence whose source passage changed or is gone in a newer "
            "snapshot while the sentence was kept: it still cites the source as it was. "
            "Claim support counts the cited sentences whose source says them. Wording kept "
            "and headings kept: how much of the previous version's text (ROUGE-L) and "
            "section headings (outline F1) the version keeps, 1.00 being all of it."
        )
    with diff:
        compare(report_id, numbers)


main()
