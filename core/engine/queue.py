"""Runs as procrastinate jobs (PostgreSQL): the job queue and its tasks (the worker
process that takes them: ``core.engine.queue_worker``).

With a PostgreSQL database, a run the app or the CLI starts — create, update, resume —
is registered as usual (``UpdateRun``) and then *queued*: a procrastinate job names it,
and any ``evergreen worker`` process, on any machine, takes the job and does the run's
work with the same function the in-process threads use (``core.engine.jobs.work_on``).

- One job per run at a time: a job's ``lock`` and ``queueing_lock`` are the run's, so a
  run is never queued twice and two workers never do one run at once; before working, a
  worker takes the run over (``core.engine.runs.claim``: a compare-and-set bumping its lease),
  and a job for a run that has already ended just returns.
- A killed worker: workers heartbeat to the database; every live worker looks for jobs
  of workers silent for ``EVERGREEN_WORKER_STALLED`` seconds and puts them back in the
  queue; the next worker resumes the run from its checkpoints (the resume path:
  ``claim`` then ``execute_update`` with the new lease). A job whose workers died
  ``MAX_ATTEMPTS`` times fails its run instead of killing more workers.
- Cancel stays what it is everywhere: a status on the run, seen by its worker at the
  next checkpoint, from any process; a run still waiting in the queue is dropped at once.
- Scheduled reports: a periodic task (``EVERGREEN_SCHEDULE_CRON``, every 5 minutes)
  queues an update for each due report; procrastinate defers it once per tick however
  many workers run, and a report with an open run is never due, so a report is updated
  once.

procrastinate's tables live in their own PostgreSQL schema (``procrastinate``), created
once, under an advisory lock, when a worker starts or a run is first queued — so
Evergreen's migrations never see them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url

from core import config
from core.engine.run_liveness import QUEUED
from core.engine.runs import fail_run, mark_queued
from core.errors import EvergreenError
from core.settings import get_settings
from core.store.db import session_scope
from core.store.models import UpdateRun

log = logging.getLogger(__name__)

SCHEMA = "procrastinate"
QUEUE = "evergreen"
RUN_TASK = "evergreen.run"
DUE_TASK = "evergreen.due"
DUE_LOCK = "evergreen-due"
MAX_ATTEMPTS = 3  # a run whose workers died this many times fails instead

ENV_HEARTBEAT = "EVERGREEN_WORKER_HEARTBEAT"  # seconds between a worker's heartbeats
ENV_STALLED = "EVERGREEN_WORKER_STALLED"  # a worker silent this long is taken for dead
ENV_POLL = "EVERGREEN_WORKER_POLL"  # seconds between looks for jobs (LISTEN/NOTIFY aside)
ENV_SCHEDULE = "EVERGREEN_SCHEDULE_CRON"  # when workers look for due reports
# (their values, defaults and bounds: core.settings.Settings.worker_* and schedule_cron)
_ADVISORY_KEY = 0x6576_6572_6772_6E  # "evergrn": serialises the schema's creation

_ready: set[str] = set()  # databases whose queue schema exists (this process saw it)
_ready_lock = threading.Lock()


# -- where the queue lives -----------------------------------------------------------------
def is_postgres(url: str | None = None) -> bool:
    try:
        return make_url(config.database_url(url)).get_backend_name() == "postgresql"
    except Exception:  # an unparsable URL is no PostgreSQL database
        return False


def conninfo(url: str | None = None) -> str:
    """The libpq connection string for a SQLAlchemy PostgreSQL URL, with procrastinate's
    schema on the search path (what psycopg, and so procrastinate, connects with)."""
    from psycopg.conninfo import make_conninfo  # lazy: psycopg loads only on PostgreSQL

    parsed = make_url(config.database_url(url))
    params: dict[str, Any] = {
        "host": parsed.host,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password,
        "dbname": parsed.database,
    }
    for key, value in parsed.query.items():  # e.g. sslmode, or host for a socket dir
        params[key] = value[-1] if isinstance(value, tuple) else value
    params["options"] = f"-c search_path={SCHEMA}"
    return make_conninfo(**{k: str(v) for k, v in params.items() if v not in (None, "")})


def _where(url: str | None = None) -> str:
    """The database as a log line may show it: no password."""
    return make_url(config.database_url(url)).render_as_string(hide_password=True)


def require_postgres(url: str | None = None) -> str:
    url = config.database_url(url)
    if not is_postgres(url):
        raise EvergreenError(
            "Workers need a PostgreSQL database (EVERGREEN_DB=postgresql+psycopg://USER:"
            "PASSWORD@HOST/DB); with SQLite the app and the CLI do their runs themselves."
        )
    return url


@contextmanager
def _connect(url: str | None = None, *, autocommit: bool = True) -> Iterator[Any]:
    import psycopg  # lazy: psycopg loads only on PostgreSQL

    try:
        conn = psycopg.connect(conninfo(url), autocommit=autocommit)
    except psycopg.Error as exc:
        raise EvergreenError(f"Cannot reach the job queue in {_where(url)}: {exc}") from None
    with conn:
        yield conn


def ensure_schema(url: str | None = None) -> None:
    """Create procrastinate's schema in the database unless it is there (idempotent, and
    safe when several processes start at once: an advisory lock serialises them)."""
    from procrastinate.schema import SchemaManager  # lazy: procrastinate only on PostgreSQL

    url = require_postgres(url)
    with _ready_lock:
        if url in _ready:
            return
    with _connect(url, autocommit=False) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_KEY,))
        row = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.procrastinate_jobs",)).fetchone()
        if row[0] is None:
            log.info("creating the job queue's tables in %s", _where(url))
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"')
            conn.execute(f'SET LOCAL search_path TO "{SCHEMA}"')
            conn.execute(SchemaManager.get_schema())  # no parameters: run as a script
            # its functions and triggers name its tables unqualified: pin their search
            # path, so they work whoever calls them (an operator's psql, a migration)
            for (signature,) in conn.execute(
                "SELECT p.oid::regprocedure::text FROM pg_proc p "
                "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %s",
                (SCHEMA,),
            ).fetchall():
                conn.execute(f'ALTER FUNCTION {signature} SET search_path = "{SCHEMA}"')
        conn.commit()
    with _ready_lock:
        _ready.add(url)


def _schema_exists(url: str) -> bool:
    """Whether the queue's tables exist (looked up until they do, then remembered)."""
    with _ready_lock:
        if url in _ready:
            return True
    with session_scope(url) as session:
        found = session.execute(
            text("SELECT to_regclass(:t)"), {"t": f"{SCHEMA}.procrastinate_jobs"}
        ).scalar()
    if found is not None:
        with _ready_lock:
            _ready.add(url)
    return found is not None


