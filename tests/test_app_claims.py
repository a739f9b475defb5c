"""Claims in the app, through Streamlit's AppTest: the Review screen shows which claims
changed and how many would be left stale, every card (keep included) can be rejected and
revised by hand, the Report screen and History count stale claims and mark them in the
text, and exports carry a version line generated from the version.

Runs are done synchronously here (EVERGREEN_JOBS=sync), on the sample report updated to
2026-04-15, where Kestrel Flats grew from 100 MW / 400 MWh to 160 MW / 650 MWh.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from core.app.export import export_version
from core.domain.report_state import reading_numbers
from core.store.db import session_scope
from core.store.models import Claim, SectionProposal, UpdateRun
from core.store.repository import claims_of_version, get_report, get_version, load_doc, sections_of

DEPLOYMENTS = "deployments-and-project-pipeline"
KESTREL_LINE = "Kestrel Flats Storage Project [7]: Capacity: 100 MW / 400 MWh → 160 MW / 650 MWh"
KESTREL_SENTENCE = "Kestrel Flats Storage Project, sized at 100 MW / 400 MWh"
VERSION_LINE = re.compile(
    r"^_Version (\d+) · as of (\d{4}-\d{2}-\d{2}) · (\d+) claims?, (\d+) stale"
    r"(, \d+ unsupported)?_$"
)
PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """Everything the page shows as text or HTML (HTML entities decoded)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.success] + [e.value for e in at.error]
    parts += [e.value for e in at.info] + [e.value for e in at.warning]
    parts += [h.proto.body for h in at.get("html")]
    return html.unescape("\n".join(str(p) for p in parts))


def review_update(at: AppTest, as_of: str = "2026-04-15") -> AppTest:
    """Update the sample report to ``as_of`` and open its run on the Review screen."""
    at.selectbox(key="asof_1").select(as_of).run()
    ok(at.button(key="update_1").click().run())
    return ok(at.switch_page("pages/review.py").run())


def in_expander(at: AppTest, key: str) -> bool:
    return any(key in [t.key for t in e.text_area] for e in at.expander)


def decision_of(key: str) -> SectionProposal:
    with session_scope() as session:
        return session.exec(select(SectionProposal).where(SectionProposal.key == key)).one()


def make_writer_failure(key: str) -> None:
    """What a writer failure leaves: the section kept, pending, with a needs-attention flag."""
    with session_scope() as session:
        p = session.exec(select(SectionProposal).where(SectionProposal.key == key)).one()
        p.action, p.decision, p.new_text = "keep", "pending", p.old_text
        p.flags = ["needs attention: the writer failed (test); the section was kept as it was"]
        session.add(p)


def commit(at: AppTest) -> AppTest:
    if not at.button(key="approve_all").disabled:
        ok(at.button(key="approve_all").click().run())
    ok(at.button(key="commit").click().run())
    assert any("Committed version 2" in s.value for s in at.success)
    return at


# -- Review ----------------------------------------------------------------------------------
def test_review_shows_the_changed_claim_and_the_stale_count(app: AppTest) -> None:
    page = texts(review_update(app))
    assert KESTREL_LINE in page  # "<page title> [n]: <differences>"
    assert KESTREL_SENTENCE in page  # the report sentence it concerns
    assert "Copperline Storage Park [8]: Status: Proposed → Approved" in page
    # one plain sentence per changed claim, with the source and its snapshot dates
    assert (
        "Kestrel Flats Storage Project capacity: 100 MW / 400 MWh → 160 MW / 650 MWh "
        "(source [7], 15 Jan → 15 Apr)"
    ) in page
    # the draft rules' comments [10]
    assert "HGA capacity market status: Draft → Final; 2 passages it cites are gone" in page
    assert "2 stale claims if kept as is" in page
    assert "revised in the new text" in page
    for internal in ("awaiting_review", "snapshot_id", "old_snapshot"):
        assert internal not in page


