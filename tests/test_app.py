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