# -- settings --------------------------------------------------------------------------------
def heartbeat_seconds() -> float:
    return get_settings().worker_heartbeat


def stalled_seconds() -> float:
    return get_settings().worker_stalled


def lock_of(run_id: int) -> str:
    return f"evergreen-run-{int(run_id)}"


# -- looking at the queue (the app's and the CLI's side) --------------------------------------
def live_workers(url: str | None = None) -> int:
    """How many workers have sent a heartbeat lately (0 on SQLite or with no queue)."""
    url = config.database_url(url)
    if not is_postgres(url) or not _schema_exists(url):
        return 0
    with session_scope(url) as session:
        return int(
            session.execute(
                text(
                    f"SELECT count(*) FROM {SCHEMA}.procrastinate_workers "
                    "WHERE last_heartbeat > now() - make_interval(secs => :s)"
                ),
                {"s": stalled_seconds()},
            ).scalar()
            or 0
        )


def held(run_id: int, url: str | None = None) -> bool:
    """Whether the queue holds the run: its job waits for a worker, or a live worker
    (recent heartbeat) is doing it. False on SQLite."""
    url = config.database_url(url)
    if not is_postgres(url) or not _schema_exists(url):
        return False
    with session_scope(url) as session:
        row = session.execute(
            text(
                f"SELECT 1 FROM {SCHEMA}.procrastinate_jobs j "
                f"LEFT JOIN {SCHEMA}.procrastinate_workers w ON w.id = j.worker_id "
                "WHERE j.lock = :lock AND (j.status = 'todo' OR (j.status = 'doing' "
                "AND w.last_heartbeat > now() - make_interval(secs => :s))) LIMIT 1"
            ),
            {"lock": lock_of(run_id), "s": stalled_seconds()},
        ).first()
    return row is not None


