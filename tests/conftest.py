"""Shared fixtures: every test gets its own workspace (database + corpora)."""

from __future__ import annotations

import gzip
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PEPS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "peps"
PEPS_CORPUS = PEPS / "peps_corpus.jsonl.gz"


PG_URL_ENV = "EVERGREEN_TEST_PG_URL"  # an admin URL; .ci/run starts PostgreSQL and sets it


@pytest.fixture(params=["sqlite", "postgresql"])
def workspace(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A fresh workspace; every test that uses it runs on SQLite and on PostgreSQL."""
    home = tmp_path / "ws"
    home.mkdir()
    monkeypatch.setenv("EVERGREEN_HOME", str(home))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    monkeypatch.delenv("EVERGREEN_CORPORA", raising=False)
    if request.param == "sqlite":
        yield home
        return
    admin = os.environ.get(PG_URL_ENV)
    if not admin:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs every test on PostgreSQL too, but {PG_URL_ENV} is unset")
        pytest.skip(f"no PostgreSQL server ({PG_URL_ENV} unset)")
    with _postgres_database(admin) as url:
        monkeypatch.setenv("EVERGREEN_DB", url)
        yield home


@contextmanager
def _postgres_database(admin: str) -> Iterator[str]:
    """A new, empty database for one test, dropped afterwards."""
    import sqlalchemy as sa

    from core.db import dispose_engine

    name = f"eg_test_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(admin).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        dispose_engine(url)
        with engine.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def write_jsonl(path: Path, records: list[dict], *, gz: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def peps_slice(tmp_path: Path, peps: set[int]) -> Path:
    """A JSONL.gz holding every version of the given PEPs from the shared corpus."""
    if not PEPS_CORPUS.exists():
        pytest.skip("the shared PEP corpus is not beside this checkout")
    out = tmp_path / "peps_slice.jsonl.gz"
    with (
        gzip.open(PEPS_CORPUS, "rt", encoding="utf-8") as src,
        gzip.open(out, "wt", encoding="utf-8") as dst,
    ):
        for line in src:
            if json.loads(line)["pep"] in peps:
                dst.write(line)
    return out
