"""Runs on workers (issue 13, item 3): with PostgreSQL, runs are procrastinate jobs that
real `evergreen worker` processes take; a killed worker's run is resumed by another from
its checkpoints; cancel works from any process; the schedule is a periodic task; SQLite
keeps its in-process threads behind the same job interface.

Worker processes run the sample workspace (offline corpus and writer); a run is held
mid-way with the ``pause`` fault point (core/faults.py) so it can be killed, cancelled or
watched for real. Tests wait for behaviour (a file, a status, a log line), bounded only
by a hang guard.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlmodel import select

from core.app.importer import import_report, read_markdown_file
from core.dates import parse_as_of, utcnow
from core.engine import jobs, queue
from core.engine.run_liveness import QUEUED, run_state
from core.engine.schedule import save_report_settings
from core.errors import EvergreenError
from core.store.db import session_scope
from core.store.models import Report, SectionProposal, Snapshot, UpdateRun
from core.workspace import load_sample
from tests.conftest import run_cli, run_cli_process
from tests.helpers.workers import Workers, eventually, queue_workspace, workers

__all__ = ["queue_workspace", "workers"]  # fixtures

AS_OF = "2026-04-15"
SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"


def run_row(run_id: int) -> UpdateRun:
    with session_scope() as session:
        return session.get(UpdateRun, run_id)


def status(run_id: int) -> str:
    return run_row(run_id).status


def update_runs(report_id: int) -> list[UpdateRun]:
    with session_scope() as session:
        query = select(UpdateRun).where(
            UpdateRun.report_id == report_id, UpdateRun.kind == "update"
        )
        return list(session.exec(query))


def sample() -> int:
    with session_scope() as session:
        return load_sample(session)["report_id"]


def second_report() -> int:
    """Another report on the sample corpus (the sample report imported once more)."""
    with session_scope() as session:
        report, _ = import_report(
            session,
            read_markdown_file(SAMPLE_REPORT),
            query="Which storage projects are in the pipeline?",
            as_of=parse_as_of("2026-01-15"),
            source="sample",
            refuse_duplicate=False,
        )
        return report.id


def live(n: int) -> bool:
    return queue.live_workers() >= n


def assert_resumed_cleanly(run_id: int) -> None:
    """The run's work was done once: no page fetched twice for the same date, no
    section drafted twice, and its job ends (none waits or runs for it any more)."""
    with session_scope() as session:
        snaps = session.exec(select(Snapshot).where(Snapshot.run_id == run_id)).all()
        keys = [(s.source_id, s.as_of) for s in snaps]
        assert len(keys) == len(set(keys))
        props = session.exec(select(SectionProposal).where(SectionProposal.run_id == run_id)).all()
        assert props and len({p.key for p in props}) == len(props)
    eventually(
        lambda: not [j for j in queue.jobs_of(run_id) if j["status"] in ("todo", "doing")],
        "the run's job is done",
    )


# -- the way in: enqueue from one process, the work on a worker -------------------------------
def test_an_update_queued_by_the_cli_finishes_on_a_worker(
    queue_workspace: Path, workers: Workers
) -> None:
    report = sample()
    worker = workers.start()
    assert jobs.mode() == "queue"  # PostgreSQL and a live worker: runs are jobs
    done = run_cli_process(queue_workspace, "update", str(report), "--as-of", AS_OF, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "awaiting_review" and result["actions"]["revise"] >= 1
    run = run_row(result["run_id"])
    assert run.worker == worker.name and run.lease == 1  # the worker did it, once
    assert_resumed_cleanly(run.id)


def test_the_app_survives_its_own_restart_mid_run(queue_workspace: Path, workers: Workers) -> None:
    """The app's Update now (core.engine.jobs.start_update) in a process that is then killed:
    the run goes on, on the worker, and ends awaiting review."""
    report = sample()
    worker = workers.start(faults="pause@fetch:2")
    app = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from core.engine import jobs; from core.dates import parse_as_of; "
            f"print(jobs.start_update({report}, as_of=parse_as_of('{AS_OF}')), flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = int(app.stdout.readline())
        eventually(worker.paused, "the worker is mid-run")
    finally:
        app.kill()  # the app goes, mid-run
        app.wait(timeout=60)
    with session_scope() as session:  # no screen calls it interrupted: its worker lives
        assert run_state(session.get(UpdateRun, run_id)) == "running"
    assert jobs.is_working(run_id)
    with pytest.raises(EvergreenError, match="still being worked on"):
        jobs.resume(run_id)
    workers.release()
    eventually(lambda: status(run_id) == "awaiting_review", "the run ended on the worker")
    run = run_row(run_id)
    assert run.worker == worker.name and run.lease == 1
    assert_resumed_cleanly(run_id)


# -- cancel, from anywhere ------------------------------------------------------------------
def test_cancel_from_another_process_stops_a_run_on_a_worker(
    queue_workspace: Path, workers: Workers
) -> None:
    report = sample()
    worker = workers.start(faults="pause@fetch:2")
    eventually(lambda: live(1), "the worker's heartbeat")
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF))
    eventually(worker.paused, "the worker is mid-run")
    cancelled = run_cli_process(queue_workspace, "cancel", str(run_id))
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"Run {run_id}: cancelling." in cancelled.stdout  # a worker has it: next step
    workers.release()
    eventually(lambda: status(run_id) == "cancelled", "the worker stopped at its next step")
    assert "cancelled" in run_row(run_id).error
    # the worker lives on and takes the next run (its pause point is behind it)
    again = jobs.start_update(report, as_of=parse_as_of(AS_OF))
    eventually(lambda: status(again) == "awaiting_review", "the next run ended")
    assert run_row(again).worker == worker.name


def test_a_run_waiting_for_a_worker_is_cancelled_at_once(
    queue_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = sample()
    monkeypatch.setenv("EVERGREEN_JOBS", "queue")  # no worker runs: the job waits
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF))
    run = run_row(run_id)
    assert run.worker == QUEUED and [j["status"] for j in queue.jobs_of(run_id)] == ["todo"]
    with session_scope() as session:  # queued is not interrupted
        assert run_state(session.get(UpdateRun, run_id)) == "running"
    assert jobs.is_working(run_id)
    with pytest.raises(EvergreenError, match="still being worked on"):
        jobs.abandon(run_id)
    with pytest.raises(EvergreenError, match=f"Run {run_id} .* in progress"):
        jobs.start_update(report, as_of=parse_as_of(AS_OF))  # one open run per report
    assert jobs.cancel(run_id) == "cancelled"
    assert [j["status"] for j in queue.jobs_of(run_id)] == ["cancelled"]
    assert not jobs.is_working(run_id)


# -- a killed worker ------------------------------------------------------------------------
def test_a_killed_worker_s_run_is_resumed_by_another_exactly_once(
    queue_workspace: Path, workers: Workers
) -> None:
    report = sample()
    first = workers.start(faults="pause@fetch:2")
    eventually(lambda: live(1), "the first worker's heartbeat")
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF))
    eventually(first.paused, "the first worker is mid-run")
    assert run_row(run_id).progress.startswith("checking source")  # a checkpoint is in
    assert first.kill() == -9
    assert status(run_id) == "running"  # left as it was, with a dead worker
    second = workers.start()
    eventually(lambda: status(run_id) == "awaiting_review", "another worker resumed the run")
    run = run_row(run_id)
    assert run.worker == second.name and run.lease == 2  # taken up twice: first, second
    assert "queued again to resume" in second.log()
    assert [r.id for r in update_runs(report)] == [run_id]  # no second run
    assert_resumed_cleanly(run_id)


def test_two_workers_never_both_do_one_run(queue_workspace: Path, workers: Workers) -> None:
    held, other = sample(), second_report()
    first = workers.start(faults="pause@fetch:2")
    eventually(lambda: live(1), "the first worker's heartbeat")
    run_id = jobs.start_update(held, as_of=parse_as_of(AS_OF))
    eventually(first.paused, "the first worker is mid-run")
    second = workers.start()
    assert queue.enqueue_runs([run_id]) == [run_id]  # the same run queued a second time
    assert [j["status"] for j in queue.jobs_of(run_id)] == ["doing", "todo"]
    busy = jobs.start_update(other, as_of=parse_as_of(AS_OF))
    eventually(lambda: status(busy) == "awaiting_review", "the second worker did other work")
    assert run_row(busy).worker == second.name
    # ...but not the held run: its second job waits behind the first one's lock
    assert [j["status"] for j in queue.jobs_of(run_id)] == ["doing", "todo"]
    assert run_row(run_id).worker == first.name and run_row(run_id).lease == 1
    workers.release()
    eventually(lambda: status(run_id) == "awaiting_review", "the first worker finished")
    eventually(lambda: not queue.jobs_of(run_id), "the second job ran and found nothing to do")
    run = run_row(run_id)
    assert run.worker == first.name and run.lease == 1  # nobody took it over
    assert [r.id for r in update_runs(held)] == [run_id]
    assert_resumed_cleanly(run_id)


def test_stalled_jobs_go_back_to_the_queue_until_too_many_workers_died(
    queue_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``requeue_stalled`` itself, on jobs whose worker is gone (none registered)."""
    report = sample()
    monkeypatch.setenv("EVERGREEN_JOBS", "queue")
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF))

    def orphan(attempts: int) -> None:  # the job was taken by a worker that then died
        with session_scope() as session:
            session.execute(
                text(
                    "UPDATE procrastinate.procrastinate_jobs SET status = 'doing', "
                    "attempts = :a, worker_id = NULL WHERE lock = :lock"
                ),
                {"a": attempts, "lock": queue.lock_of(run_id)},
            )
            session.execute(
                text("UPDATE updaterun SET worker = 'elsewhere:1' WHERE id = :id"), {"id": run_id}
            )

    async def requeue() -> list[int]:
        app = queue.make_app()
        async with app.open_async():
            return await queue.requeue_stalled(app, queue.stalled_seconds())

    orphan(0)
    assert asyncio.run(requeue()) == [run_id]
    assert [(j["status"], j["attempts"]) for j in queue.jobs_of(run_id)] == [("todo", 1)]
    assert run_row(run_id).worker == QUEUED and status(run_id) == "running"
    orphan(queue.MAX_ATTEMPTS - 1)
    assert asyncio.run(requeue()) == []
    assert [j["status"] for j in queue.jobs_of(run_id)] == ["failed"]
    assert status(run_id) == "failed" and "stopped 3 times" in run_row(run_id).error


