"""The first screen, through Streamlit's own test harness."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_first_start_loads_sample_and_renders_a_version(workspace: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "Grid-Scale Battery Energy Storage" in text and "## References" in text
    assert any("Sample data" in c.value for c in at.caption)
    assert at.selectbox(key="report_pick").options
