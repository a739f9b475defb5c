"""History: plotly charts across versions — continuity, cost per update next to a
from-scratch rebuild, sections changed (with the claims left stale) and evidence changes
per update — and the claims of each version."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core.app.cost_display import label_of, scratch_caption, visible_fields
from core.app.cost_views import update_costs, writer_is_llm
from core.app.history_views import EVIDENCE_KINDS, audit_trail, history
from core.states import ChangeKind, RunKind
from core.store.db import session_scope
from pages._shared import ACTION_COLORS, KIND_COLORS, pick_report, style, watch_runs

LAYOUT = {"height": 320, "margin": {"l": 10, "r": 10, "t": 40, "b": 10}}


def _labels(rows: list[dict]) -> list[str]:
    return [f"v{r['number']} ({r['as_of']})" for r in rows]


def continuity_chart(rows: list[dict]) -> None:
    later = [r for r in rows if r["metrics"]]
    if not later:
        st.info("Continuity is measured from the first update on.")
        return
    fig = go.Figure()
    for key, name in (
        ("content_rouge_l", "wording kept (ROUGE-L)"),
        ("outline_em_f1", "headings kept (outline F1)"),
        ("content_bleu4", "phrases kept (BLEU-4)"),
    ):
        fig.add_trace(
            go.Scatter(
                x=_labels(later),
                y=[r["metrics"].get(key) for r in later],
                mode="lines+markers",
                name=name,
                visible=True if key != "content_bleu4" else "legendonly",
            )
        )
    fig.update_layout(
        title="How much of the previous version each version keeps (1 = all of it)",
        yaxis_range=[0, 1.05],
        **LAYOUT,
    )
    st.plotly_chart(fig, width="stretch", key="chart_continuity")


def cost_chart(rows: list[dict], costs: list[dict], fields: list[str]) -> None:
    """Each update's cost beside the from-scratch baseline stored with it."""
    by_run = {c["run_id"]: c for c in costs}
    updates = [r for r in rows if r["kind"] == RunKind.UPDATE and r["run_id"] in by_run]
    if not updates:
        st.info("No updates yet: cost per update appears after the first one.")
        return
    spent = [by_run[r["run_id"]] for r in updates]
    default = next(
        (
            k
            for k in ("usd", "llm_calls", "fetches")
            if k in fields and any(c["cost"][k] for c in spent)
        ),
        "fetches",
    )
    metric = (
        st.segmented_control(
            "Cost measure", fields, default=default, format_func=label_of, key="history_cost_metric"
        )
        or default
    )
    estimated = any(c["estimated"] for c in spent)
    name = "from scratch (estimate)" if estimated else "from scratch"
    fig = go.Figure(
        [
            go.Bar(x=_labels(updates), y=[c["cost"][metric] for c in spent], name="update"),
            go.Bar(
                x=_labels(updates),
                y=[c["scratch"][metric] for c in spent],
                name=name,
                marker_color="#9ca3af",
            ),
        ]
    )
    fig.update_layout(
        title=f"Cost per update ({label_of(metric)}) next to from scratch",
        barmode="group",
        **LAYOUT,
    )
    st.plotly_chart(fig, width="stretch", key="chart_cost")
    st.caption(scratch_caption(spent))


def _stacked_per_update(
    rows: list[dict],
    field: str,
    series: list[tuple[str, str, object]],
    title: str,
    key: str,
    extra: list[go.Scatter] | None = None,
) -> None:
    """A stacked bar per update: one bar segment per (name, colour, visible) series, and
    any ``extra`` traces drawn over the bars."""
    updates = [r for r in rows if r["kind"] == RunKind.UPDATE]
    if not updates:
        return
    fig = go.Figure(
        [
            go.Bar(
                x=_labels(updates),
                y=[r[field][name] for r in updates],
                name=name,
                marker_color=color,
                visible=visible,
            )
            for name, color, visible in series
        ]
        + list(extra or [])
    )
    fig.update_layout(title=title, barmode="stack", **LAYOUT)
    st.plotly_chart(fig, width="stretch", key=key)


STALE_COLOR = "#111827"  # dark: visible over any bar colour


def sections_chart(rows: list[dict]) -> None:
    """Sections changed per update, with the claims each update left stale."""
    statuses = (
        ("revised", "revise"),
        ("extended", "extend"),
        ("added", "add"),
        ("removed", "remove"),
    )
    series = [(status, ACTION_COLORS[action], True) for status, action in statuses]
    updates = [r for r in rows if r["kind"] == RunKind.UPDATE]
    stale = go.Scatter(
        x=_labels(updates),
        y=[r["stale_citations"] for r in updates],
        name="stale claims",
        mode="lines+markers",
        line={"color": STALE_COLOR, "dash": "dot", "width": 2},
        marker={"symbol": "diamond", "size": 12, "line": {"color": "#ffffff", "width": 2}},
    )
    _stacked_per_update(
        rows,
        "sections",
        series,
        "Sections changed and stale claims per update",
        "chart_sections",
        extra=[stale],
    )


def evidence_chart(rows: list[dict]) -> None:
    series = [
        (kind, KIND_COLORS[kind], True if kind != ChangeKind.UNCHANGED else "legendonly")
        for kind in EVIDENCE_KINDS
    ]
    _stacked_per_update(rows, "evidence", series, "Evidence changes per update", "chart_evidence")


def claims_table(rows: list[dict]) -> None:
    """Per version: its claims, how many its sources support, and how many are stale."""
    if not any(r["claims"].get("claims") for r in rows):
        return
    st.subheader("Claims per version")
    st.dataframe(
        [
            {
                "version": f"v{r['number']} ({r['as_of']})",
                "claims": r["claims"].get("claims", 0),
                "supported": r["claims"].get("supported", 0),
                "unsupported": r["claims"].get("unsupported", 0),
                "stale": r["stale_citations"],
                "committed by": r["committed_by"],
            }
            for r in rows[::-1]
        ],
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "Stale: the sentence was kept while the passage of the source it cites changed or is "
        "gone; it still cites the source as it was."
    )


def trail_table(report_id: int) -> None:
    """Who decided, edited, committed, archived or changed the settings, and when."""
    with session_scope() as session:
        trail = audit_trail(session, report_id)
    if not trail:
        return
    st.subheader("Who decided what")
    st.dataframe(trail, hide_index=True, width="stretch")
    st.caption(
        "Each decision, edit, commit, archive and settings change, newest first: the "
        "signed-in user in the app (“app user” without a login), `--as NAME` or the "
        "operating-system user on the command line."
    )


def main() -> None:
    style()
    st.title("History")
    report_id = pick_report(key="history_report_pick")
    if report_id is None:
        return
    watch_runs(report_id)  # a run committed elsewhere: a new version to show
    with session_scope() as session:
        rows = history(session, report_id)
        costs = update_costs(session, report_id)
        llm = writer_is_llm(session, report_id)
    fields = visible_fields(llm, *(c["cost"] for c in costs), *(c["scratch"] for c in costs))
    if not rows:
        st.warning("This report has no committed version yet.")
        return
    st.caption(f"{len(rows)} version(s); {sum(r['kind'] == 'update' for r in rows)} update(s).")
    left, right = st.columns(2)
    with left:
        continuity_chart(rows)
    with right:
        cost_chart(rows, costs, fields)
    left, right = st.columns(2)
    with left:
        sections_chart(rows)
    with right:
        evidence_chart(rows)
    claims_table(rows)
    trail_table(report_id)


main()
