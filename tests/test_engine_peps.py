"""The engine on a slice of the real PEP corpus: a small status edit is caught."""

from __future__ import annotations

from pathlib import Path

from core.dates import parse_as_of
from core.engine.creation import create_report
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from tests.conftest import peps_slice


def test_pep_563_superseded_is_material_and_revised(workspace: Path, tmp_path: Path) -> None:
    add_corpus("peps", peps_slice(tmp_path, {563, 649, 749, 484, 526, 3107}))
    created = create_report(
        "How are annotations evaluated: postponed evaluation of annotations and deferred "
        "evaluation?",
        as_of=parse_as_of("2024-12-31"),
        source="corpus:peps",
    )
    result = update_report(created["report_id"], as_of=parse_as_of("2025-12-31"))
    with session_scope() as s:
        proposals = proposals_of(s, result["run_id"])
    rows = [(p, e) for p in proposals for e in p.evidence if e["url"].endswith("/pep-0563/")]
    assert rows, "the report cites PEP 563"
    proposal, evidence = rows[0]
    assert evidence["kind"] == "material" and evidence["similarity"] > 0.9
    assert any("Accepted → Superseded" in r for r in evidence["reasons"])
    assert proposal.action == "revise"
    assert "Status: Superseded" in proposal.new_text and "Status: Accepted" in proposal.old_text
