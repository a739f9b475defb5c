"""A corpus's SQLite file: its schema (page versions with an FTS5 index kept by
triggers), how instants are stored in it, and writing an import's page versions into it.

A record's content is valid from its ``as_of`` until the next record for the same URL
(``valid_until``); every import that adds or changes a page bumps the corpus's revision.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.dates import iso, utcnow
from core.sources.corpus_files import PageRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    as_of TEXT NOT NULL,
    valid_until TEXT,
    gone INTEGER NOT NULL DEFAULT 0,
    content TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    UNIQUE (url, as_of)
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, content, content='versions', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS versions_ai AFTER INSERT ON versions BEGIN
    INSERT INTO fts(rowid, title, content) VALUES (new.id, new.title, new.content);
END;
CREATE TRIGGER IF NOT EXISTS versions_ad AFTER DELETE ON versions BEGIN
    INSERT INTO fts(fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
END;
CREATE TRIGGER IF NOT EXISTS versions_au AFTER UPDATE OF title, content ON versions BEGIN
    INSERT INTO fts(fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
    INSERT INTO fts(rowid, title, content) VALUES (new.id, new.title, new.content);
END;
"""

#: an import's (read, inserted, updated, unchanged)
Counts = tuple[int, int, int, int]


@dataclass(frozen=True)
class ImportResult:
    corpus: str
    read: int
    inserted: int
    updated: int
    unchanged: int
    skipped: list[str]  # "line 12: ..." for records skipped with skip_bad

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "read": self.read,
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
        }


def stored_time(dt: datetime) -> str:
    return iso(dt) or ""


def parse_stored_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def write_import(conn: sqlite3.Connection, records: Iterable[PageRecord], origin: str) -> Counts:
    """Write ``records`` (inside the caller's transaction): their versions, each touched
    page's validity and the revision, and where the import came from."""
    counts, touched = write_versions(conn, records)
    if touched:
        mark_changed(conn, touched)
    conn.execute(
        "INSERT OR REPLACE INTO meta VALUES ('origin', ?), ('imported_at', ?)",
        (origin, stored_time(utcnow())),
    )
    return counts


def write_versions(
    conn: sqlite3.Connection, records: Iterable[PageRecord]
) -> tuple[Counts, set[str]]:
    """Insert each record's version, or update the stored one of the same page and
    instant; a version stored as it is counts as unchanged. The counts (read, inserted,
    updated, unchanged) and the URLs of the pages written."""
    read = inserted = updated = unchanged = 0
    touched: set[str] = set()
    existing = {
        (u, a): (h, t, g)
        for u, a, h, t, g in conn.execute(
            "SELECT url, as_of, content_hash, title, gone FROM versions"
        )
    }
    for rec in records:
        read += 1
        key = (rec.url, stored_time(rec.as_of))
        meta = json.dumps(rec.meta or {}, ensure_ascii=False, default=str)
        old = existing.get(key)
        if old == (rec.content_hash, rec.title, int(rec.gone)):
            unchanged += 1
            continue
        if old is None:
            conn.execute(
                "INSERT INTO versions"
                " (url, title, as_of, gone, content, content_hash, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    *key[:1],
                    rec.title,
                    key[1],
                    int(rec.gone),
                    rec.content,
                    rec.content_hash,
                    meta,
                ),
            )
            inserted += 1
        else:
            conn.execute(
                "UPDATE versions SET title=?, gone=?, content=?, content_hash=?, meta=?"
                " WHERE url=? AND as_of=?",
                (rec.title, int(rec.gone), rec.content, rec.content_hash, meta, *key),
            )
            updated += 1
        existing[key] = (rec.content_hash, rec.title, int(rec.gone))
        touched.add(rec.url)
    return (read, inserted, updated, unchanged), touched


def mark_changed(conn: sqlite3.Connection, touched: set[str]) -> None:
    """Each version of the ``touched`` pages is valid until the next one, and the
    corpus's revision goes up."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS touched (url TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM touched")
    conn.executemany("INSERT INTO touched VALUES (?)", ((u,) for u in touched))
    conn.execute(
        "UPDATE versions SET valid_until = (SELECT MIN(v2.as_of) FROM versions v2"
        " WHERE v2.url = versions.url AND v2.as_of > versions.as_of)"
        " WHERE url IN (SELECT url FROM touched)"
    )
    # pages changed: a look at a page stored before is no longer what it says
    conn.execute(
        "INSERT INTO meta VALUES ('revision', '1') ON CONFLICT(key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
