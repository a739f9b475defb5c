"""Engine, sessions and schema migrations (Alembic, run programmatically).

Every database, SQLite or PostgreSQL, is brought to the newest schema by
``alembic upgrade head`` when it is opened, so an existing workspace survives
upgrades. Committed versions are immutable: the ORM refuses to update or delete
a ReportVersion, its Sections or their Citations.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, StatementError
from sqlmodel import Session, create_engine

from core import config
from core.errors import EvergreenError
from core.redact import redact_credentials
from core.store.models import Citation, Claim, ReportVersion, Section

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


#: how long a SQLite command waits for another one's write to end before it gives up
#: (seconds; ``EVERGREEN_SQLITE_BUSY_TIMEOUT`` sets it, 0.1 to 600)
ENV_BUSY_TIMEOUT = "EVERGREEN_SQLITE_BUSY_TIMEOUT"
BUSY_TIMEOUT = 30.0


def busy_timeout() -> float:
    """Seconds SQLite waits for the write lock (:data:`ENV_BUSY_TIMEOUT`, else 30)."""
    raw = config.value(ENV_BUSY_TIMEOUT)
    try:
        seconds = float(raw) if raw else BUSY_TIMEOUT
    except ValueError:
        raise EvergreenError(
            f"{ENV_BUSY_TIMEOUT} must be a number of seconds (got {raw!r})."
        ) from None
    if not 0.1 <= seconds <= 600:  # also refuses nan
        raise EvergreenError(f"{ENV_BUSY_TIMEOUT} must be 0.1 to 600 seconds (got {raw!r}).")
    return seconds


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={int(busy_timeout() * 1000)}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def _open_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if str(path) not in ("", ":memory:"):
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": busy_timeout(), "check_same_thread": False}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    try:
        _migrate(engine, url)
    except DatabaseError as exc:
        raise (
            damaged(exc, url)
            or busy(exc, url)
            or EvergreenError(f"Cannot open the database {_where(url)}: {exc.orig}")
        ) from None
    return engine


def _migrate(engine: Engine, url: str) -> None:
    """``alembic upgrade head`` in one transaction.

    SQLite alters a table by rebuilding it (a copy, then the old one dropped); with foreign
    keys enforced, dropping a table that other rows point at fails. SQLite's documented
    procedure is followed: enforcement off outside the transaction, the migrations, then
    ``PRAGMA foreign_key_check`` before the commit, and enforcement back on."""
    if _at_head(engine):
        return
    from alembic import command  # loading alembic costs a command 0.2 s: only to migrate
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    sqlite = engine.dialect.name == "sqlite"
    cfg = alembic_config(url)
    head = ScriptDirectory.from_config(cfg).get_current_head()
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
        conn.commit()
        if current == head:
            return
        if sqlite:
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            conn.commit()
        try:
            with conn.begin():
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
                if (
                    sqlite
                    and current is not None
                    and conn.exec_driver_sql("PRAGMA foreign_key_check").first()
                ):
                    raise EvergreenError(
                        f"The database {_where(url)} has rows pointing at rows that do not "
                        "exist; the schema upgrade was not applied. Restore it from a backup."
                    )
        finally:
            if sqlite:
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()


_REVISION = re.compile(r"^(down_)?revision\b[^=]*=\s*(.+)$", re.M)
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")


def migration_head() -> str | None:
    """The newest migration's revision, read from the migration files' own
    ``revision`` / ``down_revision`` lines (alembic's ScriptDirectory reads the same;
    ``test_db.py`` holds the two to the same answer); None when they do not name a
    single head, and alembic decides."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        for down, value in _REVISION.findall(path.read_text(encoding="utf-8")):
            (parents if down else revisions).update(_QUOTED.findall(value))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _at_head(engine: Engine) -> bool:
    """Is the database at the newest migration? Read without loading alembic: its
    ``alembic_version`` row against :func:`migration_head`. Anything else (a new
    database, an older one, a head the files do not name) is alembic's to decide."""
    head = migration_head()
    if head is None:
        return False
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except DatabaseError:
        return False  # no such table yet (a new database), or a damaged one: alembic says
    return [row[0] for row in rows] == [head]


_DAMAGED = ("file is not a database", "malformed", "disk i/o error", "file is encrypted")
_FULL = ("database or disk is full", "no space left")


