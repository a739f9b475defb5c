"""Who decided what (issue 45 item 7): every decision, edit, commit, archive, delete and
settings change records who made it, through which door and when; History shows the
trail, a version and its export say who committed it, and the trail outlives a deleted
report."""

from __future__ import annotations

import getpass
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.app import actions
from core.app.history_views import audit_trail
from core.dates import parse_as_of
from core.engine.audit import Actor, events_of
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.models import ReportVersion
from core.store.repository import get_report, get_version
from tests.conftest import run_cli
from tests.helpers.apptest import ok

ANA = Actor("ana@example.org", "app")
BO = Actor("bo", "cli")


def _trail(report_id: int) -> list[tuple[str, str, str]]:
    with session_scope() as session:
        return [(e.actor, e.via, e.action) for e in events_of(session, report_id)]


def _pending(run_id: int) -> list[str]:
    with session_scope() as session:
        return [p.key for p in proposals_of(session, run_id) if p.decision == "pending"]


def test_every_change_records_who_made_it_and_survives_a_delete(sample_workspace: Path) -> None:
    run_id = int(update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"])
    first, second, *rest = _pending(run_id)
    actions.decide_on(run_id, approve=[first], actor=ANA)
    actions.decide_on(run_id, edits={second: "Edited by hand [1]."}, actor=ANA)
    actions.review(run_id, reject=rest, commit=True, actor=BO)
    with session_scope() as session:
        version = get_version(session, get_report(session, 1))
        assert version.number == 2 and version.committed_by == "bo"
        decided = {p.key: (p.decided_by, p.decided_via) for p in proposals_of(session, run_id)}
    assert decided[first] == ("ana@example.org", "app")
    assert decided[rest[0]] == ("bo", "cli")
    markdown = actions.markdown(1)
    assert " · committed by bo on 20" in markdown.splitlines()[2]
    actions.settings(1, tau=0.8, actor=BO)
    actions.archive(1, actor=ANA)
    actions.unarchive(1, actor=ANA)
    trail = _trail(1)
    assert trail[:2] == [("ana@example.org", "app", "approved"), ("ana@example.org", "app", "edit")]
    assert ("bo", "cli", "rejected") in trail and ("bo", "cli", "commit") in trail
    assert trail[-3:] == [
        ("bo", "cli", "settings"),
        ("ana@example.org", "app", "archive"),
        ("ana@example.org", "app", "unarchive"),
    ]
    with session_scope() as session:
        shown = audit_trail(session, 1)
    assert shown[0]["what"] == "unarchive" and shown[0]["where"] == "app"
    assert any(r["what"] == "settings: tau = 0.8" for r in shown)
    assert any(r["what"] == "commit version 2" and r["who"] == "bo" for r in shown)
    actions.delete(1, actor=BO)
    with session_scope() as session:
        assert session.get(ReportVersion, version.id) is None  # the report is gone …
        deleted = events_of(session, 1)[-1]
    assert (deleted.actor, deleted.action) == ("bo", "delete")  # … its trail is not
    assert deleted.detail["title"].startswith("Grid-Scale Battery")


def test_the_cli_acts_as_its_user_or_as_named(sample_workspace: Path) -> None:
    done = run_cli(sample_workspace, "--as", "carol", "archive", "1")
    assert done.returncode == 0, done.stderr
    done = run_cli(sample_workspace, "unarchive", "1")
    assert done.returncode == 0, done.stderr
    assert _trail(1) == [("carol", "cli", "archive"), (getpass.getuser(), "cli", "unarchive")]


def test_history_shows_who_decided_what(app: AppTest) -> None:
    run_id = int(update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"])
    actions.review(run_id, approve_all=True, commit=True, actor=BO)
    app.switch_page("pages/history.py").run()
    ok(app)
    assert any(s.value == "Who decided what" for s in app.subheader)
    frames = [f.value for f in app.dataframe]
    trail = next(f for f in frames if "who" in f.columns)
    assert set(trail["who"]) == {"bo"} and "commit version 2" in set(trail["what"])
