"""Every screen through Streamlit's AppTest, and the analyst's full flow:
create → Update now → approve one section, reject another → commit → export MD and PDF.

Runs are done synchronously here (EVERGREEN_JOBS=sync); the background worker is
tested in test_app_jobs.py and in the browser.
"""

from __future__ import annotations

import html
from pathlib import Path

import pymupdf
import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from core.dates import parse_as_of
from core.engine.update import begin_update
from core.errors import EvergreenError
from core.store.db import session_scope
from core.store.models import Report, SectionProposal, UpdateRun
from core.store.repository import get_report, get_version, sections_of
from tests.helpers.apptest import ok

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_REPORT = ROOT / "data" / "sample" / "report.md"
QUESTION = "Which grid battery storage projects are under construction and what do they cost?"
PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'


def texts(at: AppTest) -> str:
    """Everything the page shows as text or HTML."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [h.value for h in at.title] + [h.value for h in at.subheader]
    parts += [e.value for e in at.success] + [e.value for e in at.error]
    parts += [e.value for e in at.info] + [e.value for e in at.warning]
    parts += [h.proto.body for h in at.get("html")]
    return "\n".join(str(p) for p in parts)


def changed_keys(at: AppTest) -> list[str]:
    return [b.key.removeprefix("approve:") for b in at.button if b.key.startswith("approve:")]


# -- Reports (home) ----------------------------------------------------------------------
def test_home_lists_the_sample_report_ready_to_update(app: AppTest) -> None:
    page = texts(app)
    assert "Grid-Scale Battery Energy Storage" in page
    assert "Where does grid-scale battery energy storage stand" in page
    assert "version 1 as of 2026-01-15" in page and "14 sources" in page
    assert "Last update&#x27;s cost" in page or "Last update's cost" in page
    assert app.button(key="update_1").label == "Update now"
    options = app.selectbox(key="asof_1").options
    assert options[0] == "now"
    assert {"2026-04-15", "2026-07-15", "2026-10-15"} <= set(options)
    assert "2026-01-15" not in options  # not after the current version


def test_update_now_gives_way_to_review_run_n_while_a_run_awaits_review(app: AppTest) -> None:
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    assert "needs review" in texts(app)
    assert app.button(key="review_1").label == "Review"
    assert "update_1" not in [b.key for b in app.button]  # no second update to start
    with session_scope() as session:
        run = session.exec(select(UpdateRun).where(UpdateRun.kind == "update")).one()
    review = app.button(key="review_run_1")
    assert review.label == f"Review run {run.id}"
    ok(review.click().run())
    assert app.button(key="commit").label == "Commit version"  # on the Review screen


def test_create_a_report_with_a_bad_question_shows_the_message(app: AppTest) -> None:
    ok(app.button(key="create").click().run())
    assert any("question is empty" in e.value for e in app.error)


def test_import_a_markdown_report_by_upload(app: AppTest) -> None:
    app.file_uploader(key="import_file").upload(
        "my-report.md", SAMPLE_REPORT.read_bytes(), "text/markdown"
    )
    app.text_area(key="import_question").input("Where does battery storage stand?")
    app.text_input(key="import_as_of").input("2026-01-15")
    ok(app.button(key="import").click().run())
    # the demo workspace imported the same file already: the app asks before a second copy
    assert any("already imported" in w.value for w in app.warning)
    ok(app.button(key="import_anyway").click().run())
    assert any("Imported report 2" in s.value for s in app.success)
    with session_scope() as session:
        report = get_report(session, 2)
        assert report.query == "Where does battery storage stand?"
        assert get_version(session, report).number == 1


# -- the full flow ---------------------------------------------------------------------------
def test_full_flow_create_update_review_commit_export(
    app: AppTest, downloads: dict[str, bytes]
) -> None:
    at = app
    at.text_area(key="new_question").input(QUESTION)
    at.selectbox(key="new_source").select("sample")
    at.selectbox(key="new_as_of").select("2026-01-15")
    ok(at.button(key="create").click().run())
    assert any("Created report 2" in s.value for s in at.success)

    at.selectbox(key="asof_2").select("2026-07-15")
    ok(at.button(key="update_2").click().run())
    assert at.session_state["eg_run"]
    ok(at.button(key="review_2").click().run())  # switches to the Review screen
    page = texts(at)
    assert "Cost of this run" in page and "Saved vs starting over" in page
    assert not at.get("plotly_chart")  # the stage bars are drawn on request
    ok(at.toggle(key=f"stage_chart_{at.session_state['eg_run']}").set_value(True).run())
    assert len(at.get("plotly_chart")) == 1
    assert 'class="eg-diff"' in page and "eg-ins" in page  # side-by-side word diff
    keys = changed_keys(at)
    assert len(keys) >= 2, keys
    approved, rejected = keys[0], keys[1]
    ok(at.button(key=f"approve:{approved}").click().run())
    ok(at.button(key=f"reject:{rejected}").click().run())
    assert at.button(key="commit").disabled == (len(keys) > 2)
    if len(keys) > 2:
        ok(at.button(key="approve_all").click().run())
    ok(at.button(key="commit").click().run())
    assert any("Committed version 2" in s.value for s in at.success)

    with session_scope() as session:
        run_id = at.session_state["eg_run"]
        run = session.get(UpdateRun, run_id)
        assert run.status == "committed"
        decisions = {
            p.key: p.decision
            for p in session.exec(select(SectionProposal).where(SectionProposal.run_id == run_id))
        }
        assert decisions[approved] == "approved" and decisions[rejected] == "rejected"
        report = get_report(session, 2)
        version = get_version(session, report)
        assert version.number == 2
        by_key = {s.key: s for s in sections_of(session, version.id)}
        assert by_key[rejected].status == "kept"
        assert by_key[approved].status in ("revised", "extended")

    ok(at.switch_page("pages/report.py").run())
    assert at.selectbox(key="version_pick_2").value == 2
    md = downloads[next(n for n in downloads if n.endswith(" — v2.md"))]
    assert md.decode().startswith("# ") and "## References" in md.decode()
    assert md.decode().split("\n")[2].startswith("_Version 2 · as of 2026-07-15 · ")
    ok(at.button(key="make_pdf").click().run())
    pdf = downloads[next(n for n in downloads if n.endswith(" — v2.pdf"))]
    assert pdf.startswith(b"%PDF")
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        text = " ".join(page.get_text() for page in doc)
    assert "References" in text and "Which grid battery storage projects" in text

    ok(at.switch_page("pages/history.py").run())
    assert len(at.get("plotly_chart")) == 4
    ok(at.switch_page("pages/evidence.py").run())
    assert "source(s) in this report" in texts(at)


def test_edit_a_section_before_approving(app: AppTest) -> None:
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    ok(app.button(key="review_1").click().run())
    key = changed_keys(app)[0]
    app.text_area(key=f"edit:{key}").input("Rewritten by the analyst [4].")
    ok(app.button(key=f"save:{key}").click().run())
    with session_scope() as session:
        p = session.exec(select(SectionProposal).where(SectionProposal.key == key)).one()
        assert p.analyst_text == "Rewritten by the analyst [4]." and p.decision == "approved"
    assert "approved (edited)" in texts(app)


# -- the other screens -----------------------------------------------------------------------
def test_report_screen_links_citations_to_references(app: AppTest) -> None:
    ok(app.switch_page("pages/report.py").run())
    page = texts(app)
    assert 'href="#ref-1"' in page and 'id="ref-1"' in page
    assert "fetched 2026-01-15" in page
    assert "Version 1 · as of 2026-01-15 · " in page  # under the title
    assert "Only one version so far" in page
    row = app.dataframe[0].value.iloc[0]
    assert row["stale claims"] == 0 and row["claim support"].startswith("supported ")
    assert app.get("download_button")


def test_pdf_failure_shows_a_clear_error(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(markdown: str, **_: object) -> bytes:
        raise EvergreenError("Could not render the PDF (test).")

    monkeypatch.setattr("core.domain.pdf.markdown_to_pdf", broken)
    ok(app.switch_page("pages/report.py").run())
    ok(app.button(key="make_pdf").click().run())
    assert any("PDF export failed: Could not render the PDF (test)." in e.value for e in app.error)
    assert len(app.get("download_button")) == 1  # only the Markdown one


def test_evidence_screen_shows_pool_and_snapshot_diff(app: AppTest) -> None:
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    ok(app.switch_page("pages/evidence.py").run())
    page = texts(app)
    assert "Tessaly Storage Price Index" in page and "material" in page
    app.selectbox(key="evidence_source").select(4).run()
    page = texts(app)
    assert 'class="eg-diff"' in page and "Changed claims" in page


def test_history_and_settings_screens(app: AppTest) -> None:
    ok(app.switch_page("pages/history.py").run())
    assert "1 version(s)" in texts(app)
    ok(app.switch_page("pages/settings.py").run())
    assert any(
        row == "not set" for row in app.dataframe[0].value["value"].tolist()
    )  # keys: set / not set, never a value
    app.number_input(key="set_every_days").set_value(7)
    app.slider(key="set_tau").set_value(0.85)
    submit = next(b for b in app.button if b.label == "Save")
    ok(submit.click().run())
    with session_scope() as session:
        settings = session.get(Report, 1).settings
    assert settings["every_days"] == 7 and settings["tau"] == 0.85
    assert "Scheduled every 7 day(s)" in texts(app)


def test_settings_never_show_a_key(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-very-secret")
    ok(app.switch_page("pages/settings.py").run())
    values = app.dataframe[0].value["value"].tolist()
    assert "set" in values
    assert "sk-test-very-secret" not in repr(app._tree)


def test_review_of_hostile_text_is_escaped(app: AppTest) -> None:
    run_id = begin_update(1)
    with session_scope() as session:
        session.add(
            SectionProposal(
                run_id=run_id,
                key="technologies",
                action="revise",
                heading=f"Heading {PAYLOAD}",
                level=2,
                order=1,
                old_text="Old text.",
                new_text=f"New text {PAYLOAD}",
                rationale=f"Because {PAYLOAD}",
                evidence=[
                    {
                        "marker": 1,
                        "url": "javascript:alert(1)",
                        "title": f"Evil {PAYLOAD}",
                        "kind": "material",
                        "similarity": 0.95,
                        "reasons": [PAYLOAD],
                        "claims": [{"before": "x", "after": PAYLOAD}],
                        "old_date": "2026-01-15",
                        "new_date": "2026-04-15",
                    }
                ],
            )
        )
        run = session.get(UpdateRun, run_id)
        run.status = "awaiting_review"
        session.add(run)
    app.session_state["eg_run"] = run_id
    ok(app.switch_page("pages/review.py").run())
    page = "\n".join(h.proto.body for h in app.get("html"))
    assert "<script>window" not in page and "<img src=x" not in page
    assert html.escape("<script>window.__pwned=1</script>") in page
    assert 'href="javascript:' not in page


def test_review_offers_resume_for_a_failed_update(
    app: AppTest,
    refresh_fails_once: list[int],  # noqa: ARG001 - used for its effect
) -> None:
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    ok(app.switch_page("pages/review.py").run())
    assert any("network down" in e.value for e in app.error)
    ok(app.button(key="resume_run").click().run())
    assert "awaiting review" in texts(app)
    assert changed_keys(app)


def test_a_report_held_by_a_run_links_to_that_run_on_the_review_screen(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.engine import jobs

    real_start, started = jobs.start_update, []

    def lost_the_race(report_id: int, **kwargs: object) -> int:
        started.append(begin_update(report_id, as_of=parse_as_of("2026-04-15")))  # another tab
        return real_start(report_id, **kwargs)

    monkeypatch.setattr(jobs, "start_update", lost_the_race)
    app.selectbox(key="asof_1").select("2026-04-15").run()
    ok(app.button(key="update_1").click().run())
    run_id = started[0]
    assert [e.value for e in app.error] == [f"Run {run_id} of report 1 is in progress."]
    [link] = app.get("page_link")  # the app's way on; a command is the CLI's
    assert link.proto.page == "review"
    assert link.proto.query_string == f"report=1&run={run_id}"
    app.query_params["report"], app.query_params["run"] = "1", str(run_id)
    ok(app.switch_page("pages/review.py").run())  # the link's address opens that run
    assert app.session_state["eg_run"] == run_id and app.session_state["eg_report"] == 1


def _sample_then(workspace: Path, *updates: str, second: bool = False) -> None:
    """The sample report updated (approved) to each of ``updates``; with ``second``, the
    sample's Markdown imported again as report 2 (version 1 only, as of 2026-01-15)."""
    from tests.conftest import run_cli

    for as_of in updates:
        done = run_cli(workspace, "update", "1", "--as-of", as_of, "--approve-all")
        assert done.returncode == 0, done.stderr
    if second:
        sample = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"
        done = run_cli(workspace, "import-report", str(sample), "--query", "Storage?",
                       "--as-of", "2026-01-15", "--allow-duplicate")  # fmt: skip
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("sample_workspace", ["sqlite"], indirect=True)  # screens only
def test_switching_reports_shows_each_report_s_own_latest_version(
    sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Report screen never shows a version of another report than the one named above
    it: a version picked for one report (its version 1) does not select the other's
    version 1 — each report opens on its latest, or on the version picked for it."""
    from tests.conftest import APP

    # report 1: versions 1 to 3; report 2: version 1 only
    _sample_then(sample_workspace, "2026-04-15", "2026-07-15", second=True)
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    at = AppTest.from_file(APP, default_timeout=90).run()
    ok(at.switch_page("pages/report.py").run())

    def shown() -> tuple[int, int]:
        report = at.selectbox(key="report_report_pick").value
        return report, at.selectbox(key=f"version_pick_{report}").value

    ok(at.selectbox(key="report_report_pick").set_value(2).run())
    assert shown() == (2, 1)
    ok(at.selectbox(key="report_report_pick").set_value(1).run())
    assert shown() == (1, 3)  # its latest, not the number just read on report 2
    ok(at.selectbox(key="version_pick_1").set_value(2).run())
    ok(at.selectbox(key="report_report_pick").set_value(2).run())
    assert shown() == (2, 1)
    ok(at.selectbox(key="report_report_pick").set_value(1).run())
    assert shown() == (1, 2)  # the version picked for it stays picked
    assert "version 2 · as of 2026-04-15" in at.selectbox(key="version_pick_1").format_func(2)


@pytest.mark.parametrize("sample_workspace", ["sqlite"], indirect=True)  # screens only
def test_the_timeline_speaks_of_what_is_kept_not_of_metric_names(
    sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import APP

    _sample_then(sample_workspace, "2026-04-15")
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    at = AppTest.from_file(APP, default_timeout=90).run()
    ok(at.switch_page("pages/report.py").run())
    columns = [str(c) for frame in at.dataframe for c in frame.value.columns]
    assert "wording kept" in columns and "headings kept" in columns
    assert not [c for c in columns if "ROUGE" in c or "BLEU" in c or "EM F1" in c]


@pytest.mark.parametrize("sample_workspace", ["sqlite"], indirect=True)  # screens only
def test_a_link_names_the_report_and_version_on_every_screen(
    sample_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``?report=R`` opens Report, Evidence and History on report R, and
    ``&version=N`` the Report screen on that version; a link to nothing opens as usual."""
    from tests.conftest import APP

    _sample_then(sample_workspace, "2026-04-15", second=True)
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    for page, picker in (
        ("pages/evidence.py", None),
        ("pages/history.py", None),
        ("pages/report.py", "version_pick_1"),
    ):
        at = AppTest.from_file(APP, default_timeout=90).run()
        at.switch_page(page)
        at.query_params["report"] = "2"
        ok(at.run())
        assert [s.value for s in at.selectbox if s.key.endswith("report_pick")] == [2], page
        at.switch_page(page)
        at.query_params["report"] = "1"
        at.query_params["version"] = "1"
        ok(at.run())
        assert [s.value for s in at.selectbox if s.key.endswith("report_pick")] == [1], page
        if picker:
            assert at.selectbox(key=picker).value == 1  # not its latest (2): the link's
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page("pages/report.py")
    at.query_params["report"] = "99"
    ok(at.run())  # no report 99: the screen opens as usual, on a report it has
    assert at.selectbox(key="version_pick_1").value == 2
