"""Runs outside the page: updates, resumes and new reports are worked on by a worker,
so a refresh, a second tab, a closed tab — or, on PostgreSQL, a restart of the app —
never loses a run.

The run row is registered first (``begin_update``, ``begin_create``, ``begin_resume``) and
its id returned at once; a worker then does it — ``work_on``, the one function that
decides what a job does, whoever runs it — committing its progress to the run as it goes.
Any page, in any tab or process, follows a run by polling the database, and cancels it
with ``request_cancel`` (the worker stops at its next checkpoint).

Who the worker is (``EVERGREEN_JOBS``):

- ``queue`` — a procrastinate job (``core.engine.queue``) that an ``evergreen worker`` process,
  on any machine, takes; PostgreSQL only.
- ``thread`` — a daemon thread of this process (SQLite's way, the embedded default).
- ``sync`` — the caller, before the call returns (Streamlit's AppTest, scripts).
- ``auto`` (default) — ``queue`` when the database is PostgreSQL and a worker is running
  (it sent a heartbeat lately), else ``thread``: with no worker started, runs go on as
  they always did.

Choose per call (``sync=True``) or for the process with ``EVERGREEN_JOBS``.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime
from typing import Any

from sqlmodel import col, select

from core import config
from core.domain.validation import clean_question
from core.engine.queue import (
    drop_queued,
    enqueue_runs,
    held,
    is_postgres,
    live_workers,
    require_postgres,
)
from core.engine.run_liveness import QUEUED, run_state, worker_alive
from core.engine.run_stops import RunStopped
from core.engine.runs import claim, end_failed, fail_run, request_cancel
from core.errors import EvergreenError
from core.sources.registry import providers_for
from core.states import RunKind, RunStatus
from core.store.db import session_scope
from core.store.models import UpdateRun

ENV_MODE = "EVERGREEN_JOBS"
MODES = ("auto", "queue", "thread", "sync")
FINAL = (
    RunStatus.AWAITING_REVIEW,
    RunStatus.COMMITTED,
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.INTERRUPTED,
)

log = logging.getLogger(__name__)
_workers: dict[str, threading.Thread] = {}
_errors: dict[int, str] = {}  # why a background resume was refused, for the page to show
_lock = threading.Lock()


def mode() -> str:
    """How this process's runs are done now: ``queue``, ``thread`` or ``sync``."""
    value = (config.value(ENV_MODE) or "auto").strip().lower()  # the app's secrets count
    if value not in MODES:
        raise EvergreenError(f"{ENV_MODE} must be one of {', '.join(MODES)} (got {value!r}).")
    if value == "queue":
        require_postgres()  # a queue needs PostgreSQL: say so, rather than wait forever
    if value == "auto":
        return "queue" if is_postgres() and live_workers() > 0 else "thread"
    return value


def _how(sync: bool | None) -> str:
    """``sync`` for a synchronous call, else where background work goes."""
    if sync:
        return "sync"
    how = mode()
    if sync is False and how == "sync":
        return "thread"
    return how


def _spawn(name: str, target: Any, *args: Any) -> None:
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    with _lock:
        for key in [k for k, t in _workers.items() if not t.is_alive()]:
            del _workers[key]
        _workers[name] = thread
    thread.start()


def join_all(timeout: float = 60.0) -> list[str]:
    """Wait for this process's background run threads to end (at most ``timeout``
    seconds in all); returns the names of those still running."""
    deadline = time.monotonic() + timeout
    with _lock:
        threads = list(_workers.values())
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t.name for t in threads if t.is_alive()]


def _hand_over(run_id: int, how: str, *, approve_all: bool = False) -> None:
    """Give a registered run to its worker: a job in the queue, or a thread here."""
    if how == "queue":
        try:
            enqueue_runs([run_id], approve_all=approve_all)
        except BaseException as exc:  # the run was registered: it must not hang open
            _settle(run_id, f"It could not be queued: {exc}")
            raise
    else:
        _spawn(f"evergreen-run-{run_id}", work_on, run_id, approve_all)


# -- what a job does ---------------------------------------------------------------------------
def run_job(
    run_id: int, *, approve_all: bool = False, lease: int | None = None, resumed: bool = False
) -> dict[str, Any] | None:
    """Do a registered run's work, whatever its kind — the one code path of a thread, a
    synchronous call and a queue worker alike. The worker first takes the run
    (``core.engine.runs.claim``) unless it holds it already (``lease``, from ``begin_resume``);
    a run that ended, or was cancelled before it started, needs nothing (None). An
    update is done by ``execute_update`` — on a run that was started before, that is the
    resume path, reusing its checkpoints; a create by ``execute_create``. Returns the
    work's result; raises what the work raises."""
    if lease is None:
        lease = claim(run_id, resumed=resumed)
        if lease is None:
            return None
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        kind = run.kind if run else None
    if kind == RunKind.UPDATE:
        from core.engine.update import (
            execute_update,  # lazy: the engine is heavy; cancel needs none
        )

        return execute_update(run_id, approve_all=approve_all, lease=lease)
    if kind in (RunKind.CREATE, RunKind.REBUILD):
        from core.engine.creation import (
            execute_create,  # lazy: the engine is heavy; cancel needs none
        )

        return execute_create(run_id, lease=lease)
    raise EvergreenError(f"Run {run_id} is a {kind} run; no worker does those.")