# -- the schedule and update rounds ----------------------------------------------------------
def test_scheduled_reports_are_queued_once_by_the_periodic_task(
    queue_workspace: Path, workers: Workers
) -> None:
    report = sample()
    with session_scope() as session:
        save_report_settings(session, session.get(Report, report), every_days=1)
        for run in session.exec(select(UpdateRun).where(UpdateRun.report_id == report)):
            run.started_at = utcnow() - timedelta(days=2)  # the import was two days ago
            session.add(run)
    every_second = {"EVERGREEN_SCHEDULE_CRON": "* * * * * *"}
    pair = [workers.start(env=every_second), workers.start(env=every_second)]

    def ticks() -> int:
        return sum(w.log().count("Job evergreen.due[") for w in pair)

    [run] = eventually(lambda: update_runs(report), "the schedule queued an update")
    eventually(lambda: status(run.id) == "awaiting_review", "the scheduled update ended")
    seen = ticks()
    eventually(lambda: ticks() >= seen + 3, "more ticks of the schedule")
    assert [r.id for r in update_runs(report)] == [run.id]  # awaiting review: not due again
    assert run_row(run.id).worker in {w.name for w in pair}


def test_update_all_queues_every_report_for_the_workers(
    queue_workspace: Path, workers: Workers
) -> None:
    reports = {sample(), second_report()}
    worker = workers.start(concurrency=2)
    done = run_cli_process(queue_workspace, "update", "--all", "--as-of", AS_OF, "--wait", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["report_id"] for r in rows} == reports
    assert {r["status"] for r in rows} == {"awaiting_review"}
    assert {run_row(r["run_id"]).worker for r in rows} == {worker.name}
    again = run_cli_process(queue_workspace, "update", "--all", "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == []  # all await review


def test_create_and_resume_are_jobs_too(queue_workspace: Path, workers: Workers) -> None:
    sample()  # the sample corpus
    worker = workers.start(faults="raise@fetch:2")  # its first update fails mid-way
    made = run_cli_process(
        queue_workspace,
        "create",
        "Grid battery storage projects?",
        "--as-of",
        "2026-01-15",
        "--json",
    )
    assert made.returncode == 0, made.stderr
    result = json.loads(made.stdout)
    assert result["version"] == 1 and result["sections"] >= 1 and result["sources"] >= 1
    assert run_row(result["run_id"]).worker == worker.name
    failed = run_cli_process(queue_workspace, "update", str(result["report_id"]), "--as-of", AS_OF)
    assert failed.returncode == 1 and "injected fault at fetch #2" in failed.stderr
    [run] = update_runs(result["report_id"])
    assert run.status == "failed" and run.worker == worker.name
    resumed = run_cli_process(queue_workspace, "resume", str(run.id), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "awaiting_review"
    assert run_row(run.id).worker == worker.name and run_row(run.id).lease == 3
    assert_resumed_cleanly(run.id)


# -- the pieces ------------------------------------------------------------------------------
def test_a_job_for_a_run_that_has_ended_does_nothing(workspace: Path) -> None:
    report = sample()
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF), sync=True)
    before = run_row(run_id)
    assert before.status == "awaiting_review"
    assert jobs.work_on(run_id, resumed=True) == "awaiting_review"
    after = run_row(run_id)
    assert (after.lease, after.worker, after.progress) == (
        before.lease,
        before.worker,
        before.progress,
    )