def test_a_keep_card_has_edit_and_reject(app: AppTest) -> None:
    at = review_update(app)
    assert decision_of("preamble").action == "keep"
    assert at.button(key="keep:preamble").label == "Keep as is"
    assert at.button(key="reject:preamble").label == "Reject"
    assert at.text_area(key="edit:preamble") and in_expander(at, "edit:preamble")
    ok(at.button(key="reject:preamble").click().run())
    assert decision_of("preamble").decision == "rejected"
    assert not in_expander(at, "edit:preamble")  # the edit box is open: revise by hand
    assert "decision: <b>rejected (to be revised)</b>" in texts(at)
    assert at.button(key="save:preamble")


def test_editing_a_keep_card_puts_the_edit_in_the_next_version(app: AppTest) -> None:
    at = review_update(app)
    edited = "_Sample data; revised by the analyst after the April update._"
    at.text_area(key="edit:preamble").input(edited)
    ok(at.button(key="save:preamble").click().run())
    p = decision_of("preamble")
    assert p.analyst_text == edited and p.decision == "approved"
    assert "approved (edited)" in html.unescape(texts(at))
    commit(at)
    with session_scope() as session:
        version = get_version(session, get_report(session, 1))
        preamble = next(s for s in sections_of(session, version.id) if s.key == "preamble")
    assert preamble.body == edited and preamble.status == "revised"


def test_a_writer_failure_is_prominent_and_can_be_revised_by_hand(app: AppTest) -> None:
    at = review_update(app)
    make_writer_failure(DEPLOYMENTS)
    ok(at.run())
    assert any("needs attention: the writer failed" in w.value for w in at.warning)
    page = texts(at)
    assert KESTREL_LINE in page and "2 stale claims if kept as is" in page
    ok(at.button(key=f"reject:{DEPLOYMENTS}").click().run())
    assert "2 claims become stale" in texts(at)
    old = decision_of(DEPLOYMENTS).old_text or ""
    revised = old.replace("100 MW / 400 MWh", "160 MW / 650 MWh")
    at.text_area(key=f"edit:{DEPLOYMENTS}").input(revised)
    ok(at.button(key=f"save:{DEPLOYMENTS}").click().run())
    assert "1 still unchanged in the new text" in texts(at)  # Copperline is not revised
    commit(at)
    with session_scope() as session:
        version = get_version(session, get_report(session, 1))
        section = next(s for s in sections_of(session, version.id) if s.key == DEPLOYMENTS)
        claims = claims_of_version(session, version.id)
        stale = [c.sentence for _, c in claims if c.state == "stale"]
    assert section.body == revised and section.status == "revised"
    assert not any("Kestrel Flats" in s for s in stale)
    assert any("Copperline" in s for s in stale)


# -- Report and History ------------------------------------------------------------------------
def test_timeline_and_text_show_stale_claims_after_a_rejected_revision(app: AppTest) -> None:
    at = review_update(app)
    ok(at.button(key=f"reject:{DEPLOYMENTS}").click().run())
    assert decision_of(DEPLOYMENTS).decision == "rejected"
    commit(at)
    with session_scope() as session:
        run = session.exec(select(UpdateRun).where(UpdateRun.kind == "update")).one()
        assert run.status == "committed"
        version = get_version(session, get_report(session, 1))
        stale_count = version.stale_citations
        # the Read view numbers citations in reading order: Kestrel Flats' stored [7] is
        kestrel = reading_numbers(load_doc(session, version))[7]
    assert stale_count >= 2

    ok(at.switch_page("pages/report.py").run())
    timeline = at.dataframe[0].value
    v2 = timeline[timeline["version"] == 2].iloc[0]
    assert v2["stale claims"] == stale_count
    assert re.fullmatch(r"supported \d+ of \d+", v2["claim support"])
    page = texts(at)
    assert f"This version has {stale_count} stale claims" in page
    assert "Version 2 · as of 2026-04-15 · " in page and f", {stale_count} stale" in page
    assert (
        f"⚠ stale: source [{kestrel}] changed since 2026-01-15 (Capacity: 100 MW / 400 MWh → 160"
    ) in page
    # the tooltip, in plain text (no list bullet)
    assert f"The source [{kestrel}] now says: “Capacity: 160 MW / 650 MWh”" in page

    ok(at.switch_page("pages/history.py").run())
    assert len(at.get("plotly_chart")) == 4
    claims = at.dataframe[0].value
    assert claims.iloc[0]["stale"] == stale_count  # newest first


