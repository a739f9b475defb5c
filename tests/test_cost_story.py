"""Cost meters that tell the story: each cited page fetched once per update, the
from-scratch baseline stored with each run, one "saved vs starting over" line, meters that
are always zero for the writer hidden, fixed stage colours, and "writer calls" explained."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from core.app.actions import review
from core.app.cost_display import (
    STAGE_COLORS,
    format_value,
    headline,
    label_of,
    meter_delta,
    meter_value,
    saved,
    stage_color,
    visible_fields,
)
from core.app.cost_views import SCRATCH_KEY, run_costs, scratch_cost, scratch_for_run, update_costs
from core.dates import parse_as_of
from core.engine.costs import LLM_FIELDS, METER_FIELDS, POOL_FIELDS
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.models import CostEvent, UpdateRun
from core.workspace import load_sample

CITED = 14  # the sample report's cited pages
CHANGED_BY_APRIL = 5  # of them, changed between 2026-01-15 and 2026-04-15 (4 material, 1 minor)


def _sample(unresolved: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the sample; ``unresolved``: as if the import could not read the cited pages
    (they are resolved by the first update instead)."""
    if unresolved:
        monkeypatch.setattr("core.app.importer._resolve", lambda *_a, **_k: {})
    with session_scope() as session:
        load_sample(session)


