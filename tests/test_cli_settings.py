"""`evergreen settings`: a report's budget, τ, writer and schedule from the command line,
validated by the same function the app's settings page calls."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli as run


def test_the_budget_is_set_shown_and_validated(workspace: Path) -> None:
    assert run(workspace, "demo").returncode == 0
    shown = json.loads(run(workspace, "settings", "1", "--json").stdout)
    assert shown["max_sources"] == 25 and shown["max_section_words"] == 450
    r = run(workspace, "settings", "1", "--max-sources", "12", "--every-days", "7", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["max_sources"] == 12
    assert json.loads(r.stdout)["every_days"] == 7
    bad = run(workspace, "settings", "1", "--max-section-words", "10")
    assert bad.returncode == 1 and "words budget" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    again = json.loads(run(workspace, "settings", "1", "--json").stdout)
    assert again["max_section_words"] == 450  # a refused change leaves the setting as it was
    text = run(workspace, "settings", "1").stdout
    assert "12 sources" in text and "every 7 days" in text
