"""Evergreen web app: the Reports screen (entry point of `streamlit run app.py`).

A thin door onto the core: every number and text shown here comes from the
same functions the CLI uses. The first start loads the sample workspace.
"""

from __future__ import annotations

import streamlit as st

from core.db import session_scope
from core.errors import EvergreenError
from core.export import version_markdown
from core.repository import get_report, versions_of
from core.services import report_rows
from core.workspace import load_sample

st.set_page_config(page_title="Evergreen", page_icon="🌲", layout="wide")


@st.cache_resource(show_spinner="Loading the sample workspace …")
def _first_start() -> str:
    with session_scope() as session:
        if report_rows(session):
            return ""
        return load_sample(session)["message"]


def main() -> None:
    st.title("Evergreen")
    st.caption("Research reports kept current by reviewed, incremental updates.")
    try:
        note = _first_start()
    except EvergreenError as exc:
        st.error(str(exc))
        return
    if note:
        st.info(note)
    with session_scope() as session:
        rows = report_rows(session)
    if not rows:
        st.info("No reports yet. Run `evergreen demo` or import a Markdown report.")
        return
    st.subheader("Tracked reports")
    st.dataframe(
        [
            {
                "id": r["id"],
                "title": r["title"],
                "question": r["query"],
                "version": r["version"],
                "as of": r["as_of"],
                "sources": r["sources"],
                "status": r["status"],
            }
            for r in rows
        ],
        hide_index=True,
        use_container_width=True,
    )
    labels = {f"{r['id']} · {r['title']}": r["id"] for r in rows}
    choice = st.selectbox("Report", list(labels), key="report_pick")
    with session_scope() as session:
        report = get_report(session, labels[choice])
        numbers = [v.number for v in versions_of(session, report.id)]
        if not numbers:
            st.warning("This report has no committed version yet.")
            return
        number = st.selectbox("Version", numbers[::-1], key="version_pick")
        text = version_markdown(session, report, number)
    if report.source == "sample":
        st.caption("Sample data: invented for demonstration, not real reporting.")
    st.markdown(text)


main()
