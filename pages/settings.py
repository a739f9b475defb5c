"""Settings: the writer, search and fetch providers, keys (set or not — never their
values), and per-report choices: τ, concurrency, writer and the update schedule."""

from __future__ import annotations

import streamlit as st

from core.app import actions
from core.app.report_views import report_settings
from core.domain.report_settings import WRITERS, ReportSettings
from core.domain.untrusted import escape_all
from core.engine.schedule import next_due
from core.errors import EvergreenError
from core.settings import get_settings
from core.store.db import session_scope
from core.store.repository import get_report
from pages._shared import actor, md_escape, pick_report, show_error, style


def workspace_settings() -> None:
    st.subheader("Workspace")
    try:
        info = get_settings().describe()
    except EvergreenError as exc:
        show_error(exc)
        return
    models = info["models"]
    writer = "offline extractive writer (quotes its sources)" if info["writer"] == "offline" else (
        f"LLM at {info['openai_base_url']}"
    )  # fmt: skip
    rows = [
        ("Writer", writer),
        ("Models", f"planner {models['planner']}, writer {models['writer']}, "
                   f"summariser {models['summariser']}"),
        ("OpenAI-compatible endpoint", info["openai_base_url"]),
        ("OpenAI API key", info["openai_api_key"]),
        ("Web search", info["web_search"]),
        ("Tavily API key", info["tavily_api_key"]),
        ("Fetch allow-list", ", ".join(info["fetch_allowlist"]) or "(private addresses blocked)"),
        ("Budget per run", f"tokens {info['budget']['tokens'] or '∞'}, "
                           f"$ {info['budget']['usd'] or '∞'}"),
        ("Config file", info["config_file"]),
    ]  # fmt: skip
    st.dataframe(
        [{"setting": k, "value": str(v)} for k, v in rows],
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "Set these with environment variables (EVERGREEN_LLM, OPENAI_API_KEY, OPENAI_BASE_URL, "
        "EVERGREEN_MODEL_*, TAVILY_API_KEY) or the config file; keys are shown only as "
        "set / not set."
    )


def _bounds(name: str) -> tuple[int, int]:
    low, high = ReportSettings.bounds(name)
    return int(low), int(high)


def report_form(report_id: int) -> None:
    with session_scope() as session:
        cfg = report_settings(session, report_id)
        try:
            due = next_due(session, get_report(session, report_id))
        except EvergreenError:  # an unreadable stored schedule: listed in cfg["problems"]
            due = None
    st.subheader("This report")
    st.markdown(
        f"Source **{md_escape(cfg['source'])}** — search: {md_escape(cfg['providers']['search'])}; "
        f"fetch: {md_escape(cfg['providers']['fetch'])}."
    )
    for problem in cfg["problems"]:  # the same lines `evergreen settings` prints
        st.warning(escape_all(problem))  # it may quote a hand-edited value
    writers: list[str | None] = [None, *WRITERS]  # None: the configured default
    tau_low, tau_high = ReportSettings.bounds("tau")
    with st.form(f"report_settings_{report_id}"):
        c1, c2, c3 = st.columns(3)
        tau = c1.slider(
            "τ (similarity gate)",
            float(tau_low),
            float(tau_high),
            float(cfg["tau"]),
            0.01,
            key="set_tau",
            help="A changed source whose text is at least this similar to before counts as a "
            "minor edit (unless a status, number or date changed).",
        )
        concurrency = c2.number_input(
            "Concurrency", *_bounds("concurrency"), int(cfg["concurrency"]), key="set_concurrency"
        )
        max_sections = c3.number_input(
            "Max sections",
            *_bounds("max_sections"),
            int(cfg["max_sections"]),
            key="set_max_sections",
        )
        b1, b2 = st.columns(2)
        max_sources = b1.number_input(
            "Source budget (0: no limit)",
            *_bounds("max_sources"),
            int(cfg["max_sources"]),
            key="set_max_sources",
            help="An update keeps at most this many cited sources: beyond it, the least "
            "relevant go (proposed as removals for review). A source whose status just "
            "changed always stays.",
        )
        max_words = b2.number_input(
            "Words per section (0: no limit)",
            *_bounds("max_section_words"),
            int(cfg["max_section_words"]),
            key="set_max_section_words",
            help="An update shortens a longer section by dropping the sentences of its least "
            "relevant sources.",
        )
        c4, c5 = st.columns(2)
        writer = c4.selectbox(
            "Writer",
            writers,
            index=writers.index(cfg["writer"]) if cfg["writer"] in writers else 0,
            format_func=lambda w: "configured default" if w is None else w,
            key="set_writer",
        )
        every = c5.number_input(
            "Update every N days (0: no schedule)",
            0,
            _bounds("every_days")[1],
            int(cfg["every_days"] or 0),
            key="set_every_days",
        )
        saved = st.form_submit_button("Save", type="primary")
    if saved:
        try:
            actions.settings(
                report_id,
                actor=actor(),
                tau=tau,
                concurrency=int(concurrency),
                max_sections=int(max_sections),
                writer=writer,
                every_days=int(every),
                max_sources=int(max_sources),
                max_section_words=int(max_words),
            )
        except EvergreenError as exc:
            show_error(exc)
        else:
            st.session_state["eg_settings_flash"] = "Saved."
            st.rerun()
    if cfg.get("every_days"):
        st.caption(
            f"Scheduled every {cfg['every_days']} day(s); next due "
            f"{due.date().isoformat() if due else '—'}. A cron job runs the due reports: "
            "`evergreen update --due --workers 2` (the runs wait for review here)."
        )
    else:
        st.caption("No schedule: this report updates only when someone presses “Update now”.")


def main() -> None:
    style()
    st.title("Settings")
    flash = st.session_state.pop("eg_settings_flash", None)
    if flash:
        st.success(flash)
    workspace_settings()
    report_id = pick_report(key="settings_report_pick")
    if report_id is not None:
        report_form(report_id)


main()