def jobs_of(run_id: int, url: str | None = None) -> list[dict[str, Any]]:
    """The queue's jobs for a run, oldest first (id, status, attempts, worker_id)."""
    url = config.database_url(url)
    if not is_postgres(url) or not _schema_exists(url):
        return []
    with session_scope(url) as session:
        rows = session.execute(
            text(
                f"SELECT id, status, attempts, worker_id FROM {SCHEMA}.procrastinate_jobs "
                "WHERE lock = :lock ORDER BY id"
            ),
            {"lock": lock_of(run_id)},
        ).mappings()
        return [{**r, "status": str(r["status"])} for r in rows]


# -- queueing ----------------------------------------------------------------------------------
def _deferrer() -> Any:
    """A job manager that only ever works on a connection it is given (no pool: the app
    and the CLI open one short connection per batch of jobs)."""
    from procrastinate import SyncPsycopgConnector  # lazy: procrastinate only on PostgreSQL
    from procrastinate.manager import JobManager

    return JobManager(SyncPsycopgConnector())


def _run_job(run_id: int, approve_all: bool) -> Any:
    from procrastinate.jobs import Job  # lazy: procrastinate only on PostgreSQL

    lock = lock_of(run_id)
    kwargs: dict[str, Any] = {"run_id": int(run_id)}
    if approve_all:
        kwargs["approve_all"] = True
    return Job(queue=QUEUE, lock=lock, queueing_lock=lock, task_name=RUN_TASK, task_kwargs=kwargs)


def enqueue_runs(
    run_ids: Iterable[int], *, approve_all: bool = False, url: str | None = None
) -> list[int]:
    """Queue a job for each registered run (one connection for all of them) and mark the
    runs queued. A run whose job is already waiting is left as it is: that job will do
    it. Returns the run ids, all now in the queue."""
    from procrastinate.exceptions import AlreadyEnqueued  # lazy: procrastinate only on PostgreSQL

    url = require_postgres(url)
    ensure_schema(url)
    manager, queued = _deferrer(), []
    with _connect(url) as conn:
        for run_id in run_ids:
            with suppress(AlreadyEnqueued):  # a job already waits: it does the run
                manager.defer_job(_run_job(run_id, approve_all), connection=conn)
            queued.append(int(run_id))
    for run_id in queued:
        mark_queued(run_id)  # unless a worker took it up already
    return queued


def drop_queued(run_id: int, url: str | None = None) -> bool:
    """Withdraw the run's job if it still waits for a worker (a cancel). False when no
    job waits: a worker has it (it stops at its next checkpoint) or there is none."""
    url = config.database_url(url)
    if not is_postgres(url) or not _schema_exists(url):
        return False
    manager, dropped = _deferrer(), False
    with _connect(url) as conn:
        waiting = conn.execute(
            "SELECT id FROM procrastinate_jobs WHERE queueing_lock = %s AND status = 'todo'",
            (lock_of(run_id),),
        ).fetchall()
        for (job_id,) in waiting:
            dropped = manager.cancel_job_by_id(job_id, connection=conn) or dropped
    return dropped


