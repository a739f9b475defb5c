"""Display labels: every stored state has a human label, and the read models the screens
use carry it next to the raw value (which code keeps comparing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.app.evidence_views import evidence_pool, snapshot_rows
from core.app.report_views import report_cards
from core.app.review_views import review_cards
from core.app.run_views import run_info, runs_of
from core.dates import parse_as_of
from core.domain import labels
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.models import ACTIONS, CHANGE_KINDS, DECISIONS, RUN_KINDS, RUN_STATUSES, UpdateRun
from core.workspace import load_sample


@pytest.mark.parametrize(
    ("values", "label"),
    [
        (RUN_STATUSES, labels.run_status_label),
        (RUN_KINDS, labels.run_kind_label),
        (ACTIONS, labels.action_label),
        (DECISIONS, labels.decision_label),
        ((*CHANGE_KINDS, "error"), labels.change_kind_label),
    ],
)
def test_every_stored_value_has_a_human_label(values, label) -> None:
    for value in values:
        text = label(value)
        assert text and text != value and "_" not in text, value
        assert text[0].isupper(), text


def test_labels_read_as_words() -> None:
    assert labels.run_status_label("awaiting_review") == "Awaiting review"
    assert labels.action_label("revise") == "Revised"
    assert labels.decision_label("pending") == "Pending"
    assert labels.change_kind_label("error") == "Unreachable"
    assert labels.run_status_label(None) == ""  # never the text "None"
    assert labels.run_status_label("some_new_state") == "Some new state"


@pytest.fixture
def sample_run(workspace: Path) -> tuple[int, int]:
    with session_scope() as s:
        report_id = load_sample(s)["report_id"]
    result = update_report(report_id, as_of=parse_as_of("2026-04-15"))
    return report_id, int(result["run_id"])


def test_read_models_carry_labels_next_to_raw_values(sample_run: tuple[int, int]) -> None:
    report_id, run_id = sample_run
    with session_scope() as s:
        info = run_info(s, run_id)
        assert info["status"] == "awaiting_review"
        assert info["status_label"] == "Awaiting review"
        assert info["kind_label"] == "Update"
        assert all(
            r["status_label"] and "_" not in r["status_label"] for r in runs_of(s, report_id)
        )
        card = next(c for c in report_cards(s) if c["id"] == report_id)
        assert card["open_run"]["status_label"] == "Awaiting review"
        cards = review_cards(s, run_id)
        revised = next(c for c in cards if c["action"] == "revise")
        assert revised["action_label"] == "Revised"
        assert revised["decision_label"] in ("Pending", "Approved")
        rows = [e for c in cards for e in c["evidence"]]
        material = next(e for e in rows if e["kind"] == "material")
        assert material["kind_label"] == "Material change"
        assert "Material change" in revised["evidence_html"] or any(
            "Material change" in c["evidence_html"] for c in cards
        )
        pool = evidence_pool(s, report_id)
        assert all(p["status_label"] and "_" not in p["status_label"] for p in pool)
        snaps = snapshot_rows(s, pool[0]["source_id"])
        assert all(x["kind_label"] for x in snaps)
        run = s.get(UpdateRun, run_id)
        assert run is not None and run.status == "awaiting_review"  # raw values unchanged