def test_sqlite_keeps_in_process_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    monkeypatch.delenv("EVERGREEN_JOBS", raising=False)
    report = sample()
    assert jobs.mode() == "thread" and not queue.is_postgres()
    run_id = jobs.start_update(report, as_of=parse_as_of(AS_OF))
    assert f"evergreen-run-{run_id}" in jobs._workers  # a thread of this process did it
    assert jobs.wait(run_id, timeout=120) == "awaiting_review"
    refused = run_cli(tmp_path, "worker")
    assert refused.returncode == 1 and "Workers need a PostgreSQL database" in refused.stderr
    monkeypatch.setenv("EVERGREEN_JOBS", "queue")
    with pytest.raises(EvergreenError, match="need a PostgreSQL database"):
        jobs.mode()


def test_update_all_on_sqlite_runs_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    reports = {sample(), second_report()}
    done = run_cli(tmp_path, "update", "--all", "--as-of", AS_OF, "--workers", "2", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["report_id"] for r in rows} == reports
    assert {(r["status"], r["error"]) for r in rows} == {("awaiting_review", None)}
    both = run_cli(tmp_path, "update", "--all", "--due")
    assert both.returncode == 1 and "Choose --due" in both.stderr


def test_the_queue_schema_is_created_once_whoever_comes_first(queue_workspace: Path) -> None:
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            queue.ensure_schema()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    queue._ready.clear()  # another process, later: finds it there
    queue.ensure_schema()
    with session_scope() as session:
        tables = session.execute(
            text("SELECT count(*) FROM pg_tables WHERE schemaname = 'procrastinate'")
        ).scalar()
        ours = session.execute(
            text(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'procrastinate%' "
                "AND schemaname = 'public'"
            )
        ).scalar()
    assert tables >= 4 and ours == 0  # its own schema: the migrations never see it


def test_the_connection_string_comes_from_the_database_url() -> None:
    url = "postgresql+psycopg://ana:s3cr%40t@db.example:6543/evergreen?sslmode=require"
    info = dict(part.split("=", 1) for part in queue.conninfo(url).split(" ") if "=" in part)
    assert info["host"] == "db.example" and info["port"] == "6543"
    assert info["user"] == "ana" and info["password"] == "s3cr@t"
    assert info["dbname"] == "evergreen" and info["sslmode"] == "require"
    assert "search_path=procrastinate" in queue.conninfo(url)
    assert "s3cr" not in queue._where(url)
    assert queue.is_postgres(url) and not queue.is_postgres("sqlite:///x.db")