def work_on(run_id: int, approve_all: bool = False, *, resumed: bool = False) -> str:
    """``run_job`` for a worker (a thread here, or a queue worker): never raises; returns
    the run's final status.

    The engine records its own failures on the run; a failure before the engine's
    bookkeeping starts (e.g. a source that cannot be opened) is recorded here, so a
    run is never left "running" with no worker.
    """
    try:
        run_job(run_id, approve_all=approve_all, resumed=resumed)
    except RunStopped:  # cancelled or taken over: already recorded on the run
        pass
    except EvergreenError as exc:
        _settle(run_id, str(exc))
    except Exception as exc:  # recorded on the run; the worker thread must not die noisily
        log.exception("run %s failed", run_id)
        _settle(run_id, f"{type(exc).__name__}: {exc}")
    return status_of(run_id) or RunStatus.FAILED


def _settle(run_id: int, error: str, lease: int | None = None) -> None:
    """A worker that failed outside the engine's bookkeeping: end the run (cancelled if a
    cancel was asked for), unless it moved on meanwhile (compare-and-set)."""
    end_failed(run_id, error, lease)


# -- updates -----------------------------------------------------------------------------
def start_update(
    report_ref: int | str,
    *,
    as_of: datetime | None = None,
    sync: bool | None = None,
    force_recheck: bool = False,
    approve_all: bool = False,
) -> int:
    """Register an update run and have it done (in the background unless ``sync``).

    Raises EvergreenError at once when the update cannot start (e.g. a run of the
    report is already in progress or awaiting review); returns the run id.
    """
    from core.engine.update import begin_update  # lazy: the engine is heavy; cancel needs none

    how = _how(sync)
    run_id = begin_update(report_ref, as_of=as_of, force_recheck=force_recheck)
    if how == "sync":
        work_on(run_id, approve_all)
    else:
        _hand_over(run_id, how, approve_all=approve_all)
    return run_id


def status_of(run_id: int) -> str | None:
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        return run.status if run else None


def runs_signature(report_id: int | None = None) -> tuple[tuple[int, str], ...]:
    """Every run (of one report, or of all) as (id, status as shown): a page that keeps
    the signature it was drawn with sees a run started, finished or cancelled elsewhere —
    another tab, a worker, cron or the CLI — by comparing."""
    with session_scope() as session:
        query = select(UpdateRun).order_by(col(UpdateRun.id))
        if report_id is not None:
            query = query.where(UpdateRun.report_id == report_id)
        return tuple((int(r.id), run_state(r)) for r in session.exec(query))


def last_error(run_id: int) -> str | None:
    """Why the last background resume of the run was refused (None: it was not)."""
    return _errors.get(run_id)


def is_working(run_id: int) -> bool:
    """Whether a worker is known to be on the run: a thread of *this* process, or (on
    PostgreSQL) the job queue — the run's job waits for a worker or a live worker has it.
    (A run done in-process by a CLI or cron elsewhere is not known here.)"""
    with _lock:
        thread = _workers.get(f"evergreen-run-{run_id}")
    if thread and thread.is_alive():
        return True
    return held(run_id)


def cancel(run_id: int) -> str:
    """Ask the run to stop (running → cancelling; its worker stops at the next checkpoint)
    or drop it (awaiting review, interrupted, or still waiting in the job queue: no
    worker → cancelled). Returns the new status."""
    status = request_cancel(run_id)
    if status == RunStatus.CANCELLING and drop_queued(run_id):
        with session_scope() as session:
            run = session.get(UpdateRun, int(run_id))
            waiting = run is not None and run.worker == QUEUED  # no worker took it up
        if waiting:  # (a worker taking it up now finds it cancelling and ends it itself)
            fail_run(
                run_id,
                "Cancelled before a worker took it up.",
                RunStatus.CANCELLED,
                expect=(RunStatus.CANCELLING,),
            )
        return status_of(run_id) or status
    return status


