"""Claims stay true on the sample workspace: every case the sample's sources change is
revised by the first update that sees it, and no committed version holds a sentence that
its cited snapshot contradicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.app.actions import review
from core.app.importer import import_report, read_markdown_file
from core.dates import parse_as_of
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.store.db import session_scope
from core.store.models import Snapshot
from core.store.repository import claims_of_version, get_report, get_version, load_doc
from core.workspace import load_sample

DATES = ("2026-04-15", "2026-07-15", "2026-10-15")
PARAPHRASE = Path(__file__).parent / "data" / "paraphrased_report.md"


def _sentences_citing(report_id: int, marker: int) -> list[str]:
    with session_scope() as s:
        version = get_version(s, get_report(s, report_id))
        return [
            claim.sentence
            for _section, claim in claims_of_version(s, version.id)
            if claim.marker == marker
        ]


def _marker_for(report_id: int, url_part: str) -> int:
    with session_scope() as s:
        doc = load_doc(s, get_version(s, get_report(s, report_id)))
        return next(r.marker for r in doc.references if url_part in r.url)


def _assert_every_claim_holds(report_id: int) -> None:
    """Each supported claim's passages are in the snapshot it cites; no claim is stale."""
    with session_scope() as s:
        version = get_version(s, get_report(s, report_id))
        claims = claims_of_version(s, version.id)
        assert claims
        for _section, claim in claims:
            assert claim.state != "stale", claim.sentence
            if claim.state == "supported":
                snap = s.get(Snapshot, claim.snapshot_id)
                for sel in claim.selectors:
                    assert sel["exact"] in snap.content, (claim.sentence, sel["exact"])
        assert version.stale_citations == 0


@pytest.fixture
def sample(sample_workspace: Path) -> int:
    """The sample report (the workspace holds it already: load_sample finds it)."""
    with session_scope() as s:
        return load_sample(s)["report_id"]


def _update(report_id: int, when: str) -> dict:
    return update_report(report_id, as_of=parse_as_of(when), approve_all=True)


def test_first_update_revises_kestrel_copperline_tessaly_and_the_draft_rules(sample: int) -> None:
    result = _update(sample, DATES[0])
    assert result["version"] == 2 and result["stale_claims"] == 0
    kestrel = " ".join(_sentences_citing(sample, 7))
    assert "160 MW / 650 MWh" in kestrel and "100 MW / 400 MWh" not in kestrel
    copperline = " ".join(_sentences_citing(sample, 8)).casefold()
    assert "approved" in copperline
    assert "awaiting a planning board decision" not in copperline
    assert not re.search(r"\ba proposed\b", copperline)
    # its size did not change: the revision that states the new status keeps saying it
    assert "300 mw / 1,200 mwh" in copperline
    tessaly = " ".join(_sentences_citing(sample, 4))
    assert "The Tessaly Storage Price Index" in tessaly  # the subject is kept
    assert "$134/kWh in Q1 2026" in tessaly and "$142/kWh in Q4 2025, down from" not in tessaly
    rules = " ".join(_sentences_citing(sample, 10))
    assert "open for comment until 28 February 2026" not in rules
    # the rules are final now: no sentence brings back the draft as the news
    assert "draft" not in rules.casefold(), rules
    _assert_every_claim_holds(sample)


def test_later_updates_revise_aerc_harrow_bay_tarnwick_and_the_forecast(sample: int) -> None:
    _update(sample, DATES[0])
    result = _update(sample, DATES[1])
    assert result["stale_claims"] == 0
    aerc = " ".join(_sentences_citing(sample, 11))
    assert "approved" in aerc.casefold() and "intends to vote" not in aerc
    harrow = " ".join(_sentences_citing(sample, 6))
    assert "Operational" in harrow or "operational" in harrow
    assert "Q2 2026" not in harrow and "in construction" not in harrow
    tarnwick = " ".join(_sentences_citing(sample, 3))
    assert "50 MW / 500 MWh" not in tarnwick
    assert not _sentences_citing(sample, 9)  # Ashgrove's page is gone: its sentence too
    _assert_every_claim_holds(sample)
    _update(sample, DATES[2])
    forecast = " ".join(_sentences_citing(sample, 4))
    assert "$125/kWh and $135/kWh" not in forecast and "$115/kWh and $120/kWh" in forecast
    # the analyst's credit sentence was never wholly supported (its "20 percentage points"
    # is theirs), yet the cap it took from the page changed: it is revised all the same
    credit = " ".join(_sentences_citing(sample, _marker_for(sample, "storage-investment-credit")))
    assert "cap of $2.0 billion" in credit
    assert "300 MW / 1,200 MWh" in " ".join(_sentences_citing(sample, 8))  # Copperline's size
    _assert_every_claim_holds(sample)


