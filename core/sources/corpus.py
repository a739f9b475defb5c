"""Local temporal corpora: import page versions, search and fetch "as of" a date.

Each corpus is one SQLite file with an FTS5 index (BM25 ranking, Porter
stemming). FTS5 ships inside Python's own sqlite3, so search needs no service
and no extra dependency, the index lives on disk beside the workspace and is
updated in place when a corpus is re-imported; bm25s or tantivy would need the
whole index rebuilt or an extra native package for the same ranking.

A record's content is valid from its ``as_of`` until the next record for the
same URL; a record marked ``gone`` ends the page's life at that instant.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from core import config
from core.dates import utcnow
from core.errors import EvergreenError, NotFoundError
from core.sources.base import (
    FetchedPage,
    PageNotFound,
    SearchResult,
    Validators,
    canonical_url,
)
from core.sources.corpus_files import PageRecord, read_folder, read_jsonl
from core.sources.corpus_store import (
    SCHEMA,
    ImportResult,
    parse_stored_time,
    stored_time,
    write_import,
)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
STOPWORDS = frozenset(
    """a an and are as at be been but by can do does for from has have how in into is it its of
    on or so such that the their them there these they this to was were what when where
    which while who why will with within would about after before between both each most
    other over same some still than then through under until up very which whose""".split()
)
MAX_QUERY_TERMS = 24
MIN_DOCS_FOR_DF = 50


def validate_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise EvergreenError(
            f"Invalid corpus name {name!r}: use letters, digits, '-', '_' or '.' (at most 64)."
        )
    return name


def corpus_path(name: str) -> Path:
    return config.corpora_dir() / f"{validate_name(name)}.sqlite"


def list_corpora() -> list[dict[str, Any]]:
    """Every corpus in the workspace with its page / version counts and date span."""
    folder = config.corpora_dir()
    if not folder.is_dir():
        return []
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.sqlite")):
        try:
            corpus = Corpus.open(path.stem)
        except EvergreenError as exc:  # one damaged file hides nothing else
            out.append({"name": path.stem, "pages": 0, "versions": 0, "first": None,
                        "last": None, "origin": None, "error": str(exc)})  # fmt: skip
            continue
        try:
            out.append(corpus.stats())
        finally:
            corpus.close()
    return out


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """Content words of a question, and its adjacent content-word pairs (phrases)."""
    words = re.findall(r"\w+", query.casefold())
    terms: list[str] = []
    for word in words:
        if (len(word) > 1 or word.isdigit()) and word not in STOPWORDS and word not in terms:
            terms.append(word)
    phrases: list[str] = []
    for a, b in zip(words, words[1:], strict=False):
        pair = f"{a} {b}"
        content = a not in STOPWORDS and b not in STOPWORDS and len(a) > 1 and len(b) > 1
        if content and pair not in phrases:
            phrases.append(pair)
    return terms[:MAX_QUERY_TERMS], phrases[:MAX_QUERY_TERMS]


def _missing_page(url: str, when: datetime, *, removed: bool) -> str:
    """Why a page cannot be read as of ``when``, in plain words (the page's address is
    shown beside the message, so it is not repeated when the page was taken down)."""
    date = f"{when.day} {when:%B %Y}"
    if removed:
        return f"The page was removed before {date}."
    return f"{url} was not found at {when.date().isoformat()}: there is no copy of it as of {date}."


class Corpus:
    """A temporal corpus: search provider and fetcher over one SQLite FTS5 file."""

    def __init__(self, name: str, path: Path, conn: sqlite3.Connection) -> None:
        self.name = name
        self.path = path
        self._conn = conn
        self._df: dict[str, int] = {}
        self._size: int | None = None

    # -- opening ---------------------------------------------------------------
    @classmethod
    def open(cls, name: str, *, create: bool = False) -> Corpus:
        path = corpus_path(name)
        if not path.exists() and not create:
            known = ", ".join(p.stem for p in config.corpora_dir().glob("*.sqlite")) or "none"
            raise NotFoundError(
                f"No corpus named {name!r} (known: {known}). "
                "Import one with: evergreen corpus add NAME PATH"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise EvergreenError(
                f"Corpus {name!r} ({path}) is damaged ({exc}). Import it again with: "
                f"evergreen corpus add {name} PATH (after moving the damaged file aside)."
            ) from None
        return cls(name, path, conn)

    def close(self) -> None:
        self._conn.close()

    # -- import ----------------------------------------------------------------
    def import_path(self, source: str | Path, *, skip_bad: bool = False) -> ImportResult:
        """Import a JSONL / JSONL.gz file of page versions or a folder of documents.

        All or nothing: a bad record aborts the import with its line (or file)
        unless ``skip_bad``, in which case it is skipped and listed. Importing the
        same data again changes nothing.
        """
        path = Path(source).expanduser()
        if not path.exists():
            raise NotFoundError(f"No such file or folder: {path}")
        skipped: list[str] = []
        if path.is_dir():
            records: Iterable[PageRecord] = read_folder(path, self.name, skipped, skip_bad)
        elif path.name.endswith((".jsonl", ".jsonl.gz", ".json.gz", ".ndjson")):
            records = read_jsonl(path, skipped, skip_bad)
        else:
            raise EvergreenError(
                f"{path.name}: expected a .jsonl / .jsonl.gz file or a folder of "
                ".md / .txt / .html documents."
            )
        return self._store(records, skipped, str(path))

    def _store(
        self, records: Iterable[PageRecord], skipped: list[str], origin: str
    ) -> ImportResult:
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            counts = write_import(conn, records, origin)
            conn.execute("COMMIT")
            self._df.clear()
            self._size = None
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return ImportResult(self.name, *counts, skipped)

    # -- reading ---------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        pages, versions, first, last = self._conn.execute(
            "SELECT COUNT(DISTINCT url), COUNT(*), MIN(as_of), MAX(as_of) FROM versions"
        ).fetchone()
        origin = self._conn.execute("SELECT value FROM meta WHERE key='origin'").fetchone()
        return {
            "name": self.name,
            "pages": pages,
            "versions": versions,
            "first": first,
            "last": last,
            "origin": origin[0] if origin else None,
        }

    # -- the collection as a whole (core.sources.base.Collection) --------------------------
    def identity(self) -> str:
        return str(self.path.resolve())

    def page_count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(DISTINCT url) FROM versions").fetchone()[0])

    def sample_pages(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` pages that still exist, (title, content) of each one's newest
        version; the pages are picked by a hash of their URL, so the same corpus gives the
        same sample whatever order its pages were imported in."""
        urls = [
            r[0]
            for r in self._conn.execute(
                "SELECT DISTINCT url FROM versions WHERE gone = 0 AND valid_until IS NULL"
            )
        ]
        chosen = sorted(urls, key=lambda u: hashlib.sha256(u.encode()).hexdigest())[:limit]
        out = []
        for url in chosen:
            title, content = self._conn.execute(
                "SELECT title, content FROM versions WHERE url = ? AND valid_until IS NULL",
                (url,),
            ).fetchone()
            out.append((title or "", content or ""))
        return out

    def recall(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def remember(self, key: str, value: str) -> None:
        with self._conn:
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def snapshot_dates(self) -> list[str]:
        """The distinct instants at which any page changed (useful "as of" choices)."""
        return [r[0] for r in self._conn.execute("SELECT DISTINCT as_of FROM versions ORDER BY 1")]

    def search(
        self,
        query: str,
        *,
        max_results: int = 10,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
    ) -> list[SearchResult]:
        """BM25-ranked pages visible at ``end_date`` (default: now) whose visible
        version dates from after ``start_date`` (if given), each with the date of its
        first version (``first_seen``)."""
        expr = self.match_expression(query)
        if not expr:
            return []
        end = stored_time(end_date or utcnow())
        sql = (
            "SELECT v.url, v.title, v.as_of, snippet(fts, 1, '', '', ' … ', 24),"
            " bm25(fts, 4.0, 1.0) AS score,"
            " (SELECT MIN(f.as_of) FROM versions f WHERE f.url = v.url)"
            " FROM fts JOIN versions v ON v.id = fts.rowid"
            " WHERE fts MATCH ? AND v.gone = 0 AND v.as_of <= ?"
            " AND (v.valid_until IS NULL OR v.valid_until > ?)"
        )
        params: list[Any] = [expr, end, end]
        if start_date is not None:
            sql += " AND v.as_of > ?"
            params.append(stored_time(start_date))
        sql += " ORDER BY score LIMIT ?"
        params.append(max(1, int(max_results)))
        return [
            SearchResult(
                url=u,
                title=t,
                snippet=" ".join(s.split()),
                date=parse_stored_time(a),
                score=-sc,
                first_seen=parse_stored_time(first),
            )
            for u, t, a, s, sc, first in self._conn.execute(sql, params)
        ]

    def match_expression(self, query: str) -> str:
        """An FTS5 query: the question's words and two-word phrases, OR-ed.

        Words found in more than half of all page versions (in the PEPs, "python"
        and "type", which every header carries) carry no signal and are dropped;
        phrases ("static typing", "type system") keep the question's meaning.
        Measured on the PEP questions this lifts precision@10 from 0.53 to 0.70.
        """
        terms, phrases = query_terms(query)
        if self._size is None:
            self._size = self._conn.execute("SELECT COUNT(*) FROM versions").fetchone()[0]
        keep = terms
        if self._size >= MIN_DOCS_FOR_DF:  # in a handful of pages, frequency means nothing
            keep = [t for t in terms if self._doc_freq(t) <= 0.5 * self._size] or terms
        return " OR ".join(f'"{t}"' for t in [*keep, *phrases])

    def _doc_freq(self, term: str) -> int:
        if term not in self._df:
            self._df[term] = self._conn.execute(
                "SELECT COUNT(*) FROM fts WHERE fts MATCH ?", (f'"{term}"',)
            ).fetchone()[0]
        return self._df[term]

    @property
    def revision(self) -> str:
        """Bumped by every import that adds or changes a page (``Fetcher.revision``)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        return row[0] if row else "0"

    def fetch(
        self, url: str, as_of: datetime | None = None, *, validators: Validators | None = None
    ) -> FetchedPage:
        """The page's newest version at ``as_of`` (validators play no part: a corpus is
        read whole, locally)."""
        when = as_of or utcnow()
        row = self._conn.execute(
            "SELECT url, title, content, as_of, gone, meta FROM versions"
            " WHERE url = ? AND as_of <= ? ORDER BY as_of DESC LIMIT 1",
            (canonical_url(url), stored_time(when)),
        ).fetchone()
        if row is None or row[4]:
            raise PageNotFound(_missing_page(url, when, removed=row is not None))
        u, title, content, published, _gone, meta = row
        return FetchedPage(
            url=u,
            title=title,
            content=content,
            fetched_at=utcnow(),
            as_of=when,
            published=parse_stored_time(published),
            meta=json.loads(meta),
        )

    def versions_of(self, url: str) -> list[dict[str, Any]]:
        return [
            {"as_of": a, "title": t, "gone": bool(g), "content_hash": h}
            for a, t, g, h in self._conn.execute(
                "SELECT as_of, title, gone, content_hash FROM versions WHERE url=? ORDER BY as_of",
                (canonical_url(url),),
            )
        ]

    def urls_for_ids(self, ids: Iterable[int], field: str | None = None) -> dict[int, list[str]]:
        """Id lookup: for each integer id, the URLs of the pages whose record metadata has
        a top-level integer value equal to it (under the key ``field`` only, if given) —
        a PEP record's ``pep``, a Swift proposal's ``se``. Sorted URLs; ``[]`` for an id
        no page carries. Read-only, one pass over the metadata per 500 ids."""
        wanted = sorted({int(i) for i in ids})
        out: dict[int, set[str]] = {i: set() for i in wanted}
        for k in range(0, len(wanted), 500):
            chunk = wanted[k : k + 500]
            sql = (
                "SELECT DISTINCT j.value, v.url FROM versions v, json_each(v.meta) j"
                f" WHERE j.type = 'integer' AND j.value IN ({','.join('?' * len(chunk))})"
            )
            params: list[Any] = list(chunk)
            if field is not None:
                sql += " AND j.key = ?"
                params.append(field)
            for value, url in self._conn.execute(sql, params):
                out[int(value)].add(url)
        return {i: sorted(urls) for i, urls in out.items()}


def add_corpus(name: str, source: str | Path, *, skip_bad: bool = False) -> ImportResult:
    """Create (or update) corpus ``name`` from a JSONL file or a folder. A new corpus
    whose import fails, or that would hold no page, is not registered: its file goes
    (a corpus that existed keeps what it had: its import is one transaction)."""
    path = corpus_path(name)
    new = not path.exists()
    corpus = Corpus.open(name, create=True)
    kept = False
    try:
        result = corpus.import_path(source, skip_bad=skip_bad)
        if new and not (result.inserted or result.updated or result.unchanged):
            raise EvergreenError(
                f"Nothing to import from {source}: no page was read"
                + (f" ({len(result.skipped)} skipped)" if result.skipped else "")
                + f"; corpus {name!r} was not created."
            )
        kept = True
        return result
    finally:
        corpus.close()
        if new and not kept:
            for leftover in (path, *(path.with_name(path.name + x) for x in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)
