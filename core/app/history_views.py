"""The History screen's read model: per committed version, its continuity, its run's cost,
the sections it changed and the evidence changes behind it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlmodel import Session

from core.app.version_views import version_claims
from core.dates import as_utc, day
from core.domain.labels import run_kind_label
from core.engine.audit import DOORS, events_of
from core.engine.costs import COST_FIELDS, run_cost
from core.store.models import UpdateRun
from core.store.repository import sections_of, versions_of

EVIDENCE_KINDS = ("unchanged", "minor", "material", "changed", "gone", "new")


def history(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Per committed version: continuity, cost, sections changed, evidence changes."""
    rows = []
    previous_keys: set[str] = set()
    for v in versions_of(session, report_id):
        sections = sections_of(session, v.id)
        keys = {s.key for s in sections}
        statuses = Counter(s.status for s in sections)
        run = session.get(UpdateRun, v.run_id) if v.run_id else None
        evidence = (run.summary or {}).get("evidence", {}) if run else {}
        cost = run_cost(session, run.id) if run else dict.fromkeys(COST_FIELDS, 0)
        rows.append(
            {
                "number": v.number,
                "as_of": day(v.as_of),
                "kind": run.kind if run else "",
                "kind_label": run_kind_label(run.kind) if run else "",
                "run_id": run.id if run else None,
                "metrics": v.metrics or {},
                "cost": {k: cost.get(k, 0) for k in COST_FIELDS},
                "writer_calls": int((run.summary or {}).get("writer_calls", 0)) if run else 0,
                "sections": {
                    "revised": statuses.get("revised", 0),
                    "extended": statuses.get("extended", 0),
                    "added": statuses.get("added", 0),
                    "removed": len(previous_keys - keys) if previous_keys else 0,
                    "kept": statuses.get("kept", 0),
                },
                "evidence": {k: int(evidence.get(k, 0)) for k in EVIDENCE_KINDS},
                "stale_citations": v.stale_citations,
                "claims": version_claims(session, v)["counts"],
                "committed_by": v.committed_by or "",
            }
        )
        previous_keys = keys
    return rows


def audit_trail(session: Session, report_id: int) -> list[dict[str, Any]]:
    """Who did what to the report and when, newest first: decisions, edits, commits,
    archiving, settings changes (``core.engine.audit``)."""
    rows = []
    for event in reversed(events_of(session, report_id)):
        detail = event.detail or {}
        what = event.action
        if "section" in detail:
            what += f" \u201c{detail['section']}\u201d"
        if "version" in detail:
            what += f" version {detail['version']}"
        if detail.get("changed"):
            what += ": " + ", ".join(f"{k} = {v}" for k, v in sorted(detail["changed"].items()))
        rows.append(
            {
                "when": f"{as_utc(event.at):%Y-%m-%d %H:%M} UTC",
                "who": event.actor,
                "where": DOORS.get(event.via, event.via),
                "what": what,
                "run": event.run_id,
            }
        )
    return rows
