"""Per-report settings have one typed home, ``core.domain.report_settings.ReportSettings``: its
defaults and bounds, old stored dicts read back, and the same words from every door."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.domain.report_settings import (
    DEFAULT_TAU,
    ReportSettings,
    ReportSettingsError,
    settings_of,
    writer_name,
)
from core.domain.untrusted import escape_all
from core.engine.schedule import run_due, save_report_settings
from core.store.db import session_scope
from core.store.models import Report
from core.workspace import load_sample
from tests.conftest import APP
from tests.conftest import run_cli as run
from tests.helpers.apptest import ok


def test_defaults_and_bounds_live_in_one_place() -> None:
    defaults = ReportSettings()
    assert defaults.tau == DEFAULT_TAU == 0.9
    assert (defaults.max_sources, defaults.max_section_words) == (25, 450)
    assert (defaults.writer, defaults.every_days) == (None, None)
    assert ReportSettings.bounds("tau") == (0.5, 1.0)
    assert ReportSettings.bounds("every_days") == (1, 365)
    assert ReportSettings.bounds("max_sources") == (0, 500)


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        ({"tau": 1.5}, "tau", "τ must be between 0.5 and 1.0 (got 1.5)."),
        ({"tau": 0.49}, "tau", "τ must be between 0.5 and 1.0 (got 0.49)."),
        ({"tau": "high"}, "tau", "τ must be between 0.5 and 1.0 (got 'high')."),
        ({"concurrency": 0}, "concurrency", "Concurrency must be between 1 and 64 (got 0)."),
        ({"max_sections": 31}, "max_sections", "Max sections must be between 1 and 30"),
        ({"max_sources": -1}, "max_sources", "The source budget must be 0 (no limit) to 500"),
        ({"max_section_words": 10}, "max_section_words", "The words budget must be 0"),
        ({"every_days": 400}, "every_days", "The schedule must be every 1 to 365 days"),
        ({"writer": "gpt"}, "writer", "Unknown writer 'gpt': choose offline or openai"),
    ],
)
def test_a_value_out_of_bounds_is_refused_in_one_line(values: dict, field: str, words: str) -> None:
    with pytest.raises(ReportSettingsError) as err:
        ReportSettings.parse(values)
    assert err.value.field == field
    assert str(err.value).startswith(words) and "\n" not in str(err.value)


def test_an_old_stored_dict_reads_back_and_writes_back_plain() -> None:
    stored = {
        "tau": "0.95",  # JSON text where a number goes
        "max_sources": 12,
        "every_days": 0,  # 0: no schedule
        "writer": "llm",  # the bench's old spelling of openai
        "retired_knob": True,  # a key this version does not know
    }
    settings = settings_of(stored)
    assert (settings.tau, settings.max_sources, settings.every_days) == (0.95, 12, None)
    assert settings.writer == "openai" and settings.concurrency == 8  # missing: its default
    back = settings.to_stored(stored)
    assert back == {"tau": 0.95, "max_sources": 12, "writer": "openai", "retired_knob": True}
    assert json.loads(json.dumps(back)) == back  # a plain dict for the JSON column
    assert settings_of(None) == ReportSettings() and settings_of({}).to_stored() == {}


def test_an_invalid_stored_value_is_an_error_for_the_work_and_a_note_for_the_doors() -> None:
    with pytest.raises(ReportSettingsError, match="stored settings are invalid: τ must be"):
        settings_of({"tau": 7, "max_sources": 3})
    shown, problems = ReportSettings.salvage({"tau": 7, "max_sources": 3})
    assert (shown.tau, shown.max_sources) == (0.9, 3)  # the valid ones are kept
    assert problems == ["τ must be between 0.5 and 1.0 (got 7). The default is used until it "
                        "is saved again."]  # fmt: skip


def test_writer_names_are_one_vocabulary() -> None:
    assert [writer_name(w) for w in ("offline", "openai", "llm", "default", None)] == [
        "offline",
        "openai",
        "openai",
        None,
        None,
    ]
    with pytest.raises(ReportSettingsError, match="Unknown writer 'gpt'"):
        writer_name("gpt")


def test_save_keeps_what_it_does_not_change_and_repairs_a_bad_stored_value(
    workspace: Path,
) -> None:
    with session_scope() as session:
        report_id = load_sample(session)["report_id"]
        report = session.get(Report, report_id)
        report.settings = {"tau": 7, "every_days": 3, "from_a_newer_version": "x"}
        session.add(report)
    with session_scope() as session:
        report = session.get(Report, report_id)
        with pytest.raises(ReportSettingsError, match="every 1 to 365"):
            save_report_settings(session, report, every_days=400)
        saved = save_report_settings(session, report, max_sources=9)
        assert (saved.tau, saved.every_days, saved.max_sources) == (0.9, 3, 9)
        assert report.settings == {"every_days": 3, "max_sources": 9, "from_a_newer_version": "x"}


def test_a_scheduled_report_with_unreadable_settings_is_reported_not_dropped(
    workspace: Path,
) -> None:
    with session_scope() as session:
        report_id = load_sample(session)["report_id"]
        report = session.get(Report, report_id)
        report.settings = {"every_days": "weekly"}
        session.add(report)
    rows = run_due()
    assert [(r["report_id"], r["status"]) for r in rows] == [(report_id, "not started")]
    assert "The schedule must be every 1 to 365 days" in rows[0]["error"]


def test_the_cli_can_set_what_the_settings_screen_sets(workspace: Path) -> None:
    assert run(workspace, "demo").returncode == 0
    r = run(
        workspace,
        "settings",
        "1",
        "--tau",
        "0.8",
        "--writer",
        "offline",
        "--every-days",
        "7",
        "--max-sources",
        "12",
        "--max-section-words",
        "300",
        "--concurrency",
        "3",
        "--max-sections",
        "5",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "report_id": 1,
        "tau": 0.8,
        "writer": "offline",
        "every_days": 7,
        "max_sources": 12,
        "max_section_words": 300,
        "concurrency": 3,
        "max_sections": 5,
    }
    back = json.loads(run(workspace, "settings", "1", "--writer", "default", "--json").stdout)
    assert back["writer"] is None and back["tau"] == 0.8


def test_the_app_and_the_cli_give_the_same_words_for_the_same_bad_tau(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    assert run(workspace, "demo").returncode == 0
    # a τ typed at the CLI: the line the core gives, as is
    typed = run(workspace, "settings", "1", "--tau", "1.5")
    with pytest.raises(ReportSettingsError) as err:
        ReportSettings.parse({"tau": 1.5})
    assert typed.returncode == 1 and typed.stderr.strip() == f"Error: {err.value}"
    # a τ stored out of bounds: the CLI's note and the Settings screen's warning agree
    with session_scope() as session:
        report = session.get(Report, 1)
        report.settings = {"tau": 1.5}
        session.add(report)
    shown = run(workspace, "settings", "1", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["tau"] == 0.9
    note = shown.stderr.strip().removeprefix("note: ")
    assert note.startswith(str(err.value))
    at = ok(AppTest.from_file(APP, default_timeout=90).run())
    ok(at.switch_page("pages/settings.py").run())
    assert escape_all(note) in [w.value for w in at.warning]
    low, high = ReportSettings.bounds("tau")
    tau = at.slider(key="set_tau")
    assert (tau.min, tau.max, tau.value) == (low, high, 0.9)  # the screen's own bounds
    ok(next(b for b in at.button if b.label == "Save").click().run())  # saving repairs it
    with session_scope() as session:
        assert session.get(Report, 1).settings["tau"] == 0.9
    assert run(workspace, "settings", "1").stderr == ""
