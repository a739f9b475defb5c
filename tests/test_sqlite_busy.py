"""A long write on SQLite does not crash the other commands (issue 45, item 4).

During a 110 s import, ``evergreen settings 1 --tau 0.8`` and ``evergreen update 1`` died
after 37 s with 235- and 264-line "database is locked" tracebacks. A command now waits for
the write lock (``EVERGREEN_SQLITE_BUSY_TIMEOUT``, 30 s unless set) and, when it must give
up, says so in one line. Here another connection holds the write lock, as a long import
does.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.store.db import WorkspaceBusyError, busy, dispose_engine, session_scope
from core.store.models import Report
from core.workspace import load_sample
from tests.conftest import run_cli, run_cli_process

WAIT = {"EVERGREEN_SQLITE_BUSY_TIMEOUT": "1"}


@pytest.fixture
def sqlite_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A SQLite workspace with the sample report (report 1)."""
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    with session_scope() as session:
        load_sample(session)
    yield tmp_path
    dispose_engine(f"sqlite:///{tmp_path / 'evergreen.db'}")


def _fresh_connections(home: Path) -> None:
    """Close this process's pooled connections: the next ones read the wait setting."""
    dispose_engine(f"sqlite:///{home / 'evergreen.db'}")


@contextmanager
def write_lock(home: Path, seconds: float | None = None) -> Iterator[None]:
    """Another connection holding the write lock (for ``seconds``, else the whole block)."""
    conn = sqlite3.connect(home / "evergreen.db", isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE report SET title = title")
    timer = threading.Timer(seconds, lambda: conn.execute("ROLLBACK")) if seconds else None
    if timer:
        timer.start()
    try:
        yield
    finally:
        if timer:
            timer.join()
        else:
            conn.execute("ROLLBACK")
        conn.close()


def _one_busy_line(stderr: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "The workspace is busy" in lines[0] and "try again in a minute" in lines[0], stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    "args", [("settings", "1", "--tau", "0.8"), ("update", "1", "--as-of", "2026-04-15")]
)
def test_a_command_that_cannot_get_the_write_lock_says_so_in_one_line(
    sqlite_home: Path, args: tuple[str, ...]
) -> None:
    _fresh_connections(sqlite_home)
    with write_lock(sqlite_home):
        start = time.monotonic()
        done = run_cli(sqlite_home, *args, env=WAIT)
        waited = time.monotonic() - start
    _fresh_connections(sqlite_home)
    assert done.returncode == 1
    _one_busy_line(done.stderr)
    assert waited < 20  # the setting counts: not the default 30 s
    with session_scope() as session:  # nothing half-done: the report is as it was
        assert session.get(Report, 1).title


@pytest.mark.slow  # real processes / whole corpora
def test_as_a_process_too(sqlite_home: Path) -> None:
    """The real command, as a person runs it: one line on stderr, exit 1."""
    _fresh_connections(sqlite_home)
    with write_lock(sqlite_home):
        done = run_cli_process(sqlite_home, "settings", "1", "--tau", "0.8", env=WAIT)
    assert done.returncode == 1
    _one_busy_line(done.stderr)


def test_a_command_waits_for_a_short_write_to_end(sqlite_home: Path) -> None:
    _fresh_connections(sqlite_home)
    with write_lock(sqlite_home, seconds=1.5):
        done = run_cli(
            sqlite_home,
            "settings",
            "1",
            "--tau",
            "0.8",
            env={"EVERGREEN_SQLITE_BUSY_TIMEOUT": "30"},
        )
    _fresh_connections(sqlite_home)
    assert done.returncode == 0, done.stderr


def test_a_session_that_gives_up_raises_the_one_line_error(
    sqlite_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVERGREEN_SQLITE_BUSY_TIMEOUT", "0.5")
    _fresh_connections(sqlite_home)
    refused = pytest.raises(WorkspaceBusyError, match="workspace is busy")
    with write_lock(sqlite_home), refused, session_scope() as session:
        report = session.get(Report, 1)
        report.title = "changed"
    _fresh_connections(sqlite_home)
    assert busy(ValueError("something else")) is None


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon", "601"])
def test_a_wait_that_is_no_wait_is_refused(
    sqlite_home: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh_connections(sqlite_home)
    done = run_cli(sqlite_home, "list", env={"EVERGREEN_SQLITE_BUSY_TIMEOUT": value})
    _fresh_connections(sqlite_home)
    assert done.returncode == 1
    assert "EVERGREEN_SQLITE_BUSY_TIMEOUT must be" in done.stderr
