"""The research engine on hand-made temporal fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from core.app.actions import review
from core.dates import parse_as_of
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.errors import EvergreenError
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import ReportVersion, Snapshot, UpdateRun
from core.store.repository import get_report, get_version, load_doc, sections_of
from tests.conftest import write_jsonl
from tests.helpers.corpus import corpus_records, make_report, page


@pytest.fixture
def corpus(workspace: Path, tmp_path: Path) -> str:
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", corpus_records()))
    return "corpus:fx"


def body_of(report_id: int, marker_url: str, version: int | None = None) -> dict[str, str]:
    with session_scope() as s:
        report = get_report(s, report_id)
        doc = load_doc(s, get_version(s, report, version))
        return {sec.key: sec.body for sec in doc.sections}


def test_create_writes_cited_readable_sections(corpus: str) -> None:
    rid = make_report(corpus)
    with session_scope() as s:
        doc = load_doc(s, get_version(s, get_report(s, rid)))
    assert doc.sections[0].level == 0 and "offline extractive mode" in doc.sections[0].body
    urls = {r.url for r in doc.references}
    assert {"https://ex.org/lfp", "https://ex.org/flow", "https://ex.org/credit"} <= urls
    assert "https://ex.org/sodium" not in urls  # not visible at 2024-01-31
    text = "\n".join(sec.body for sec in doc.sections[1:])
    assert "142 dollars per kWh" in text
    for sec in doc.sections[1:]:
        for sentence in sec.body.replace("\n\n", " ").split("]."):
            if sentence.strip():
                assert "[" in sentence  # every sentence carries its citation


def test_material_change_is_revised_minor_kept_new_page_placed(corpus: str) -> None:
    rid = make_report(corpus)
    before = body_of(rid, "")
    result = update_report(rid, as_of=parse_as_of("2024-06-30"))
    ev = result["evidence"]
    assert ev["material"] == 1 and ev["minor"] == 1 and ev["unchanged"] >= 1 and ev["new"] >= 1
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, result["run_id"])}
        snaps = s.exec(select(Snapshot).where(Snapshot.change_kind == "material")).all()
        assert snaps and snaps[0].similarity > 0.9 and snaps[0].claim_diff
    # the sections that cite the changed page (the overview is rebuilt from all of them)
    revised = [p for p in props.values() if p.action == "revise" and p.key not in DERIVED_KEYS]
    assert revised and all("128 dollars" in p.new_text for p in revised)
    assert all("142 dollars" not in p.new_text for p in revised)
    for p in props.values():
        if p.action == "keep":
            assert p.new_text == before[p.key]  # byte-identical
    placed = [p for p in props.values() if any(e["kind"] == "new" for e in p.evidence)]
    assert placed and any("Sodium" in (p.new_text or "") for p in placed)
    out = review(result["run_id"], approve_all=True, commit=True)
    assert out.version == 2 and out.stale_citations == 0
    assert 0 < out.continuity.content_rouge_l < 1


def test_same_as_of_update_makes_no_writer_call(corpus: str) -> None:
    rid = make_report(corpus)
    before = body_of(rid, "")
    result = update_report(rid, as_of=parse_as_of("2024-01-31"), approve_all=True)
    assert result["writer_calls"] == 0 and result["cost"]["searches"] == 0
    assert result["actions"]["keep"] == len(before)
    assert body_of(rid, "", 2) == before
    assert result["stale_citations"] == 0


def test_rejected_revision_keeps_old_text(corpus: str) -> None:
    rid = make_report(corpus)
    before = body_of(rid, "")
    result = update_report(rid, as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
    revised = [p.key for p in props if p.action == "revise"]
    others = [p.key for p in props if p.action in ("extend", "add")]
    review(result["run_id"], reject=revised, approve=others, commit=True)
    after = body_of(rid, "", 2)
    for key in revised:
        assert after[key] == before[key]


def test_commit_requires_decisions(corpus: str) -> None:
    rid = make_report(corpus)
    result = update_report(rid, as_of=parse_as_of("2024-06-30"))
    with pytest.raises(EvergreenError, match="still pending"):
        review(result["run_id"], commit=True)
    with pytest.raises(EvergreenError, match="in progress|awaiting review"):
        update_report(rid, as_of=parse_as_of("2024-07-30"))


def test_exception_mid_update_leaves_last_version_intact(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = make_report(corpus)
    before = body_of(rid, "")
    import core.engine.stages as update

    real_discover = update.discover

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(update, "discover", boom)
    with pytest.raises(RuntimeError):
        update_report(rid, as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        versions = s.exec(select(ReportVersion).where(ReportVersion.report_id == rid)).all()
        run = s.exec(select(UpdateRun).order_by(UpdateRun.id.desc())).first()
        kept = s.exec(select(Snapshot).where(Snapshot.run_id == run.id)).all()
        proposals = proposals_of(s, run.id)
    assert len(versions) == 1 and run.status == "failed" and "disk on fire" in run.error
    assert proposals == []  # nothing half-proposed
    assert {k.change_kind for k in kept} == {"material", "minor"}  # fetched evidence is kept
    assert body_of(rid, "") == before
    # the next update works and is not blocked by the failed run
    monkeypatch.setattr(update, "discover", real_discover)
    assert update_report(rid, as_of=parse_as_of("2024-06-30"), approve_all=True)["version"] == 2


def test_cancel_stops_the_run(corpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.engine.stages as update
    from core.engine.run_stops import RunCancelled
    from core.engine.runs import request_cancel

    rid = make_report(corpus)
    real = update.discover

    def discover_then_cancel(session, report, **kw):  # noqa: ANN001, ANN003, ANN202
        session.commit()
        request_cancel(kw["run_id"])  # as the app would, from another connection
        return real(session, report, **kw)

    monkeypatch.setattr(update, "discover", discover_then_cancel)
    with pytest.raises(RunCancelled, match="cancelled"):  # not an EvergreenError: never swallowed
        update_report(rid, as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        run = s.exec(select(UpdateRun).order_by(UpdateRun.id.desc())).first()
        assert run.status == "cancelled" and proposals_of(s, run.id) == []
        assert len(s.exec(select(ReportVersion)).all()) == 1


def test_bad_input(corpus: str) -> None:
    with pytest.raises(EvergreenError, match="empty"):
        create_report("   ", source=corpus)
    with pytest.raises(EvergreenError, match="characters long"):
        create_report("x" * 10_000, source=corpus)
    with pytest.raises(EvergreenError, match="No search hits"):
        create_report("zzqx qqvv", as_of=parse_as_of("2024-01-31"), source=corpus)
    with session_scope() as s:
        failed = s.exec(select(UpdateRun).where(UpdateRun.status == "failed")).all()
        assert len(failed) == 1 and "No search hits" in failed[0].error
        assert s.exec(select(ReportVersion)).all() == []  # nothing was written
    rid = make_report(corpus)
    with pytest.raises(EvergreenError, match="earlier than the current version"):
        update_report(rid, as_of=parse_as_of("2023-01-01"))
    with pytest.raises(EvergreenError, match="No report"):
        update_report(999)


def test_all_sources_gone(workspace: Path, tmp_path: Path) -> None:
    recs = corpus_records()[:3] + [
        page(u, "gone", "2024-03-01", "", gone=True) for u in ("lfp", "flow", "credit")
    ]
    add_corpus("g", write_jsonl(tmp_path / "g.jsonl", recs))
    rid = make_report("corpus:g")
    with pytest.raises(EvergreenError, match="are gone"):
        update_report(rid, as_of=parse_as_of("2024-04-01"))
    with session_scope() as s:
        assert [v.number for v in s.exec(select(ReportVersion))] == [1]  # version 1 stands
        run = s.exec(select(UpdateRun).order_by(UpdateRun.id.desc())).first()
        assert run.report_id == rid and run.status == "failed" and "are gone" in run.error
        assert "142 dollars" in "".join(body_of(rid, "").values())  # still reads as before


def test_imported_report_updates_on_sample(workspace: Path) -> None:
    """The sample report: imported citations are resolved, then refreshed."""
    from core.workspace import load_sample

    with session_scope() as s:
        rid = load_sample(s)["report_id"]
    result = update_report(rid, as_of=parse_as_of("2026-04-15"), approve_all=True)
    ev = result["evidence"]
    assert ev["checked"] == 14 and ev["material"] >= 3 and ev["minor"] >= 1 and ev["new"] >= 1
    assert result["version"] == 2 and result["stale_citations"] == 0
    with session_scope() as s:
        report = get_report(s, rid)
        secs = sections_of(s, get_version(s, report).id)
    text = " ".join(sec.body for sec in secs)
    assert "$134/kWh" in text and "$142/kWh in Q4 2025, down from $151" not in text


RECYCLING = (
    "Recycling lithium battery storage cells recovers cobalt, nickel and lithium from spent "
    "grid battery packs. Battery storage recyclers shred the cells and leach the metals. "
)
INSURANCE = (
    "Insurers price grid battery storage fire risk by plant size and cell chemistry. "
    "Battery storage insurance premiums rose after several plant fires last year. "
)


def test_an_outline_the_writer_cannot_plan_leaves_the_pages_in_the_pool(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding sections is optional: a writer that cannot plan them (a model answering
    with unknown source ids twice) flags the update instead of failing it."""
    from core.writers.base import WriterFailed
    from core.writers.offline import OfflineWriter

    records = [
        *corpus_records(),
        page("recycle", "Recycling grid battery storage", "2024-06-01", RECYCLING),
        page("insure", "Insuring grid battery storage", "2024-06-01", INSURANCE),
    ]
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", records))
    # a question that names no parts: new pages that fit no section are the writer's to
    # outline (in one that names parts, they go by the parts' names: tests/test_facet_places.py)
    made = create_report(
        "How is grid battery storage developing?",
        as_of=parse_as_of("2024-01-31"),
        source="corpus:fx",
    )
    rid = made["report_id"]

    def no_outline(self: OfflineWriter, *args: object, **kw: object) -> list:
        raise WriterFailed("fake gave no usable propose outline after one repair attempt")

    monkeypatch.setattr(OfflineWriter, "propose_outline", no_outline)
    monkeypatch.setattr("core.domain.placement.PLACE_MIN", 1.01)  # no new page fits a section
    result = update_report(rid, as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        run = s.get(UpdateRun, result["run_id"])
        assert run is not None and run.status == "awaiting_review"
        flags = run.summary["flags"]
        assert any("no new section could be planned" in f for f in flags), flags
        assert not [p for p in proposals_of(s, run.id) if p.action == "add"]