def _where(url: str) -> str:
    """The database as a person can find it: its file, or its URL without credentials."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    return redact_credentials(url)


def damaged(exc: DatabaseError, url: str | None = None) -> EvergreenError | None:
    """One line a person can act on for a damaged database file or a full disk (None for
    any other database error)."""
    text = str(exc.orig).lower()
    where = _where(url or config.database_url())
    if any(k in text for k in _DAMAGED):
        return EvergreenError(
            f"The database {where} is damaged ({exc.orig}). Restore it from a backup, or "
            "move it aside to start an empty workspace."
        )
    if any(k in text for k in _FULL):
        return EvergreenError(
            f"The disk holding {where} is full; nothing of this step was saved. Free some "
            "space and try again."
        )
    return None


_LOCKED = ("database is locked", "database table is locked", "database schema is locked")


class WorkspaceBusyError(EvergreenError):
    """Another command held the workspace's SQLite database for writing longer than this
    one would wait (:func:`busy_timeout`)."""


def is_locked(exc: BaseException) -> bool:
    """Is ``exc`` (or what it wraps) SQLite's "database is locked"?"""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, WorkspaceBusyError):
            return False  # said already
        text = str(getattr(current, "orig", None) or current).lower()
        if any(k in text for k in _LOCKED):
            return True
        current = current.__cause__ or current.__context__
    return False


def busy(exc: BaseException, url: str | None = None) -> EvergreenError | None:
    """One line for a command that waited for the write lock and gave up (None for any
    other error): what holds the workspace, when a run says so, and to try again."""
    if not is_locked(exc):
        return None
    holder = "another command is writing to it"
    with contextlib.suppress(Exception):  # without the detail, the message still goes out
        holder = _writer(url) or holder
    return WorkspaceBusyError(
        f"The workspace is busy ({holder}; waited {busy_timeout():g} s); try again in a minute."
    )


def _writer(url: str | None) -> str | None:
    """The run working on the workspace, if one is recorded ("an import of report 3 is
    writing"): read in a connection of its own, which a writer does not block."""
    from sqlmodel import col, select

    from core.store.models import UpdateRun

    engine = _ENGINES.get(config.database_url(url))
    if engine is None:
        return None
    with Session(engine) as session:
        run = session.exec(
            select(UpdateRun)
            .where(col(UpdateRun.status) == "running")
            .order_by(col(UpdateRun.id).desc())
        ).first()
    if run is None:
        return None
    kind = {"import": "an import", "create": "a new report's research"}.get(
        str(run.kind), f"an {run.kind}" if str(run.kind)[:1] in "aeiou" else f"a {run.kind}"
    )
    return f"{kind} of report {run.report_id} is writing"


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine_for(url: str) -> Engine:
    """One engine per database URL per process, migrated once when first opened."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(url)
        if engine is None:
            engine = _ENGINES[url] = _open_engine(url)
        return engine


@atexit.register
def _close_all() -> None:
    """Close every pooled connection when the process ends: SQLite folds its write-ahead
    log back into the database file when the last connection closes, so a finished
    command leaves one self-contained file (copyable, backed up whole), not a file plus
    a log only garbage collection at exit might have closed."""
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        engine.dispose()


def dispose_engine(url: str) -> None:
    """Close the pooled connections to ``url`` (e.g. before dropping a test database)."""
    with _ENGINES_LOCK:
        engine = _ENGINES.pop(url, None)
    if engine is not None:
        engine.dispose()


def get_engine(url: str | None = None) -> Engine:
    """The engine for ``url`` (default: the workspace database), migrated to head."""
    return _engine_for(config.database_url(url))


@contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A session that commits on success and rolls back on any exception."""
    with Session(get_engine(url), expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except DatabaseError as exc:
            session.rollback()
            raise damaged(exc, url) or busy(exc, url) or exc from exc
        except StatementError as exc:
            session.rollback()
            if isinstance(exc.orig, EvergreenError):  # a value a column refused (models)
                raise exc.orig from None
            raise
        except BaseException:
            session.rollback()
            raise


def _refuse_change(mapper, connection, target) -> None:  # noqa: ANN001 - SQLAlchemy hook
    raise EvergreenError(
        f"{type(target).__name__} {target.id} belongs to a committed version and cannot change."
    )


for _model in (ReportVersion, Section, Citation, Claim):
    event.listen(_model, "before_update", _refuse_change)
    event.listen(_model, "before_delete", _refuse_change)