def test_a_section_with_an_edited_claim_is_never_kept_and_preapproved(sample: int) -> None:
    result = update_report(sample, as_of=parse_as_of(DATES[0]))
    with session_scope() as s:
        for p in proposals_of(s, result["run_id"]):
            edited = [c for c in p.claims if c["outcome"] in ("edited", "gone")]
            if edited:
                assert p.action != "keep" or p.decision == "pending", p.key
                assert p.decision == "pending"


def test_a_rejected_revision_leaves_a_stale_claim_on_its_old_snapshot(sample: int) -> None:
    result = update_report(sample, as_of=parse_as_of(DATES[0]))
    with session_scope() as s:
        keys = [p.key for p in proposals_of(s, result["run_id"]) if p.key.startswith("deploy")]
    out = review(result["run_id"], reject=keys, approve_all=True, commit=True)
    assert out.stale_claims >= 2  # Kestrel's capacity and Copperline's status
    with session_scope() as s:
        version = get_version(s, get_report(s, sample))
        stale = [c for _s, c in claims_of_version(s, version.id) if c.state == "stale"]
        assert {c.marker for c in stale} >= {7, 8}
        for c in stale:  # still cites the snapshot that says it, not the newer one
            snap = s.get(Snapshot, c.snapshot_id)
            assert snap.as_of.date().isoformat() == "2026-01-15"
        doc = load_doc(s, version)
        assert {r.marker: r.fetched for r in doc.references}[7] == "2026-01-15"
    # the next update proposes the revision again
    again = update_report(sample, as_of=parse_as_of(DATES[0]))
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, again["run_id"])}
    assert props[keys[0]].action == "revise"


def test_writer_failure_flags_the_section_pending(
    sample: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.writers.base import WriterFailed
    from core.writers.offline import OfflineWriter

    def broken(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise WriterFailed("the model answered nonsense")

    monkeypatch.setattr(OfflineWriter, "revise_section", broken)
    result = update_report(sample, as_of=parse_as_of(DATES[0]))
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, result["run_id"])}
    deploy = next(p for k, p in props.items() if k.startswith("deploy"))
    assert deploy.action == "keep" and deploy.decision == "pending"
    assert any("needs attention" in f for f in deploy.flags)


def test_an_analyst_edit_of_a_kept_section_is_the_base_of_the_next_update(sample: int) -> None:
    result = update_report(sample, as_of=parse_as_of(DATES[0]))
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, result["run_id"])}
    safety = next(k for k in props if k.startswith("safety"))
    edited = props[safety].old_text + "\n\nAnalyst note: fire codes are under review [13]."
    from core.engine.review import commit_run, decide, get_run
    from core.store.db import session_scope as scope

    with scope() as s:
        run = get_run(s, result["run_id"])
        decide(s, run, edits={safety: edited}, approve_all=True)
        commit_run(s, run)
    nxt = update_report(sample, as_of=parse_as_of(DATES[1]))
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, nxt["run_id"])}
    assert "Analyst note: fire codes are under review [13]." in props[safety].old_text
    assert "Analyst note" in (props[safety].new_text or "")


def test_a_paraphrased_report_is_anchored_and_its_stale_claims_revised(workspace: Path) -> None:
    with session_scope() as s:
        load_sample(s)
        report, summary = import_report(
            s,
            read_markdown_file(PARAPHRASE),
            query="Where does Halvard battery storage stand?",
            as_of=parse_as_of("2026-01-15"),
            source="sample",
        )
        rid = report.id
    assert summary["claims"]["supported"] == summary["claims"]["claims"] == 7
    _update(rid, DATES[0])
    kestrel = " ".join(_sentences_citing(rid, 3))
    assert "160 MW / 650 MWh" in kestrel and "100 MW / 400 MWh" not in kestrel
    copperline = " ".join(_sentences_citing(rid, 4)).casefold()
    assert "waiting for the county planning board" not in copperline and "approved" in copperline
    _update(rid, DATES[1])
    harrow = " ".join(_sentences_citing(rid, 2))
    assert "Q2 2026" not in harrow
    aerc = " ".join(_sentences_citing(rid, 5)).casefold()
    assert "only proposed" not in aerc and "approved" in aerc
    _assert_every_claim_holds(rid)


def test_an_unchanged_world_costs_no_writer_call(sample: int) -> None:
    result = update_report(sample, as_of=parse_as_of("2026-01-15"))
    assert result["writer_calls"] == 0
    assert result["actions"]["keep"] == sum(result["actions"].values())