def test_stale_notes_are_escaped(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a fetched page said reaches the note and its tooltip only as text."""
    import core.app.version_views
    import core.store.repository

    at = review_update(app)
    ok(at.button(key=f"reject:{DEPLOYMENTS}").click().run())
    commit(at)
    real = core.store.repository.claims_of_version

    def hostile(session: object, version_id: int) -> list[tuple[object, Claim]]:
        out = []
        for section, c in real(session, version_id):  # type: ignore[arg-type]
            if c.state == "stale":  # a copy: committed claims cannot change
                passages = [{"old": "x", "new": PAYLOAD, "differences": [PAYLOAD]}]
                c = Claim(
                    **{**c.model_dump(), "detail": {"outcome": "edited", "passages": passages}}
                )
            out.append((section, c))
        return out

    monkeypatch.setattr(core.app.version_views, "claims_of_version", hostile)
    ok(at.switch_page("pages/report.py").run())
    body = "\n".join(h.proto.body for h in at.get("html"))
    assert "eg-flag-stale" in body
    assert "<script>window" not in body and "<img src=x" not in body
    assert html.escape("<script>window.__pwned=1</script>") in body


# -- exports ---------------------------------------------------------------------------------
def test_export_starts_with_the_version_line_and_reimport_does_not_repeat_it(
    app: AppTest, downloads: dict[str, bytes], tmp_path: Path
) -> None:
    ok(app.switch_page("pages/report.py").run())
    md = downloads[next(n for n in downloads if n.endswith(" — v1.md"))].decode()
    lines = md.split("\n")
    assert lines[0].startswith("# Grid-Scale Battery Energy Storage") and lines[1] == ""
    m = VERSION_LINE.match(lines[2])
    assert m and m.group(1, 2) == ("1", "2026-01-15"), lines[2]
    assert int(m.group(4)) == 0
    with session_scope() as session:
        claims = claims_of_version(session, get_version(session, get_report(session, 1)).id)
    assert int(m.group(3)) == len(claims)
    sample_line = "_Sample data written for Evergreen; not real reporting"
    assert md.count(sample_line) == 1  # the analyst's own line stays body text

    ok(app.switch_page("pages/reports.py").run())
    app.file_uploader(key="import_file").upload("exported.md", md.encode(), "text/markdown")
    app.text_area(key="import_question").input("Where does battery storage stand?")
    app.text_input(key="import_as_of").input("2026-02-01")
    ok(app.button(key="import").click().run())
    assert any("Imported report 2" in s.value for s in app.success)
    with session_scope() as session:
        again = export_version(session, get_report(session, 2), tmp_path / "again.md")
    text = again.read_text(encoding="utf-8")
    version_lines = [ln for ln in text.split("\n") if ln.startswith("_Version ")]
    assert version_lines == [text.split("\n")[2]]  # one line, the new version's
    assert VERSION_LINE.match(version_lines[0]).group(1, 2) == ("1", "2026-02-01")
    assert text.count(sample_line) == 1

    ok(app.switch_page("pages/report.py").run())
    app.selectbox(key="report_report_pick").select(2).run()
    page = texts(app)
    assert "Version 1 · as of 2026-01-15" not in page  # the imported line is not shown again
    assert "Version 1 · as of 2026-02-01" in page
