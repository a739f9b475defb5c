"""Evergreen web app: the entry point of `streamlit run app.py`.

Multipage navigation (st.navigation) over the screens in ``pages/``: Reports (home),
Report, Review, Evidence, History and Settings. Every screen is a thin door onto
``core/`` — the same functions the CLI uses. The first start loads the sample
workspace, so a report is ready to update.
"""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core import config
from core.app.services import report_rows
from core.errors import EvergreenError
from core.settings import apply_secrets
from core.store.db import session_scope
from core.workspace import load_sample

st.set_page_config(page_title="Evergreen", page_icon="🌲", layout="wide")


@st.cache_resource(show_spinner="Loading the sample workspace …")
def _first_start(database_url: str) -> str:
    """Load the sample workspace into an empty database (once per database)."""
    with session_scope(database_url) as session:
        if report_rows(session):
            return ""
        return load_sample(session)["message"]


def _use_secrets() -> None:
    """Streamlit secrets (``.streamlit/secrets.toml``) supply keys and endpoints."""
    try:
        secrets = dict(st.secrets)
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return
    apply_secrets(secrets)


def main() -> None:
    _use_secrets()
    try:
        note = _first_start(config.database_url())
    except EvergreenError as exc:
        st.error(str(exc))
        note = ""
    if note:
        st.toast(note, icon=":material/forest:")
    pages = [
        st.Page("pages/reports.py", title="Reports", icon=":material/forest:", default=True),
        st.Page(
            "pages/report.py", title="Report", icon=":material/description:", url_path="report"
        ),
        st.Page(
            "pages/review.py", title="Review", icon=":material/rate_review:", url_path="review"
        ),
        st.Page(
            "pages/evidence.py",
            title="Evidence",
            icon=":material/travel_explore:",
            url_path="evidence",
        ),
        st.Page(
            "pages/history.py", title="History", icon=":material/monitoring:", url_path="history"
        ),
        st.Page(
            "pages/settings.py", title="Settings", icon=":material/settings:", url_path="settings"
        ),
    ]
    st.navigation(pages, position="sidebar").run()


main()
