"""One step of a benchmark system: a report version made as of the end of year t — from
scratch (:func:`create_step`) or by updating one (:func:`update_step`, after
:func:`import_baseline` for SST) — and its record, measured against the corpus.
"""

from __future__ import annotations

from typing import Any

from core.app.export import version_markdown
from core.app.importer import import_report
from core.bench.fact_accuracy import fact_accuracy
from core.bench.freshness import freshness_rebuild, freshness_update
from core.bench.measure import Pages, continuity_between, quality, view
from core.bench.relevance import central_removed, recall, relevance
from core.bench.truth import QuerySpec
from core.dates import parse_as_of
from core.engine.creation import create_report
from core.engine.runs import fail_run, open_run_for
from core.engine.update import update_report
from core.states import RunStatus
from core.store.db import session_scope
from core.store.repository import get_report


def year_end(year: int) -> str:
    return f"{year}-12-31"


def create_step(
    spec: QuerySpec,
    system: str,
    t: int,
    source: str,
    settings: dict[str, Any],
    prev: dict[str, Any] | None,
    prev_t: int | None,
    pages: Pages,
    key_share: float,
) -> dict[str, Any]:
    """``system``'s report made from scratch as of the end of ``t``, and its record
    (measured against ``prev``, the same system's record at ``prev_t``, when given)."""
    res = create_report(
        spec.query,
        title=f"[bench] {system} {spec.id} {t}",
        as_of=parse_as_of(year_end(t)),
        source=source,
        settings=settings,
    )
    rec = _record(spec, system, t, res["report_id"], res["version"], res["cost"])
    with session_scope() as s:
        v = view(s, res["report_id"])
        rec.update(quality(s, v, pages))
        window = (prev_t, t) if prev_t is not None else None
        rec.update(
            relevance(
                s, spec, v, run_id=res["run_id"], window=window, pages=pages, key_share=key_share
            )
        )
        if prev is not None and prev_t is not None:
            p = view(s, prev["report_id"])
            rec["continuity"] = continuity_between(p, v)
            rec["freshness"] = freshness_rebuild(p.urls, spec.material_between(prev_t, t), v.urls)
            rec["new_evidence_recall"] = recall(spec.new_between(prev_t, t), v.urls)
            rec["fact_accuracy"], rec["fact_changes"] = fact_accuracy(
                v, p.urls, spec.status_changes_between(prev_t, t), pages, p.version.as_of
            )
    return rec


def update_step(
    spec: QuerySpec,
    system: str,
    report_id: int,
    t: int,
    prev_t: int,
    pages: Pages,
    key_share: float,
) -> dict[str, Any]:
    """Report ``report_id`` updated from ``prev_t`` to the end of ``t`` (all approved), and
    the record of ``system``'s new version."""
    _close_open_runs(report_id)
    with session_scope() as s:
        prev_number = view(s, report_id).number
    res = update_report(report_id, as_of=parse_as_of(year_end(t)), approve_all=True)
    rec = _record(spec, system, t, report_id, res["version"], res["cost"])
    rec.update(
        continuity=res["continuity"],
        evidence=res["evidence"],
        actions=res["actions"],
        writer_calls=res["writer_calls"],
        run_id=res["run_id"],
    )
    with session_scope() as s:
        p = view(s, report_id, prev_number)
        v = view(s, report_id)
        rec.update(quality(s, v, pages))
        rec.update(
            relevance(
                s,
                spec,
                v,
                run_id=res["run_id"],
                window=(prev_t, t),
                pages=pages,
                key_share=key_share,
            )
        )
        rec["freshness"] = freshness_update(
            s, res["run_id"], p, spec.material_between(prev_t, t), v
        )
        rec["new_evidence_recall"] = recall(spec.new_between(prev_t, t), v.urls)
        rec["fact_accuracy"], rec["fact_changes"] = fact_accuracy(
            v, p.urls, spec.status_changes_between(prev_t, t), pages, p.version.as_of
        )
        rec.update(central_removed(pages, spec, p.urls, v.urls, v.version.as_of))
    return rec


def import_baseline(
    spec: QuerySpec, baseline_id: int, t0: int, source: str, settings: dict[str, Any]
) -> int:
    """R_baseline(t0) as a report without an evidence pool (its Markdown, imported)."""
    with session_scope() as s:
        text = version_markdown(s, get_report(s, baseline_id))
        report, _ = import_report(
            s, text, query=spec.query, as_of=parse_as_of(year_end(t0)), source=source
        )
        report.settings = settings
        s.add(report)
        return report.id


def _close_open_runs(report_id: int) -> None:
    """After an interruption: a run left open by a killed process cannot block resuming."""
    with session_scope() as s:
        run = open_run_for(s, report_id)
        stale = run.id if run is not None else None
    if stale is not None:
        fail_run(stale, "interrupted; the benchmark resumed without it", status=RunStatus.CANCELLED)


def _record(
    spec: QuerySpec, system: str, t: int, report_id: int, version: int | None, cost: dict[str, Any]
) -> dict[str, Any]:
    return {
        "question": spec.id,
        "system": system,
        "t": t,
        "report_id": report_id,
        "version": version,
        "cost": cost,
        "continuity": None,
        "evidence": None,
        "freshness": None,
        "new_evidence_recall": None,  # retired as a goal: discovery_recall replaces it
        "topical_precision": None,
        "key_source_recall": None,
        "discovery_recall": None,
        "fact_accuracy": None,
        "fact_changes": 0,
    }
