"""Shared fixtures: every test gets its own workspace (database + corpora)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

pytest_plugins = ["tests.helpers.browser"]  # the browser fixtures (chromium, browser_page)

PEPS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "peps"
PEPS_CORPUS = PEPS / "peps_corpus.jsonl.gz"


PG_URL_ENV = "EVERGREEN_TEST_PG_URL"  # an admin URL; .ci/run starts PostgreSQL and sets it


@pytest.fixture(params=["sqlite", "postgresql"])
def workspace(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A fresh workspace; every test that uses it runs on SQLite and on PostgreSQL. Its
    database is empty and already migrated: a copy of a template migrated once per test
    session (an upgrade from scratch is tested in test_db and test_states)."""
    yield from _workspace(request, tmp_path, monkeypatch, sample=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def sample_workspace(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A workspace as ``evergreen demo`` leaves it (the sample corpus and report 1, the
    sample report), on SQLite and on PostgreSQL: a copy of one loaded once per session.
    Loading the sample itself is tested from an empty workspace (test_app, test_cli)."""
    yield from _workspace(request, tmp_path, monkeypatch, sample=True)


def _workspace(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    sample: bool,
) -> Iterator[Path]:
    home = tmp_path / "ws"
    home.mkdir()
    monkeypatch.setenv("EVERGREEN_HOME", str(home))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    monkeypatch.delenv("EVERGREEN_CORPORA", raising=False)
    if request.param == "sqlite":
        template = request.getfixturevalue("sqlite_sample" if sample else "sqlite_template")
        if sample:
            shutil.copytree(template, home, dirs_exist_ok=True)
        else:
            shutil.copyfile(template, home / "evergreen.db")
        yield home
        _join_runs()
        return
    admin = os.environ.get(PG_URL_ENV)
    if not admin:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs every test on PostgreSQL too, but {PG_URL_ENV} is unset")
        pytest.skip(f"no PostgreSQL server ({PG_URL_ENV} unset)")
    if sample:
        template, files = request.getfixturevalue("postgres_sample")
        shutil.copytree(files, home, dirs_exist_ok=True)
    else:
        template = request.getfixturevalue("postgres_template")
    with _postgres_database(admin, template=template) as url:
        monkeypatch.setenv("EVERGREEN_DB", url)
        yield home
        _join_runs()  # before the database goes: a run a test left going finishes first


def _join_runs() -> None:
    """Let the background runs a test started end in its own workspace (else one writes
    to the next test's database, or to a dropped one)."""
    from core.engine import jobs

    left = jobs.join_all(timeout=120)
    assert not left, f"background runs still going after the test: {left}"


def _migrated(url: str) -> None:
    """Bring the database at ``url`` to the newest schema, then close every connection."""
    from core.store.db import dispose_engine, get_engine

    get_engine(url)  # opening a database migrates it
    dispose_engine(url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite workspace database at the newest schema, made once per session
    (per xdist worker); each workspace starts from a copy of it."""
    path = tmp_path_factory.mktemp("template") / "evergreen.db"
    _migrated(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """The name of an empty PostgreSQL database at the newest schema, made once per
    session (per xdist worker); each test's database is ``CREATE DATABASE … TEMPLATE``
    of it, a file copy instead of a migration."""
    import sqlalchemy as sa

    admin = os.environ[PG_URL_ENV]
    name = f"eg_template_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        _migrated(sa.engine.make_url(admin).set(database=name).render_as_string(False))
        yield name
    finally:
        _drop_database(engine, name)
        engine.dispose()


def _load_sample(home: Path, url: str) -> None:
    """``evergreen demo`` into the workspace folder ``home`` with its database at ``url``,
    then close every connection to that database."""
    from core.store.db import dispose_engine, session_scope
    from core.workspace import load_sample

    with pytest.MonkeyPatch.context() as env:
        env.setenv("EVERGREEN_HOME", str(home))
        env.setenv("EVERGREEN_DB", url)
        env.delenv("EVERGREEN_CORPORA", raising=False)
        with session_scope() as session:
            assert load_sample(session)["report_id"] == 1
    dispose_engine(url)


@pytest.fixture(scope="session")
def sqlite_sample(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Path:
    """A workspace folder with the sample loaded (its database and its corpora), made once
    per session; ``sample_workspace`` copies it."""
    home = tmp_path_factory.mktemp("sample-sqlite")
    shutil.copyfile(sqlite_template, home / "evergreen.db")
    _load_sample(home, f"sqlite:///{home / 'evergreen.db'}")
    return home


@pytest.fixture(scope="session")
def postgres_sample(
    tmp_path_factory: pytest.TempPathFactory, postgres_template: str
) -> Iterator[tuple[str, Path]]:
    """A PostgreSQL template database with the sample loaded, and the workspace folder
    holding the sample corpus, made once per session; ``sample_workspace`` copies both."""
    import sqlalchemy as sa

    admin = os.environ[PG_URL_ENV]
    home = tmp_path_factory.mktemp("sample-postgresql")
    name = f"eg_template_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}" TEMPLATE "{postgres_template}"'))
    try:
        _load_sample(home, sa.engine.make_url(admin).set(database=name).render_as_string(False))
        yield name, home
    finally:
        _drop_database(engine, name)
        engine.dispose()


@contextmanager
def _postgres_database(admin: str, *, template: str | None = None) -> Iterator[str]:
    """A new database for one test (a copy of ``template``, else empty), dropped
    afterwards."""
    import sqlalchemy as sa

    from core.store.db import dispose_engine

    name = f"eg_test_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    create = f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")
    for attempt in range(5):
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(create))
            break
        except sa.exc.OperationalError:  # the template is in use for a moment (autovacuum)
            if attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))
    url = sa.engine.make_url(admin).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        dispose_engine(url)
        _drop_database(engine, name)
        engine.dispose()


def _drop_database(engine: Any, name: str) -> None:
    """Drop a test database. An autovacuum worker (a superuser's backend) may be in it for
    a moment, which FORCE may not terminate as our role: retry briefly, then leave it (a
    leftover test database is harmless, a failed teardown fails a passing test)."""
    import sqlalchemy as sa

    for attempt in range(5):
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except sa.exc.DBAPIError:
            time.sleep(0.2 * (attempt + 1))


def cited_urls(report_id: int) -> set[str]:
    """The URLs the report's current version cites."""
    from core.store.db import session_scope
    from core.store.models import Source
    from core.store.repository import citations_of, get_report, get_version

    with session_scope() as s:
        version = get_version(s, get_report(s, report_id))
        return {s.get(Source, snap.source_id).url for snap in citations_of(s, version.id).values()}


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


def run_cli(
    workspace: Path, *args: str, env: dict[str, str | None] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`evergreen ARGS` on the given workspace, in this process: ``core.cli.main`` itself,
    with its error handling, exit codes and output, as ``evergreen`` runs it, but without
    the 2-3 s a new Python process spends importing the core. (Typer's CliRunner does the
    same in-process run, but calls the Typer app and so would bypass ``main``'s one-line
    errors.) ``timeout`` is not enforced here; tests that need a real process (a kill, a
    worker, a race between processes) use :func:`run_cli_process`. A name set to None in
    ``env`` is unset for the command."""
    import contextlib
    import io
    import traceback

    from core.cli import main
    from core.cli.console import err, out

    full = {"EVERGREEN_HOME": str(workspace), "COLUMNS": "200", **(env or {})}
    # the consoles fixed their width when imported if COLUMNS was set then (xdist sets it)
    widths = [(console, (console._width, console._height)) for console in (out, err)]
    saved = {name: os.environ.get(name) for name in [*full, "EVERGREEN_FAULTS"]}
    stdout, stderr = io.StringIO(), io.StringIO()
    argv, stdin = sys.argv, sys.stdin
    code: Any = 0
    try:
        os.environ.pop("EVERGREEN_FAULTS", None)
        for name, value in full.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sys.argv, sys.stdin = ["evergreen", *args], io.StringIO("")  # no standard input
        for console, _ in widths:
            console.size = (200, 25)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
            except Exception:  # as Python ends a command on an uncaught error
                traceback.print_exc()
                code = 1
    finally:
        sys.argv, sys.stdin = argv, stdin
        for console, (width, height) in widths:
            console._width, console._height = width, height
        for name, before in saved.items():
            if before is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = before
    if code is None:
        code = 0
    elif not isinstance(code, int):  # SystemExit("message"): Python prints it, exits 1
        stderr.write(f"{code}\n")
        code = 1
    return subprocess.CompletedProcess(
        ["evergreen", *args], code, stdout.getvalue(), stderr.getvalue()
    )


def run_cli_process(
    workspace: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`evergreen ARGS` as a person runs it: a real process on the given workspace (for a
    kill, a worker, a race between processes, a fault injected with EVERGREEN_FAULTS)."""
    full = {**os.environ, "EVERGREEN_HOME": str(workspace), "COLUMNS": "200"}
    full.pop("EVERGREEN_FAULTS", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
    )


@pytest.fixture
def corpus_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace folder for corpora alone (they are SQLite files whatever the database),
    with no collection centre kept from another test."""
    import core.domain.relevance as relevance

    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("EVERGREEN_HOME", str(ws))
    monkeypatch.delenv("EVERGREEN_CORPORA", raising=False)
    monkeypatch.setattr(relevance, "_CENTRES", {})
    return ws


@pytest.fixture
def refresh_fails_once(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The engine's evidence refresh raises once (a network outage), then works; the
    returned list grows by one per refresh attempt."""
    import core.engine.stages

    real, calls = core.engine.stages.refresh, []

    def flaky(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("network down")
        return real(*args, **kwargs)

    monkeypatch.setattr("core.engine.stages.refresh", flaky)
    return calls


# -- markers: the fast subset for development is -m "not slow and not browser and not pg" --
#: modules whose tests start real processes or servers, or read a whole corpus: seconds each
SLOW_MODULES = frozenset(
    {
        "test_browser",
        "test_browser_review_tabs",
        "test_browser_screens",
        "test_crash",
        "test_packaging",
        "test_run_races",
        "test_web_e2e",
        "test_workers",
    }
)
#: modules that drive Chromium in every test
BROWSER_MODULES = frozenset(
    {"test_browser", "test_browser_review_tabs", "test_browser_screens", "test_web_e2e"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test ``pg`` (a PostgreSQL workspace), ``browser`` (Chromium) and ``slow``
    (see the sets above), so a subset can be chosen with ``-m``."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        spec = getattr(item, "callspec", None)
        params = spec.params if spec else {}
        names = set(item.fixturenames)
        if {"workspace", "sample_workspace"} <= names:  # two workspaces, one EVERGREEN_HOME
            raise pytest.UsageError(f"{item.nodeid}: use workspace or sample_workspace, not both")
        if "postgresql" in {params.get("workspace"), params.get("sample_workspace")} or (
            "queue_workspace" in names
        ):
            item.add_marker(pytest.mark.pg)
        needs_chromium = any(  # a test that skips without Chromium (outside CI)
            "chromium" in str(mark.kwargs.get("reason", "")).lower()
            for mark in item.iter_markers("skipif")
        )
        if (
            module in BROWSER_MODULES
            or names & {"chromium", "browser_page"}
            or (spec and "chromium" in spec.id.split("-"))
            or needs_chromium
        ):
            item.add_marker(pytest.mark.browser)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    # the longest tests first: with several workers (``-n 2 --dist worksteal``) the short
    # ones then fill in around them, instead of one worker finishing a browser test or a
    # benchmark alone at the end (in file order, test_workers and test_web_e2e came last)
    items.sort(key=_weight)


#: modules whose tests take many seconds each without being ``slow`` (a benchmark's own
#: process pool, a public corpus read whole, a page served at its limits)
HEAVY_MODULES = frozenset(
    {
        "test_address_policy",
        "test_bench",
        "test_faults",
        "test_header_robustness",
        "test_hostile",
        "test_relevance_centre",
        "test_relevance_feedback",
    }
)


def _weight(item: pytest.Item) -> int:
    """0 for a browser or slow test, 1 for one of HEAVY_MODULES, 2 for the rest."""
    if item.get_closest_marker("browser") or item.get_closest_marker("slow"):
        return 0
    module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
    return 1 if module in HEAVY_MODULES else 2


# -- the app under Streamlit's AppTest --------------------------------------------------
APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Bytes behind every st.download_button, by file name (AppTest keeps no media)."""
    files: dict[str, bytes] = {}

    class Keeping(MemoryMediaFileStorage):
        def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):  # noqa: ANN001
            if isinstance(path_or_data, bytes) and filename:
                files[filename] = path_or_data
            return super().load_and_get_id(path_or_data, mimetype, kind, filename)

    monkeypatch.setattr("streamlit.testing.v1.app_test.MemoryMediaFileStorage", Keeping)
    return files


@pytest.fixture
def app(sample_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app after its first start: the sample loaded (from an empty workspace, the
    first start loads it: test_app), runs done before a click returns."""
    monkeypatch.setenv("EVERGREEN_JOBS", "sync")
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert not at.exception, at.exception
    return at
