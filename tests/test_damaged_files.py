"""A damaged database or corpus file gets one line naming the file and what to do; a
damaged corpus affects only what uses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.app.report_views import as_of_choices
from core.errors import EvergreenError
from core.sources.corpus import add_corpus, list_corpora
from core.store.db import session_scope
from core.workspace import load_sample
from tests.conftest import APP, write_jsonl
from tests.helpers.corpus import corpus_records

ROOT = Path(__file__).resolve().parents[1]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVERGREEN_HOME": str(home), "COLUMNS": "200"}
    env.pop("EVERGREEN_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_gets_one_line_naming_the_file(tmp_path: Path, damage: str) -> None:
    home = tmp_path / "ws"
    home.mkdir()
    db = home / "evergreen.db"
    if damage == "garbage":
        db.write_bytes(os.urandom(6000))
    else:
        assert cli(home, "demo").returncode == 0
        db.write_bytes(db.read_bytes()[: db.stat().st_size // 3])
    done = cli(home, "list")
    assert done.returncode == 1
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    text = " ".join(lines)
    assert "Traceback" not in done.stderr and len(lines) <= 4, done.stderr
    assert str(db) in text.replace("\n", "") or "evergreen.db" in text
    assert "is damaged" in text and "backup" in text


def test_a_damaged_corpus_affects_only_what_uses_it(workspace: Path, tmp_path: Path) -> None:
    add_corpus("good", write_jsonl(tmp_path / "good.jsonl", corpus_records()))
    add_corpus("bad", write_jsonl(tmp_path / "bad.jsonl", corpus_records()))
    bad = workspace / "corpora" / "bad.sqlite"
    if not bad.exists():  # wherever the workspace keeps corpora
        [bad] = [p for p in workspace.rglob("bad.sqlite")]
    bad.write_bytes(os.urandom(9000))
    rows = {r["name"]: r for r in list_corpora()}
    assert rows["good"]["pages"] > 0 and "error" not in rows["good"]
    assert "is damaged" in rows["bad"]["error"] and "corpus add bad" in rows["bad"]["error"]
    assert as_of_choices("corpus:bad") == [] and as_of_choices("corpus:good")
    with pytest.raises(EvergreenError, match="damaged"):
        from core.sources.corpus import Corpus

        Corpus.open("bad")


def test_the_reports_screen_survives_a_damaged_corpus(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    with session_scope() as s:
        load_sample(s)
    [sample] = list(workspace.rglob("sample.sqlite"))
    sample.write_bytes(os.urandom(9000))
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert not at.exception, at.exception


def test_a_full_disk_is_one_line_that_says_nothing_was_saved(workspace: Path) -> None:
    import sqlite3

    from sqlalchemy.exc import OperationalError

    from core.store.db import damaged

    full = OperationalError("INSERT …", {}, sqlite3.OperationalError("database or disk is full"))
    found = damaged(full)
    assert found is not None and "is full" in str(found) and "nothing of this step" in str(found)
    other = OperationalError("SELECT …", {}, sqlite3.OperationalError("database is locked"))
    assert damaged(other) is None  # not every database error is a damaged file
