"""Evergreen web app: the entry point of `streamlit run app.py`.

Multipage navigation (st.navigation) over the screens in ``pages/``: Reports (home),
Report, Review, Evidence, History and Settings. Every screen is a thin door onto
``core/`` — the same functions the CLI uses. The first start loads the sample
workspace, so a report is ready to update. With a login configured (``[auth]`` in
``.streamlit/secrets.toml``, Streamlit's OIDC), every screen waits for ``st.login``.
"""

from __future__ import annotations

from collections.abc import Mapping

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
def _first_start(database_url: str) -> dict[str, str]:
    """Load the sample workspace into an empty database (once per database). Returns
    the note to show once: the first session to read it takes it, so a new browser
    session (or tab) is not told again that the sample was loaded."""
    with session_scope(database_url) as session:
        if report_rows(session):
            return {}
        return {"note": load_sample(session)["message"]}


def _secrets() -> dict:
    """Streamlit secrets (``.streamlit/secrets.toml``), or none."""
    try:
        return dict(st.secrets)
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return {}


def _providers(auth: Mapping) -> list[str | None]:
    """The sign-in choices ``[auth]`` configures: its own client (None), and each named
    provider (``[auth.NAME]``)."""
    named = [name for name, value in auth.items() if isinstance(value, Mapping)]
    return ([None] if "client_id" in auth else []) + named


def _signed_in(auth: Mapping | None) -> bool:
    """With a login configured (``[auth]`` in the secrets), nobody sees a screen before
    signing in: the only page is the sign-in one, whatever the address asked for. Once
    signed in, the sidebar says who and offers to sign out. Without ``[auth]`` the app is
    open to whoever reaches it (SECURITY.md: keep it on loopback, or behind a proxy)."""
    if not auth:
        return True
    if st.user.is_logged_in:
        who = st.user.get("name") or st.user.get("email") or "signed in"
        with st.sidebar:
            st.caption(f"Signed in as {who}")
            st.button("Sign out", on_click=st.logout, key="eg-sign-out")
        return True

    def sign_in() -> None:
        st.title("Evergreen")
        st.write("Sign in to read and update the reports.")
        for provider in _providers(auth):
            label = f"Sign in with {provider}" if provider else "Sign in"
            args = (provider,) if provider else ()
            st.button(label, on_click=st.login, args=args, key=f"eg-sign-in-{provider}")

    st.navigation([st.Page(sign_in, title="Sign in", icon=":material/login:")]).run()
    return False


def main() -> None:
    secrets = _secrets()
    apply_secrets(secrets)
    if not _signed_in(secrets.get("auth")):
        return
    try:
        note = _first_start(config.database_url()).pop("note", "")
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
