"""The cost of a run: one "saved vs from scratch" line, its meters and per-stage bars
(time per stage included) beside a from-scratch rebuild. The numbers and words come from
``core.app.cost_views``; this module only renders them."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.app.cost_display import label_of, meter_delta, meter_value, stage_color
from core.app.cost_views import run_costs
from core.store.db import session_scope

COLORS = {"good": "normal", "bad": "inverse", "off": "off"}  # a delta's words are positive


def _meters(costs: dict) -> None:
    totals, scratch, fields = costs["totals"], costs["scratch"]["totals"], costs["fields"]
    cols = st.columns(len(fields) + 1)
    for col, key in zip(cols, fields, strict=False):
        value, base = totals.get(key, 0), scratch.get(key, 0)
        delta, tone = meter_delta(key, value, base)
        col.metric(
            label_of(key),
            meter_value(key, value),
            delta=delta,
            delta_color=COLORS[tone],
            delta_arrow="off",
            help=f"From scratch: {meter_value(key, base)}",
        )
    cols[-1].metric("writer calls", totals.get("writer_calls", 0), help=costs["writer_note"])


def _stage_bars(costs: dict) -> go.Figure:
    scratch, fields = costs["scratch"], costs["fields"]
    stages = sorted({s["stage"] for s in costs["stages"]} | {s["stage"] for s in scratch["stages"]})
    fig = make_subplots(rows=1, cols=len(fields), subplot_titles=[label_of(k) for k in fields])
    for stage in stages:
        mine = next((s for s in costs["stages"] if s["stage"] == stage), {})
        theirs = next((s for s in scratch["stages"] if s["stage"] == stage), {})
        for i, key in enumerate(fields, start=1):
            fig.add_trace(
                go.Bar(
                    x=["update", "scratch"],
                    y=[mine.get(key, 0), theirs.get(key, 0)],
                    name=stage,
                    legendgroup=stage,
                    showlegend=i == 1,
                    marker_color=stage_color(stage),
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
    return fig


@st.fragment
def stage_chart(run_id: int) -> None:
    """The per-stage bars, on request: drawing them is most of what opening Review costs
    the browser, and the line and meters above already tell the story."""
    if not st.toggle("Cost and time by stage", key=f"stage_chart_{run_id}"):
        return
    with session_scope() as session:
        costs = run_costs(session, run_id)
    st.plotly_chart(_stage_bars(costs), width="stretch", key="cost_meters")


def cost_meters(run_id: int) -> None:
    with session_scope() as session:
        costs = run_costs(session, run_id)
    scratch = costs["scratch"]
    st.markdown(f"**{costs['headline']}**")
    _meters(costs)
    stage_chart(run_id)
    name = "from scratch (estimate)" if scratch["estimated"] else "from scratch"
    st.caption(
        f"“scratch”: {name} — {scratch['basis']}. Time: seconds spent in each stage. "
        f"{costs['writer_note']}"
    )