def _first_update_costs(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The cost read model of the sample's first update (2026-04-15)."""
    _sample(unresolved=False, monkeypatch=monkeypatch)
    run_id = update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"]
    with session_scope() as session:
        return run_costs(session, run_id)


def _fetches_by_stage(run_id: int) -> Counter:
    with session_scope() as session:
        events = session.exec(select(CostEvent).where(CostEvent.run_id == run_id)).all()
    counts: Counter = Counter()
    for event in events:
        if event.fetches:
            counts[event.stage] += event.fetches
    return counts


# -- each cited page fetched once ---------------------------------------------------------
def test_update_of_an_unchanged_world_fetches_each_cited_page_once(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample(unresolved=True, monkeypatch=monkeypatch)
    result = update_report(1, as_of=parse_as_of("2026-01-15"))
    assert result["evidence"]["unchanged"] == CITED
    # a rebuild would fetch each page once; the update did no more (it was 28: resolve + refresh)
    assert result["cost"]["fetches"] == CITED
    assert _fetches_by_stage(result["run_id"]) == Counter({"refresh": CITED})


def test_an_unresolved_import_reads_only_changed_pages_twice_and_still_finds_the_changes(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample(unresolved=True, monkeypatch=monkeypatch)
    result = update_report(1, as_of=parse_as_of("2026-04-15"))
    # the truth behaviour is kept: the changes are classified against the cited version
    assert result["evidence"] == {
        "checked": CITED, "unchanged": 9, "minor": 1, "material": 4, "changed": 0, "gone": 0,
        "new": 4,
    }  # fmt: skip
    assert result["actions"]["revise"] >= 3
    by_stage = _fetches_by_stage(result["run_id"])
    assert by_stage["refresh"] == CITED  # every cited page once, as of the update
    assert by_stage["resolve"] == CHANGED_BY_APRIL  # only a changed page's cited version
    assert result["cost"]["fetches"] == CITED + CHANGED_BY_APRIL + 4  # was 32


def test_a_resolved_sample_update_fetches_no_more_than_starting_over(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample(unresolved=False, monkeypatch=monkeypatch)
    result = update_report(1, as_of=parse_as_of("2026-04-15"))
    with session_scope() as session:
        costs = run_costs(session, result["run_id"])
    assert costs["totals"]["fetches"] == 18
    assert costs["totals"]["fetches"] <= costs["scratch"]["totals"]["fetches"]


# -- the baseline stored with each run ----------------------------------------------------
def test_each_update_keeps_the_from_scratch_baseline_of_its_day(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample(unresolved=False, monkeypatch=monkeypatch)
    first = update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"]
    review(first, approve_all=True, commit=True)
    second = update_report(1, as_of=parse_as_of("2026-10-15"))["run_id"]
    review(second, approve_all=True, commit=True)
    with session_scope() as session:
        run = session.get(UpdateRun, first)
        stored = run.summary[SCRATCH_KEY]
        assert stored["totals"]["fetches"] == 18  # the pool when the first update finished
        today = scratch_cost(session, 1)["totals"]["fetches"]
        assert today > 18  # the pool grew since
        rows = {c["run_id"]: c for c in update_costs(session, 1)}
        assert rows[first]["scratch"]["fetches"] == 18 and rows[first]["stored"]
        assert rows[second]["scratch"]["fetches"] == today
        assert run_costs(session, first)["scratch"]["totals"]["fetches"] == 18
        # a run from before baselines were stored: today's, and said so
        run.summary = {k: v for k, v in run.summary.items() if k != SCRATCH_KEY}
        session.add(run)
        session.flush()
        fallback = scratch_for_run(session, run)
        assert not fallback["stored"] and fallback["totals"]["fetches"] == today
        assert "computed today" in fallback["basis"]


def test_an_estimated_baseline_has_a_time_at_the_updates_pace(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    costs = _first_update_costs(monkeypatch)
    assert costs["scratch"]["estimated"]
    assert costs["scratch"]["totals"]["seconds"] > 0
    scratch_stages = {s["stage"]: s["seconds"] for s in costs["scratch"]["stages"]}
    assert scratch_stages["fetch"] > 0 and scratch_stages["search"] > 0
    assert sum(scratch_stages.values()) == pytest.approx(costs["scratch"]["totals"]["seconds"])
    assert "seconds" in costs["fields"]
    stages = {s["stage"]: s for s in costs["stages"]}
    assert stages["refresh"]["seconds"] > 0  # time per stage, from CostEvent.seconds


# -- what the meters say ------------------------------------------------------------------
def test_saved_is_positive_when_the_update_spent_less() -> None:
    run = {"searches": 1, "fetches": 6, "tokens_in": 0, "tokens_out": 0, "usd": 0, "seconds": 1.4}
    scratch = {"searches": 9, "fetches": 18, "usd": 0, "seconds": 3.2}
    rows = {r["name"]: r for r in saved(run, scratch)}
    assert rows["fetches"]["saved"] == 12 and rows["fetches"]["share"] == pytest.approx(2 / 3)
    assert rows["searches"]["saved"] == 8
    line = headline(run, scratch, ["searches", "fetches", "seconds"])
    assert line == (
        "Saved vs starting over: 8 of 9 searches (89%), 12 of 18 fetches (67%), "
        "1.8 s of 3.2 s (56%)."
    )


def test_spending_more_than_from_scratch_reads_as_more_without_double_negatives() -> None:
    line = headline({"fetches": 25}, {"fetches": 18}, ["fetches"])
    assert line == "Saved vs starting over: 7 fetches more (25 vs 18)."
    text, tone = meter_delta("fetches", 25, 18)
    assert text == "7 more than from scratch" and tone == "bad"
    text, tone = meter_delta("fetches", 6, 18)
    assert text == "12 fewer than from scratch" and tone == "good"
    for words in (line, text):
        assert "-" not in words and "↓" not in words


def test_money_and_time_are_formatted_sensibly() -> None:
    assert format_value("usd", 0) == "$0.00"
    assert format_value("usd", 0.00004) == "<$0.01"
    assert format_value("usd", 1.234) == "$1.23"
    assert format_value("seconds", 0.06) == "0.06 s"
    assert format_value("seconds", 3.24) == "3.2 s"
    assert format_value("seconds", 125) == "2 min 5 s"
    assert format_value("fetches", 1234) == "1,234"


def test_meters_always_zero_for_the_offline_writer_are_hidden() -> None:
    zero = dict.fromkeys(METER_FIELDS, 0)
    offline = visible_fields(False, zero, zero)
    assert offline == ["searches", "fetches", "seconds"]
    assert visible_fields(True, zero) == [k for k in METER_FIELDS if k not in POOL_FIELDS]
    spent = {**zero, "tokens_in": 10}  # an earlier LLM run's tokens stay visible
    assert "tokens_in" in visible_fields(False, spent)


def test_the_shared_pool_meters_show_when_used_and_are_not_compared_with_scratch() -> None:
    zero = dict.fromkeys(METER_FIELDS, 0)
    rechecked = {**zero, "fetches": 1, "bytes": 2_500, "not_modified": 3, "shared_checks": 2}
    shown = visible_fields(False, rechecked, {**zero, "fetches": 6, "bytes": 40_000})
    assert shown == ["searches", "fetches", "bytes", "not_modified", "shared_checks", "seconds"]
    assert meter_value("bytes", 2_500) == "2.5 kB" and meter_value("bytes", 812) == "812 B"
    assert meter_delta("bytes", 2_500, 40_000) == ("37.5 kB less than from scratch", "good")
    # a baseline with no bytes (an estimate from pages) is no reason to say "more"
    assert meter_delta("bytes", 35_300, 0) == (None, "off")
    assert meter_delta("not_modified", 3, 0) == (None, "off")
    assert meter_delta("shared_checks", 2, 0) == (None, "off")
    assert label_of("not_modified") == "unchanged (304)"


def test_a_stage_has_one_colour_in_every_run() -> None:
    assert stage_color("refresh") == STAGE_COLORS["refresh"]
    assert stage_color("refresh") != stage_color("fetch")
    assert stage_color("some-new-stage") == stage_color("some-new-stage")
    assert len(set(STAGE_COLORS.values())) == len(STAGE_COLORS)


def test_the_offline_sample_run_explains_writer_calls_and_hides_llm_meters(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    costs = _first_update_costs(monkeypatch)
    assert not set(LLM_FIELDS) & set(costs["fields"])
    assert costs["writer_note"].startswith(f"{costs['totals']['writer_calls']} writer calls")
    assert "extractive" in costs["writer_note"] and "no LLM calls" in costs["writer_note"]
    assert costs["headline"].startswith("Saved vs starting over: 7 of 9 searches (78%)")


def test_a_run_that_called_a_model_is_explained_as_such_whatever_the_writer_is_now(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note on writer calls describes the run's writer, read from what it spent, not
    the one configured today (a run made with EVERGREEN_LLM=openai, viewed without it)."""
    _sample(unresolved=False, monkeypatch=monkeypatch)
    run_id = update_report(1, as_of=parse_as_of("2026-04-15"))["run_id"]
    with session_scope() as session:
        session.add(
            CostEvent(
                run_id=run_id,
                stage="revise",
                provider="openai",
                model="gpt-4o-mini",
                llm_calls=1,
                tokens_in=2000,
                tokens_out=300,
                prompt="extend_sections@1",
            )
        )
    with session_scope() as session:
        costs = run_costs(session, run_id)
    assert "extractive" not in costs["writer_note"]
    assert "they made 1 LLM call" in costs["writer_note"]
    assert "tokens_in" in costs["fields"]


# -- the screens --------------------------------------------------------------------------
def test_review_and_history_show_the_saved_line_and_no_empty_meters(app: AppTest) -> None:
    app.selectbox(key="asof_1").select("2026-04-15").run()
    app.button(key="update_1").click().run()
    app.button(key="review_1").click().run()
    assert not app.exception, app.exception
    page = "\n".join(str(m.value) for m in app.markdown) + "\n".join(
        str(c.value) for c in app.caption
    )
    assert "Saved vs starting over: 7 of 9 searches (78%)" in page
    assert "extractive" in page
    labels = [m.label for m in app.metric]
    assert "fetches" in labels and "time (s)" in labels and "writer calls" in labels
    assert not {"tokens in", "tokens out", "$", "LLM calls"} & set(labels)
    shown = [str(m.value) for m in app.metric] + [str(m.proto.delta) for m in app.metric]
    assert not any("$0.0000" in v or "vs scratch" in v or "-" in v for v in shown)
    app.button(key="approve_all").click().run()
    app.button(key="commit").click().run()
    assert not app.exception, app.exception
    app.switch_page("pages/history.py").run()
    assert not app.exception, app.exception
    options = app.segmented_control(key="history_cost_metric").options
    assert options == ["searches", "fetches", "bytes read", "time (s)"]
    captions = "\n".join(str(c.value) for c in app.caption)
    assert "as it stood when the update finished" in captions


def test_a_resumed_update_of_an_unresolved_import_fetches_nothing_twice(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.engine.stages
    from core.engine.update import resume_run

    _sample(unresolved=True, monkeypatch=monkeypatch)
    real, calls = core.engine.stages.discover, []

    def flaky(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("search down after the refresh")
        return real(*args, **kwargs)

    monkeypatch.setattr("core.engine.stages.discover", flaky)
    with pytest.raises(RuntimeError):
        update_report(1, as_of=parse_as_of("2026-04-15"))
    with session_scope() as session:
        run_id = session.exec(select(UpdateRun.id).where(UpdateRun.kind == "update")).one()
    before = _fetches_by_stage(run_id)
    assert before == Counter({"refresh": CITED, "resolve": CHANGED_BY_APRIL})
    result = resume_run(run_id)
    after = _fetches_by_stage(run_id)
    assert after - before == Counter({"fetch": 4})  # only the new pages discovery found
    assert result["evidence"]["unchanged"] == 9 and result["evidence"]["material"] == 4


# -- the baseline is starting over as of the same day ---------------------------------------
QUESTION = "What are the costs and technologies of grid battery storage, and which policies apply?"


def test_an_update_is_compared_with_starting_over_as_of_its_own_day(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report created in January is not what starting over in October costs: the
    update is set against an estimate from the report's size (labelled so) until a
    rebuild as of October exists, and then against that rebuild."""
    from core.engine.creation import create_report

    with session_scope() as session:
        load_sample(session)
    made = create_report(QUESTION, as_of=parse_as_of("2026-01-15"))
    report = made["report_id"]
    run_id = update_report(report, as_of=parse_as_of("2026-10-15"))["run_id"]
    with session_scope() as session:
        before = run_costs(session, run_id)["scratch"]
    assert before["estimated"] and "estimate" in before["basis"]
    assert f"run {made['run_id']}" not in before["basis"]  # not January's creation

    rebuilt = create_report(QUESTION, as_of=parse_as_of("2026-10-15"), baseline_of=report)
    with session_scope() as session:
        run = session.get(UpdateRun, run_id)
        run.summary = {k: v for k, v in run.summary.items() if k != SCRATCH_KEY}
        session.add(run)
        session.flush()
        after = run_costs(session, run_id)["scratch"]
        same_day = scratch_cost(session, report, parse_as_of("2026-10-15"))
        january = scratch_cost(session, report, parse_as_of("2026-01-15"))
    assert not after["estimated"]
    assert after["basis"] == f"baseline report {rebuilt['report_id']} (run {rebuilt['run_id']})"
    assert same_day["basis"] == after["basis"]
    assert january["basis"] == f"this report's from-scratch research (run {made['run_id']})"
