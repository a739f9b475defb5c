"""The shared pool takes parallel runs (issue 45, item 2).

``get_or_create_source`` looked for a URL, then inserted it: two runs finding the same page
at once both inserted, and one failed on the unique URL (``UNIQUE constraint failed:
source.url`` on SQLite, ``duplicate key … source_url_key`` on PostgreSQL). It is now one
``INSERT … ON CONFLICT DO NOTHING`` and a select. Every test runs on both databases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlmodel import func, select

from core.app.importer import import_report, read_markdown_file
from core.dates import parse_as_of
from core.store.db import get_engine, session_scope
from core.store.models import Source
from core.store.pool import get_or_create_source
from core.workspace import load_sample
from tests.conftest import run_cli

SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"
THREADS = 6
URLS = [f"https://example.org/shared/{n}" for n in range(12)]


def _source_rows() -> dict[str, int]:
    with session_scope() as session:
        rows = session.exec(select(Source.url, func.count()).group_by(Source.url)).all()
    return dict(rows)


def test_threads_that_all_looked_before_any_inserted_get_one_source(workspace: Path) -> None:
    """Every thread has looked for the URL (and found nothing) before any inserts it —
    the interleaving that failed: each one's insert waits at a barrier for the others'."""
    engine = get_engine()
    barrier = threading.Barrier(THREADS, timeout=20)
    errors: list[BaseException] = []
    ids: dict[str, set[int]] = {url: set() for url in URLS}

    def before_insert(conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if statement.lstrip().upper().startswith("INSERT INTO SOURCE"):
            barrier.wait()

    def work() -> None:
        try:
            for url in URLS:
                with session_scope() as session:
                    source = get_or_create_source(session, url, title=f"page {url[-1]}")
                    ids[url].add(source.id)
        except BaseException as exc:  # reported below
            errors.append(exc)
            barrier.abort()  # the others stop waiting for this one

    event.listen(engine, "before_cursor_execute", before_insert)
    try:
        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        event.remove(engine, "before_cursor_execute", before_insert)
    assert not errors, f"{len(errors)} threads failed, first: {errors[0]!r}"
    assert all(len(found) == 1 for found in ids.values()), ids  # all got the same row
    assert _source_rows() == {url: 1 for url in URLS}


_WORKER = """
import sys, time
from core.store.db import session_scope
from core.store.pool import get_or_create_source
start, urls = float(sys.argv[1]), sys.argv[2:]
while time.time() < start:
    time.sleep(0.005)
for url in urls:
    with session_scope() as session:
        get_or_create_source(session, url)
print("ok")
"""


@pytest.mark.slow  # real processes / whole corpora
def test_processes_racing_on_the_same_urls_all_succeed(workspace: Path) -> None:
    """Several processes, started together, each make the same 100 sources."""
    import time

    get_engine()  # migrated before the race
    urls = [f"https://example.org/race/{n}" for n in range(100)]
    start = time.time() + 4  # after every interpreter has started
    env = {**os.environ, "EVERGREEN_HOME": str(workspace)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(start), *urls],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=180) for p in procs]
    failed = [err.strip().splitlines()[-1:] for (out, err) in results if out.strip() != "ok"]
    assert not failed, failed
    rows = _source_rows()
    assert all(rows[url] == 1 for url in urls)


@pytest.mark.slow  # six reports updated: seconds
def test_update_all_with_four_workers_over_reports_sharing_sources(workspace: Path) -> None:
    """Six reports citing the same pages, updated by four workers at once: the pages
    their discovery finds are new to the pool and found by several runs together."""
    with session_scope() as session:
        reports = {load_sample(session)["report_id"]}
    for n in range(5):
        with session_scope() as session:
            report, _ = import_report(
                session,
                read_markdown_file(SAMPLE_REPORT),
                query=f"Which storage projects are in the pipeline? ({n})",
                as_of=parse_as_of("2026-01-15"),
                source="sample",
                refuse_duplicate=False,
            )
            reports.add(report.id)
    done = run_cli(
        workspace, "update", "--all", "--as-of", "2026-04-15", "--workers", "4", "--json"
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["report_id"] for r in rows} == reports
    assert [(r["status"], r["error"]) for r in rows] == [("awaiting_review", None)] * len(reports)
    assert set(_source_rows().values()) == {1}


def test_two_runs_pooling_the_same_pages_in_opposite_orders_do_not_deadlock(
    workspace: Path,
) -> None:
    """Two runs, each in one transaction, pool page A then B and page B then A. Inside a
    run's transaction on PostgreSQL, each insert waited on the other run's uncommitted row:
    a deadlock, and one run failed (``update --all --workers 2`` did so now and then). The
    row is made in a transaction of its own there. SQLite has one writer at a time, so the
    second run simply waits: nothing to test there."""
    if get_engine().dialect.name != "postgresql":
        pytest.skip("one writer at a time on SQLite: no lock order to get wrong")
    first, second = "https://example.org/order/a", "https://example.org/order/b"
    barrier = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []

    def run(urls: list[str]) -> None:
        try:
            with session_scope() as session:
                get_or_create_source(session, urls[0])
                barrier.wait()  # both hold their first page before either asks for the other
                get_or_create_source(session, urls[1])
        except BaseException as exc:  # reported below
            errors.append(exc)
            barrier.abort()

    threads = [
        threading.Thread(target=run, args=([first, second],)),
        threading.Thread(target=run, args=([second, first],)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, f"{len(errors)} runs failed, first: {errors[0]!r}"
    assert {u: n for u, n in _source_rows().items() if "/order/" in u} == {first: 1, second: 1}
