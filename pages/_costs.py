"""The cost of a run as meters and per-stage bars, beside a from-scratch rebuild."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.cost_views import run_costs
from core.costs import COST_FIELDS, COST_LABELS
from core.db import session_scope

STAGE_COLORS = [
    "#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#4b5563", "#db2777",
    "#65a30d", "#7c3aed",
]  # fmt: skip


def cost_meters(run_id: int) -> None:
    with session_scope() as session:
        costs = run_costs(session, run_id)
    totals, scratch = costs["totals"], costs["scratch"]
    cols = st.columns(len(COST_FIELDS) + 1)
    for col, key in zip(cols, COST_FIELDS, strict=False):
        value, base = totals.get(key, 0), scratch["totals"].get(key, 0)
        fmt = (lambda v: f"${v:,.4f}") if key == "usd" else (lambda v: f"{int(v):,}")
        col.metric(
            COST_LABELS[key],
            fmt(value),
            delta=f"{fmt(value - base)} vs scratch" if base or value else None,
            delta_color="inverse",
        )
    cols[-1].metric("writer calls", totals.get("writer_calls", 0))
    stages = sorted({s["stage"] for s in costs["stages"]} | {s["stage"] for s in scratch["stages"]})
    fig = make_subplots(rows=1, cols=len(COST_FIELDS), subplot_titles=[
        COST_LABELS[k] for k in COST_FIELDS
    ])  # fmt: skip
    scratch_name = "from scratch (estimate)" if scratch["estimated"] else "from scratch"
    for n, stage in enumerate(stages):
        mine = next((s for s in costs["stages"] if s["stage"] == stage), None)
        theirs = next((s for s in scratch["stages"] if s["stage"] == stage), None)
        for i, key in enumerate(COST_FIELDS, start=1):
            fig.add_trace(
                go.Bar(
                    x=["update", "scratch"],
                    y=[(mine or {}).get(key, 0), (theirs or {}).get(key, 0)],
                    name=stage,
                    legendgroup=stage,
                    showlegend=i == 1,
                    marker_color=STAGE_COLORS[n % len(STAGE_COLORS)],
                ),
                row=1,
                col=i,
            )
    fig.update_layout(
        barmode="stack",
        height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.25, "title": {"text": "stage"}},
    )
    fig.update_xaxes(tickangle=0, tickfont={"size": 11})
    fig.update_yaxes(rangemode="nonnegative", tickfont={"size": 10})
    for i, key in enumerate(COST_FIELDS, start=1):  # an all-zero meter still reads 0 – 1
        if not (totals.get(key) or scratch["totals"].get(key)):
            fig.update_yaxes(range=[0, 1], row=1, col=i)
    st.plotly_chart(fig, width="stretch", key="cost_meters")
    st.caption(f"“scratch”: {scratch_name} — {scratch['basis']}.")