# -- the tasks (the worker's side) -----------------------------------------------------------
def _run_task(context: Any, run_id: int, approve_all: bool = False) -> str:
    """Do the run the job names — the same work, and the same function, as a thread of
    the app (``core.engine.jobs.work_on``). A job started before by a worker that stopped
    resumes the run from its checkpoints."""
    from core.engine.jobs import work_on  # lazy: a cycle (core.engine.jobs queues its runs here)

    return work_on(run_id, approve_all=approve_all, resumed=context.job.attempts > 0)


def _due_task(timestamp: int) -> int:
    """The schedule's tick: queue an update for every due report (the runs then wait
    for review like any other). Returns how many were queued."""
    from core.engine.schedule import (
        enqueue_due,  # lazy: a cycle (core.engine.schedule queues its runs here)
    )

    rows = enqueue_due()
    return sum(1 for r in rows if r["run_id"])


def make_app(url: str | None = None, *, concurrency: int = 1) -> Any:
    """A procrastinate App on the database, with Evergreen's tasks and the schedule."""
    from procrastinate import App, PsycopgConnector  # lazy: procrastinate only on PostgreSQL

    url = require_postgres(url)
    connector = PsycopgConnector(conninfo=conninfo(url), min_size=1, max_size=concurrency + 4)
    app = App(connector=connector)
    app.task(name=RUN_TASK, queue=QUEUE, pass_context=True)(_run_task)
    due = app.task(name=DUE_TASK, queue=QUEUE, queueing_lock=DUE_LOCK)(_due_task)
    cron = get_settings().schedule_cron
    try:
        app.periodic(cron=cron, periodic_id="schedule")(due)
        app.periodic_registry.periodic_tasks[(DUE_TASK, "schedule")].croniter  # noqa: B018
    except Exception as exc:
        raise EvergreenError(f"{ENV_SCHEDULE} is not a cron expression ({cron!r}): {exc}") from None
    return app


async def requeue_stalled(app: Any, stalled_after: float) -> list[int]:
    """Put the jobs of dead workers (no heartbeat for ``stalled_after`` s) back in the
    queue, marking their runs queued; a job whose workers died ``MAX_ATTEMPTS`` times
    fails its run instead. Several workers may do this at once: one retry wins, the
    others find the job moved on. Returns the run ids put back."""
    from procrastinate import exceptions  # lazy: procrastinate only on PostgreSQL
    from procrastinate.jobs import Status

    back: list[int] = []
    for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after):
        run_id = job.task_kwargs.get("run_id") if job.task_name == RUN_TASK else None
        # who held the run, read while the job is still theirs (once it is back in the
        # queue, a live worker may take the run up at any moment)
        dead = await _worker_of(run_id) if run_id is not None else None
        try:
            if run_id is not None and job.attempts + 1 >= MAX_ATTEMPTS:
                await app.job_manager.finish_job_by_id_async(job.id, Status.FAILED, False)
                error = (
                    f"The worker doing run {run_id} stopped {job.attempts + 1} times; "
                    f"resume it by hand (evergreen resume {run_id}) or cancel it."
                )
                await asyncio.to_thread(fail_run, run_id, error)
                log.warning("run %s: its workers died %s times; failed", run_id, MAX_ATTEMPTS)
                continue
            await app.job_manager.retry_job(job)
        except exceptions.UniqueViolation:
            # the run was queued again meanwhile (a resume): that job does it
            await app.job_manager.finish_job_by_id_async(job.id, Status.FAILED, False)
        except exceptions.ConnectorException:
            continue  # another worker got to it first
        if run_id is not None:
            log.info("run %s: its worker stopped; queued again to resume", run_id)
            if dead and dead != QUEUED:
                await asyncio.to_thread(mark_queued, run_id, was=dead)
            back.append(int(run_id))
    return back


async def _worker_of(run_id: int) -> str | None:
    def read() -> str | None:
        with session_scope() as session:
            run = session.get(UpdateRun, int(run_id))
            return run.worker if run else None

    return await asyncio.to_thread(read)
