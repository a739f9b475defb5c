"""A decision or a commit made on a stale view is refused (issue 43 item 2): each carries
the state of the sections as the screen showed them; if another tab or the command line
changed one since, nothing is written and the notice says what the section is now,
decided where and when."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.app import actions
from core.dates import parse_as_of
from core.engine.audit import Actor
from core.engine.review import get_run, proposals_of, state_of
from core.engine.update import update_report
from core.errors import StaleViewError
from core.states import Decision
from core.store.db import session_scope
from tests.helpers.apptest import ok

ROOT = Path(__file__).resolve().parents[1]
ANA = Actor("ana", "cli")


def _run() -> int:
    return int(update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"])


def _decisions(run_id: int) -> dict[str, tuple[str, str | None]]:
    with session_scope() as session:
        return {p.key: (p.decision, p.decided_via) for p in proposals_of(session, run_id)}


def _shown(run_id: int) -> dict[str, tuple[str, bool]]:
    with session_scope() as session:
        return {p.key: state_of(p) for p in proposals_of(session, run_id)}


def _pending(run_id: int) -> list[str]:
    return [k for k, (decision, _edited) in _shown(run_id).items() if decision == "pending"]


def test_a_decision_on_a_stale_view_is_refused_and_changes_nothing(sample_workspace: Path) -> None:
    run_id = _run()
    shown = _shown(run_id)  # what tab A drew
    first, second = _pending(run_id)[:2]
    actions.review(run_id, reject=[first], actor=ANA)  # the command line, meanwhile
    with pytest.raises(StaleViewError) as refused:
        actions.decide_on(run_id, approve=[first], seen={first: shown[first]})
    message = str(refused.value)
    assert "was rejected by ana from the command line at 20" in message and " UTC" in message
    assert "after this page showed it pending" in message and "not saved" in message
    assert _decisions(run_id)[first] == (Decision.REJECTED, "cli")
    # a section nobody touched is decided as before, and stamped with its door
    actions.decide_on(run_id, approve=[second], seen={second: shown[second]})
    assert _decisions(run_id)[second] == (Decision.APPROVED, "app")
    # a view drawn after the change is fresh
    actions.decide_on(run_id, approve=[first], seen={first: _shown(run_id)[first]})
    assert _decisions(run_id)[first] == (Decision.APPROVED, "app")


def test_approve_all_and_commit_on_a_stale_view_are_refused(sample_workspace: Path) -> None:
    run_id = _run()
    shown = _shown(run_id)
    first = _pending(run_id)[0]
    actions.decide_on(run_id, reject=[first], actor=ANA)
    with pytest.raises(StaleViewError):
        actions.decide_on(run_id, approve_all=True, seen=shown)
    assert set(_pending(run_id)) == {k for k, (d, _e) in shown.items() if d == "pending"} - {first}
    actions.decide_on(run_id, approve_all=True, seen=_shown(run_id))
    decided = _shown(run_id)  # every section decided, as the screen shows them
    actions.decide_on(run_id, approve=[first], actor=ANA)  # changed from elsewhere again
    with pytest.raises(StaleViewError) as refused:
        actions.commit(run_id, seen=decided)
    assert "your commit was not saved" in str(refused.value)
    with session_scope() as session:
        assert get_run(session, run_id).status == "awaiting_review"  # no version written
    assert actions.commit(run_id, seen=_shown(run_id)) == 2


def test_the_review_screen_refuses_a_click_on_a_section_the_cli_decided(
    app: AppTest,
) -> None:
    """Tab A shows the run; the command line rejects a section; tab A's Approve on that
    card is refused with the notice and the card redraws as rejected."""
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    ok(app.button(key="review_1").click().run())
    run_id = int(app.session_state["eg_run"])
    key = next(b.key.removeprefix("approve:") for b in app.button if b.key.startswith("approve:"))
    cli = subprocess.run(
        [sys.executable, "-m", "core.cli", "review", str(run_id), "--reject", key],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    ok(app.button(key=f"approve:{key}").click().run())
    notices = " ".join(e.value for e in app.error)
    assert "was rejected by" in notices and "from the command line at" in notices, notices
    assert _decisions(run_id)[key] == (Decision.REJECTED, "cli")
    assert app.button(key=f"reject:{key}").disabled  # the card now shows it rejected
