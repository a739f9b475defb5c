"""Runs outside the page: updates (and new reports) are worked on by a background
worker, so a refresh, a second tab or a closed tab never loses a run.

The run row is registered first (``begin_update``) and its id returned at once; a
daemon thread then calls ``execute_update``, which commits its progress text to the
run as it goes. Any page — in any tab — follows a run by polling the database, and
cancels it with ``request_cancel`` (the worker stops at its next checkpoint).

Modes: ``thread`` (default) or ``sync`` — the work is done before the call returns,
which Streamlit's AppTest (and scripts) need. Choose per call (``sync=True``) or for
the process with ``EVERGREEN_JOBS=sync``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import datetime
from typing import Any

from core.errors import EvergreenError

ENV_MODE = "EVERGREEN_JOBS"
MODES = ("thread", "sync")
FINAL = ("awaiting_review", "committed", "failed", "cancelled", "interrupted")

log = logging.getLogger(__name__)
_workers: dict[str, threading.Thread] = {}
_errors: dict[int, str] = {}  # why a background resume was refused, for the page to show
_lock = threading.Lock()


def mode() -> str:
    value = (os.environ.get(ENV_MODE) or "thread").strip().lower()
    if value not in MODES:
        raise EvergreenError(f"{ENV_MODE} must be one of {', '.join(MODES)} (got {value!r}).")
    return value


def _synchronous(sync: bool | None) -> bool:
    return mode() == "sync" if sync is None else sync


def _spawn(name: str, target: Any, *args: Any) -> None:
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    with _lock:
        for key in [k for k, t in _workers.items() if not t.is_alive()]:
            del _workers[key]
        _workers[name] = thread
    thread.start()


# -- updates -----------------------------------------------------------------------------
def start_update(
    report_ref: int | str,
    *,
    as_of: datetime | None = None,
    sync: bool | None = None,
    force_recheck: bool = False,
) -> int:
    """Register an update run and work on it (in the background unless ``sync``).

    Raises EvergreenError at once when the update cannot start (e.g. a run of the
    report is already in progress or awaiting review); returns the run id.
    """
    from core.update import begin_update

    run_id = begin_update(report_ref, as_of=as_of, force_recheck=force_recheck)
    if _synchronous(sync):
        work_on(run_id)
    else:
        _spawn(f"evergreen-run-{run_id}", work_on, run_id)
    return run_id


def work_on(run_id: int) -> str:
    """Do a registered run's work; never raises. Returns the run's final status.

    The engine records its own failures on the run; a failure before the engine's
    bookkeeping starts (e.g. a source that cannot be opened) is recorded here, so a
    run is never left "running" with no worker.
    """
    from core.runs import RunStopped
    from core.update import execute_update

    try:
        execute_update(run_id)
    except RunStopped:  # cancelled or taken over: already recorded on the run
        pass
    except EvergreenError as exc:
        _settle(run_id, str(exc))
    except Exception as exc:  # recorded on the run; the worker thread must not die noisily
        log.exception("run %s failed", run_id)
        _settle(run_id, f"{type(exc).__name__}: {exc}")
    return status_of(run_id) or "failed"


def _settle(run_id: int, error: str, lease: int | None = None) -> None:
    """A worker that failed outside the engine's bookkeeping: end the run (cancelled if a
    cancel was asked for), unless it moved on meanwhile (compare-and-set)."""
    from core.runs import end_failed

    end_failed(run_id, error, lease)


def status_of(run_id: int) -> str | None:
    from core.db import session_scope
    from core.models import UpdateRun

    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        return run.status if run else None


def runs_signature(report_id: int | None = None) -> tuple[tuple[int, str], ...]:
    """Every run (of one report, or of all) as (id, status as shown): a page that keeps
    the signature it was drawn with sees a run started, finished or cancelled elsewhere —
    another tab, a worker, cron or the CLI — by comparing."""
    from sqlmodel import col, select

    from core.db import session_scope
    from core.models import UpdateRun
    from core.runs import run_state

    with session_scope() as session:
        query = select(UpdateRun).order_by(col(UpdateRun.id))
        if report_id is not None:
            query = query.where(UpdateRun.report_id == report_id)
        return tuple((int(r.id), run_state(r)) for r in session.exec(query))


def last_error(run_id: int) -> str | None:
    """Why the last background resume of the run was refused (None: it was not)."""
    return _errors.get(run_id)


def is_working(run_id: int) -> bool:
    """Whether a worker thread of *this* process is on the run (cron runs are elsewhere)."""
    with _lock:
        thread = _workers.get(f"evergreen-run-{run_id}")
    return bool(thread and thread.is_alive())


def cancel(run_id: int) -> str:
    """Ask the run to stop (running → cancelling; its worker stops at the next checkpoint)
    or drop it (awaiting review, or interrupted: no worker → cancelled). Returns the new
    status."""
    from core.runs import request_cancel

    return request_cancel(run_id)


def abandon(run_id: int) -> str:
    """Mark a run that no worker is doing (the app stopped mid-run) as failed, so the
    report can be updated again. Refused while a worker — here or in another process
    with a recent heartbeat — is on it."""
    from core.db import session_scope
    from core.models import UpdateRun
    from core.runs import fail_run, worker_alive

    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        status, lease, alive = run.status, run.lease, worker_alive(run)
    if is_working(run_id) or alive:
        raise EvergreenError(f"Run {run_id} is still being worked on; cancel it instead.")
    if status not in ("running", "cancelling", "interrupted"):
        raise EvergreenError(f"Run {run_id} is {status}; only an unfinished run is abandoned.")
    if not fail_run(
        run_id,
        "Abandoned: no worker was running it (the app stopped mid-run).",
        status="cancelled" if status == "cancelling" else "failed",
        lease=lease,
        expect=(status,),
    ):
        raise EvergreenError(f"Run {run_id} changed meanwhile: it is {status_of(run_id)} now.")
    return status_of(run_id) or "failed"


def resume(run_id: int, *, sync: bool | None = None) -> None:
    """Continue a killed or failed update run (``core.update.resume_run``), reusing what
    it already fetched and proposed. Refused at once while a worker of this process is
    on it; the engine refuses a run another live process is doing."""
    from core.runs import RunStopped
    from core.update import begin_resume, execute_update

    if is_working(run_id):
        raise EvergreenError(f"Run {run_id} is still being worked on; watch it instead.")
    _errors.pop(run_id, None)
    lease = begin_resume(run_id)  # a refusal reaches the page here, before any thread starts
    if _synchronous(sync):
        try:
            execute_update(run_id, lease=lease)
        except RunStopped as exc:  # recorded on the run; the page shows why
            raise EvergreenError(str(exc)) from None
        return

    def work() -> None:
        try:
            execute_update(run_id, lease=lease)
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
        if status_of(run_id) not in ("failed", "cancelled"):
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
    from core.research import create_report
    from core.services import check_source
    from core.sources.registry import providers_for
    from core.validation import clean_question

    question = clean_question(question)
    check_source(source)
    providers_for(source).close()  # fails now (not in the worker) if the source is unusable
    if _synchronous(sync):
        return create_report(question, title=title, as_of=as_of, source=source)

    from core.db import get_engine

    get_engine()  # open (and migrate) the database here, not concurrently in a worker

    def work() -> None:
        try:
            create_report(question, title=title, as_of=as_of, source=source)
        except Exception:  # recorded on the report's run by the engine
            log.exception("creating a report failed")

    _spawn(f"evergreen-create-{time.monotonic_ns()}", work)
    return None
