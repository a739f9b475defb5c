"""The evidence pool's rows: sources, a report's pool entries with their stable
markers, and the snapshots of a source (refreshing the pool: ``core.engine.evidence``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, select

from core.dates import utcnow
from core.sources.base import canonical_url
from core.store.models import PoolEntry, Report, Snapshot, Source

#: each database's INSERT with an ON CONFLICT clause
_INSERTS = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}


def get_or_create_source(session: Session, url: str, title: str = "") -> Source:
    """The pool's source for ``url``, made if there is none — in one statement with a
    conflict clause (``INSERT … ON CONFLICT (url) DO NOTHING``, then a select), so runs in
    parallel threads or processes that find the same page never collide on the unique URL
    (a select, then an insert, let two of them both insert).

    On PostgreSQL the row is made in a short transaction of its own, committed at once:
    inside a run's transaction, two runs pooling the same pages in different orders each
    waited on the other's uncommitted row — a deadlock (``update --all --workers 4``). A
    source row holds only the address and title, so it is safe to keep whatever becomes
    of the run. SQLite has one writer at a time: there the run's own transaction does it."""
    url = canonical_url(url)
    source = session.exec(select(Source).where(Source.url == url)).first()
    if source is None:
        bind = session.get_bind()
        dialect = bind.dialect.name
        insert = _INSERTS.get(dialect)
        if insert is None:  # a database without the clause: look first, as before
            session.add(Source(url=url, title=title))
            session.flush()
        else:
            statement = (
                insert(Source)
                .values(url=url, title=title, created_at=utcnow())
                .on_conflict_do_nothing(index_elements=["url"])
            )
            if dialect == "postgresql" and isinstance(bind, Engine):
                with bind.begin() as own:  # committed before the run goes on
                    own.execute(statement)
            else:
                session.execute(statement)
        source = session.exec(select(Source).where(Source.url == url)).one()
    if title and not source.title:
        source.title = title
    return source


def pool_of(session: Session, report_id: int) -> list[PoolEntry]:
    return list(
        session.exec(
            select(PoolEntry)
            .where(PoolEntry.report_id == report_id)
            .order_by(col(PoolEntry.marker))
        )
    )


def pool_snapshots(session: Session, report_id: int, as_of: datetime) -> dict[int, int]:
    """marker → the newest snapshot (with content) of that source as of ``as_of``."""
    out: dict[int, int] = {}
    for entry in pool_of(session, report_id):
        snap = session.exec(
            select(Snapshot)
            .where(
                Snapshot.source_id == entry.source_id,
                col(Snapshot.content).is_not(None),
                col(Snapshot.as_of) <= as_of,
            )
            .order_by(col(Snapshot.as_of).desc(), col(Snapshot.id).desc())
        ).first()
        if snap is not None:
            out[entry.marker] = snap.id
    return out


def pool_entry(
    session: Session, report: Report, source: Source, marker: int | None = None
) -> PoolEntry:
    """The source's place in the report's pool, allocating a stable marker once."""
    entry = session.exec(
        select(PoolEntry).where(PoolEntry.report_id == report.id, PoolEntry.source_id == source.id)
    ).first()
    if entry is None:
        if marker is None:
            marker = report.next_marker
        entry = PoolEntry(report_id=report.id, source_id=source.id, marker=marker)
        report.next_marker = max(report.next_marker, marker + 1)
        session.add(entry)
        session.add(report)
        session.flush()
    return entry


def newest_snapshot(session: Session, source_id: int) -> Snapshot | None:
    return session.exec(
        select(Snapshot)
        .where(Snapshot.source_id == source_id, col(Snapshot.content).is_not(None))
        .order_by(col(Snapshot.id).desc())
    ).first()


def snapshot_history(session: Session, source_id: int) -> list[Snapshot]:
    return list(
        session.exec(
            select(Snapshot).where(Snapshot.source_id == source_id).order_by(col(Snapshot.id))
        )
    )