def abandon(run_id: int) -> str:
    """Mark a run that no worker is doing (the app stopped mid-run) as failed, so the
    report can be updated again. Refused while a worker — here or in another process
    with a recent heartbeat, or the job queue — is on it."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        status, lease, alive = run.status, run.lease, worker_alive(run)
    if is_working(run_id) or alive:
        raise EvergreenError(f"Run {run_id} is still being worked on; cancel it instead.")
    if status not in (RunStatus.RUNNING, RunStatus.CANCELLING, RunStatus.INTERRUPTED):
        raise EvergreenError(f"Run {run_id} is {status}; only an unfinished run is abandoned.")
    if not fail_run(
        run_id,
        "Abandoned: no worker was running it (the app stopped mid-run).",
        status=RunStatus.CANCELLED if status == RunStatus.CANCELLING else RunStatus.FAILED,
        lease=lease,
        expect=(status,),
    ):
        raise EvergreenError(f"Run {run_id} changed meanwhile: it is {status_of(run_id)} now.")
    return status_of(run_id) or RunStatus.FAILED


def resume(run_id: int, *, sync: bool | None = None, approve_all: bool = False) -> None:
    """Continue a killed or failed update run (the resume path: ``begin_resume``, then
    ``execute_update`` with its lease), reusing what it already fetched and proposed.
    Refused at once while a worker — here, or the queue's — is on it; the engine refuses
    a run another live process is doing."""
    from core.engine.update import begin_resume  # lazy: the engine is heavy; cancel needs none

    if is_working(run_id):
        raise EvergreenError(f"Run {run_id} is still being worked on; watch it instead.")
    _errors.pop(run_id, None)
    how = _how(sync)
    lease = begin_resume(run_id)  # a refusal reaches the page here, before any worker
    if how == "sync":
        try:
            run_job(run_id, approve_all=approve_all, lease=lease)
        except RunStopped as exc:  # recorded on the run; the page shows why
            raise EvergreenError(str(exc)) from None
        return
    if how == "queue":  # a worker takes the run over from this process
        _hand_over(run_id, how, approve_all=approve_all)
        return

    def work() -> None:
        try:
            run_job(run_id, approve_all=approve_all, lease=lease)
        except RunStopped as exc:  # cancelled or taken over: recorded on the run
            _errors[run_id] = str(exc)
        except EvergreenError as exc:
            _errors[run_id] = str(exc)  # e.g. refused: the page shows it (last_error)
            _settle(run_id, str(exc), lease)
        except Exception as exc:
            log.exception("resuming run %s failed", run_id)
            _settle(run_id, f"{type(exc).__name__}: {exc}", lease)

    _spawn(f"evergreen-run-{run_id}", work)
    # Return once the worker has taken the run over (or been refused), so the page that
    # reruns next shows it running rather than still failed.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and is_working(run_id) and run_id not in _errors:
        if status_of(run_id) not in (RunStatus.FAILED, RunStatus.CANCELLED):
            break
        time.sleep(0.02)


def wait(run_id: int, *, timeout: float = 60.0, until: tuple[str, ...] = FINAL) -> str | None:
    """Poll the database until the run reaches one of ``until`` (or time runs out)."""
    deadline = time.monotonic() + timeout
    status = status_of(run_id)
    while status not in until and time.monotonic() < deadline:
        time.sleep(0.05)
        status = status_of(run_id)
    return status


# -- new reports -------------------------------------------------------------------------
def start_create(
    question: str,
    *,
    title: str | None = None,
    as_of: datetime | None = None,
    source: str = "sample",
    sync: bool | None = None,
) -> dict[str, Any] | None:
    """Research a new report from scratch. ``sync``: returns create_report's result;
    otherwise returns None and the report appears (with its run's progress) in the list.

    Input is validated here first, so a bad question or source is reported at once.
    """
    from core.engine.creation import create_report  # lazy: the engine is heavy; cancel needs none

    how = _how(sync)
    if how == "sync":
        question = _checked(question, source)
        return create_report(question, title=title, as_of=as_of, source=source)
    submit_create(question, title=title, as_of=as_of, source=source, sync=False)
    return None


def submit_create(
    question: str,
    *,
    title: str | None = None,
    as_of: datetime | None = None,
    source: str = "sample",
    settings: dict[str, Any] | None = None,
    baseline_of: int | None = None,
    sync: bool | None = False,
) -> int:
    """Register a new report (or a rebuild's baseline: ``baseline_of``) and have its
    research done by a worker; returns the create run's id at once. Bad input is
    refused here, before anything is registered."""
    from core.engine.creation import begin_create  # lazy: the engine is heavy; cancel needs none

    question = _checked(question, source)
    how = _how(sync)
    run_id = begin_create(
        question,
        title=title,
        as_of=as_of,
        source=source,
        settings=settings,
        baseline_of=baseline_of,
    )
    if how == "sync":
        work_on(run_id)
    else:
        _hand_over(run_id, how)
    return run_id


def _checked(question: str, source: str) -> str:
    from core.sources.registry import check_source  # lazy: ~160 modules; cancel needs none

    question = clean_question(question)
    check_source(source)
    providers_for(source).close()  # fails now (not in the worker) if the source is unusable
    return question
