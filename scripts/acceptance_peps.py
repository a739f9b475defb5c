"""Acceptance on real data: the typing question over the PEP corpus, 2016 → 2025.

Creates the report at 2016-12-31, updates it yearly with --approve-all, rebuilds
from scratch at each date, and checks the research-engine acceptance criteria.
Usage: python scripts/acceptance_peps.py [--corpus PATH] [--workspace DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

QUESTION = (
    "How is static typing in Python evolving: which type-system features were proposed, "
    "accepted, or finalised, and what is still open?"
)
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared/corpora/peps/peps_corpus.jsonl.gz"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    os.environ["EVERGREEN_HOME"] = args.workspace or tempfile.mkdtemp(prefix="eg-accept-")

    from sqlmodel import select

    from core.dates import parse_as_of
    from core.domain.metrics import continuity
    from core.engine.creation import create_report
    from core.engine.review import _text, proposals_of
    from core.engine.update import update_report
    from core.sources.corpus import add_corpus
    from core.store.db import session_scope
    from core.store.models import Snapshot, Source
    from core.store.repository import get_report, get_version, load_doc, outline_of

    t0 = time.perf_counter()
    add_corpus("peps", args.corpus)
    src = "corpus:peps"
    years = list(range(2016, 2026))
    created = create_report(QUESTION, as_of=parse_as_of("2016-12-31"), source=src)
    rid = created["report_id"]
    rows = []
    baselines = {2016: created}
    for year in years[1:]:
        up = update_report(rid, as_of=parse_as_of(f"{year}-12-31"), approve_all=True)
        rb = create_report(
            QUESTION,
            title=f"Baseline {year}",
            as_of=parse_as_of(f"{year}-12-31"),
            source=src,
            baseline_of=rid,
        )
        baselines[year] = rb
        rows.append({"year": year, "update": up, "rebuild": rb})
        print(
            f"{year}: actions {up['actions']} evidence {up['evidence']} "
            f"rougeL {up['continuity']['content_rouge_l']} searches {up['cost']['searches']} "
            f"vs rebuild {rb['cost']['searches']} stale {up['stale_citations']}",
            flush=True,
        )
    same = update_report(rid, as_of=parse_as_of("2025-12-31"), approve_all=True)

    def doc_of(report_id: int):
        with session_scope() as s:
            return load_doc(s, get_version(s, get_report(s, report_id)))

    rebuild_cont = []
    for year in years[1:]:
        a, b = doc_of(baselines[year - 1]["report_id"]), doc_of(baselines[year]["report_id"])
        rebuild_cont.append(
            continuity(
                _text(a.sections), _text(b.sections), outline_of(a.sections), outline_of(b.sections)
            ).as_dict()
        )
    # PEP 563 in 2025: material, and its citing section proposed for revision
    pep563 = {"cited": False, "kind": None, "similarity": None, "proposal": None}
    with session_scope() as s:
        source = s.exec(
            select(Source).where(Source.url == "https://peps.python.org/pep-0563/")
        ).first()
        if source:
            snaps = s.exec(select(Snapshot).where(Snapshot.source_id == source.id)).all()
            for snap in snaps:
                if snap.as_of and snap.as_of.year == 2025:
                    pep563.update(kind=snap.change_kind, similarity=snap.similarity)
            last = rows[-1]["update"]["run_id"]
            for p in proposals_of(s, last):
                for e in p.evidence:
                    if e["url"].endswith("pep-0563/"):
                        pep563.update(cited=True, proposal=p.action)
    # Every cited source whose Status header changed: marked material, section revised?
    status_changes = []
    with session_scope() as s:
        for r in rows:
            run_props = proposals_of(s, r["update"]["run_id"])
            for p in run_props:
                for e in p.evidence:
                    if any(reason.startswith("header Status") for reason in e["reasons"]):
                        status_changes.append(
                            {
                                "year": r["year"],
                                "url": e["url"],
                                "kind": e["kind"],
                                "similarity": e["similarity"],
                                "section_action": p.action,
                            }
                        )
    inc = [r["update"]["continuity"]["content_rouge_l"] for r in rows]
    up_searches = sum(r["update"]["cost"]["searches"] for r in rows)
    rb_searches = sum(r["rebuild"]["cost"]["searches"] for r in rows)
    summary = {
        "stale_citations_all_zero": all(r["update"]["stale_citations"] == 0 for r in rows),
        "same_as_of": {"writer_calls": same["writer_calls"], "actions": same["actions"]},
        "mean_content_rouge_l_incremental": round(sum(inc) / len(inc), 4),
        "mean_content_rouge_l_rebuild": round(
            sum(c["content_rouge_l"] for c in rebuild_cont) / len(rebuild_cont), 4
        ),
        "mean_outline_em_f1_incremental": round(
            sum(r["update"]["continuity"]["outline_em_f1"] for r in rows) / len(rows), 4
        ),
        "mean_outline_em_f1_rebuild": round(
            sum(c["outline_em_f1"] for c in rebuild_cont) / len(rebuild_cont), 4
        ),
        "searches_update_total": up_searches,
        "searches_rebuild_total": rb_searches,
        "search_ratio": round(up_searches / rb_searches, 3) if rb_searches else None,
        "pep563_2025": pep563,
        "status_changes_cited": len(status_changes),
        "status_changes_material": sum(c["kind"] == "material" for c in status_changes),
        "status_changes_over_0_9": sum((c["similarity"] or 0) >= 0.9 for c in status_changes),
        "status_changes_section_revised": sum(
            c["section_action"] == "revise" for c in status_changes
        ),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"summary": summary, "rows": rows, "rebuild_continuity": rebuild_cont},
                indent=2,
                default=str,
            )
        )
    ok = (
        summary["stale_citations_all_zero"]
        and same["writer_calls"] == 0
        and summary["mean_content_rouge_l_incremental"] >= 0.6
        and (summary["search_ratio"] or 1) <= 0.4
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
