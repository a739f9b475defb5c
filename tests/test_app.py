"""The first screen, through Streamlit's own test harness."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_first_start_loads_sample_and_renders_a_version(workspace: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "Grid-Scale Battery Energy Storage" in text and "## References" in text
    assert any("Sample data" in c.value for c in at.caption)
    assert at.selectbox(key="report_pick").options


def test_streamlit_secrets_supply_keys_without_showing_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.settings import get_settings

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setenv("EVERGREEN_MODEL_WRITER", "from-env")
    monkeypatch.setattr("core.config._supplied", {})  # what the app supplies ends with the test
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["TAVILY_API_KEY"] = "tvly-from-secrets"
    at.secrets["EVERGREEN_MODEL_WRITER"] = "from-secrets"  # the environment wins
    at.secrets["UNRELATED"] = "ignored"
    at.run()
    assert not at.exception
    settings = get_settings()
    assert settings.describe()["tavily_api_key"] == "set"
    assert settings.model_writer == "from-env"
    assert "UNRELATED" not in __import__("os").environ
    assert "TAVILY_API_KEY" not in __import__("os").environ  # supplied, not written there
    at.switch_page("pages/settings.py").run()
    shown = " ".join(str(e.value) for e in at.markdown) + str(at.get("json"))
    assert "tvly-from-secrets" not in shown


AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "a-cookie-secret-for-the-test",
    "client_id": "evergreen",
    "client_secret": "not-a-real-secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


#: the gate reads no database: one workspace is enough
SQLITE_ONLY = pytest.mark.parametrize("sample_workspace", ["sqlite"], indirect=True)


@SQLITE_ONLY
def test_with_a_login_configured_nothing_shows_before_signing_in(
    sample_workspace: Path,
) -> None:
    """``[auth]`` in the secrets: a visitor who has not signed in sees the sign-in page and
    nothing of the reports; once signed in, the reports and who is signed in."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception, at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    shown = " ".join(m.value for m in at.markdown) + " ".join(t.value for t in at.title)
    assert "Sign in to read and update the reports" in shown and "Grid-Scale" not in shown
    assert not at.selectbox  # no report picker
    # an address straight to a screen: test_browser_screens (AppTest knows no addresses)

    signed = AppTest.from_file(APP, default_timeout=60)
    signed.secrets["auth"] = AUTH
    signed.user = {"is_logged_in": True, "email": "ana@example.org", "name": "Ana Analyst"}
    signed.run()
    assert not signed.exception, signed.exception
    assert "Signed in as Ana Analyst" in [c.value for c in signed.sidebar.caption]
    assert "Sign out" in [b.label for b in signed.sidebar.button]
    assert signed.selectbox(key="report_pick").options


@SQLITE_ONLY
def test_named_providers_each_get_a_sign_in_button(sample_workspace: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = {
        "redirect_uri": AUTH["redirect_uri"],
        "cookie_secret": AUTH["cookie_secret"],
        "google": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")},
        "okta": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")},
    }
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception, at.exception
    assert [b.label for b in at.button] == ["Sign in with google", "Sign in with okta"]


@pytest.mark.parametrize("workspace", ["sqlite"], indirect=True)
def test_the_sample_loaded_note_is_shown_once_not_in_every_new_session(
    workspace: Path,
) -> None:
    first = AppTest.from_file(APP, default_timeout=60).run()
    assert not first.exception, first.exception
    assert any("sample" in t.value.lower() for t in first.toast)
    again = AppTest.from_file(APP, default_timeout=60).run()  # another browser session
    assert not again.exception, again.exception
    assert not again.toast
    assert again.selectbox(key="report_pick").options  # the sample is there all the same
