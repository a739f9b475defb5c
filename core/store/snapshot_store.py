"""Storing a fetched page as a snapshot of its source, and the snapshots a run stored."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from core.dates import iso, utcnow
from core.domain.changes import ChangeResult
from core.domain.hashing import content_hash
from core.sources.base import FetchedPage
from core.store.models import Snapshot, Source


def store_snapshot(
    session: Session,
    source: Source,
    page: FetchedPage,
    *,
    as_of: datetime,
    run_id: int | None,
    previous: Snapshot | None = None,
    change: ChangeResult | None = None,
) -> Snapshot:
    snap = Snapshot(
        source_id=source.id,
        title=page.title or source.title,
        content=page.content,
        content_hash=content_hash(page.content),
        fetched_at=utcnow(),
        as_of=as_of,
        published=page.published,
        previous_id=previous.id if previous else None,
        change_kind=change.kind if change else "new",
        similarity=change.similarity if change else None,
        claim_diff=[c.as_dict() for c in change.claims] if change else [],
        reasons=list(change.reasons) if change else [],
        run_id=run_id,
        meta=json_safe(page.meta),
    )
    session.add(snap)
    if page.title and page.title != source.title:
        source.title = page.title
        session.add(source)
    session.flush()
    return snap


def json_safe(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """A page's metadata as stored (JSON types only)."""
    if not meta:
        return {}
    return json.loads(json.dumps(dict(meta), default=str))


def run_snapshots(session: Session, run_id: int | None) -> dict[tuple[int, str], Snapshot]:
    """What this run already fetched (by source and as-of), for a resumed run."""
    if run_id is None:
        return {}
    rows = session.exec(select(Snapshot).where(Snapshot.run_id == run_id)).all()
    return {(s.source_id, iso(s.as_of) or ""): s for s in rows}
