"""Run lifecycle: a run row is committed before work starts, so a failure can
always be recorded on it while the work itself rolls back whole."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col, select

from core import faults
from core.costs import CostMeter
from core.dates import as_utc, utcnow
from core.db import session_scope
from core.errors import EvergreenError, RunBusyError
from core.models import OPEN_RUN_STATUSES, UpdateRun
from core.redact import redact_credentials
from core.states import RunKind, RunStatus

T = TypeVar("T")


def open_run_for(session: Session, report_id: int) -> UpdateRun | None:
    return session.exec(
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report_id,
            col(UpdateRun.status).in_(OPEN_RUN_STATUSES),
        )
        .order_by(col(UpdateRun.id).desc())
    ).first()


STALE_AFTER_SECONDS = 120  # a running run with no checkpoint for this long has no live worker
RESUMABLE = (
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.INTERRUPTED,
    RunStatus.RUNNING,
    RunStatus.CANCELLING,
)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


QUEUED = "queue"  # the worker of a run waiting in the job queue (PostgreSQL, core.queue)


def worker_alive(run: UpdateRun) -> bool:
    """Is some *other* process still doing this run's work? On this host the worker's
    process id says; a worker on another host is alive while its heartbeat is recent, or
    while the queue says a live worker holds the run's job. A run waiting in the queue is
    alive while its job is there. (Whether a thread of this process is on it:
    ``core.jobs.is_working``.)"""
    if run.worker == QUEUED:
        from core.queue import held

        return held(int(run.id))
    host, _, pid = (run.worker or "").rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return int(pid) != os.getpid()
    beat = run.heartbeat_at
    if beat is not None and (utcnow() - as_utc(beat)).total_seconds() < STALE_AFTER_SECONDS:
        return True
    if run.worker and run.status in (RunStatus.RUNNING, RunStatus.CANCELLING):
        from core.queue import held

        return held(int(run.id))  # a long step on a worker elsewhere: its job says
    return False


def run_state(run: UpdateRun) -> RunStatus:
    """The status to show: a running (or cancelling) run whose worker is gone — killed,
    crashed, or stopped with Ctrl-C — is *interrupted*, whatever its row still says. (A
    run of this very process is not: this process registered it or works on it.)"""
    if run.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and not (
        worker_alive(run) or _ours(run)
    ):
        return RunStatus.INTERRUPTED
    return run.status


def _ours(run: UpdateRun) -> bool:
    return run.worker == worker_id()


def busy_error(run: UpdateRun) -> RunBusyError:
    """The report is held by ``run``: what holds it, in words both doors can show."""
    state = run_state(run)
    what = {
        RunStatus.INTERRUPTED: "was interrupted",
        RunStatus.AWAITING_REVIEW: "is awaiting review",
    }.get(state, "is in progress")
    return RunBusyError(
        f"Run {run.id} of report {run.report_id} {what}.",
        run_id=int(run.id),
        report_id=int(run.report_id),
        state=state,
        kind=run.kind,
    )


def start_run(
    report_id: int,
    kind: str,
    as_of: datetime,
    base_version_id: int | None,
    *,
    summary: dict[str, Any] | None = None,
) -> int:
    """Register a run (``summary``: what it starts with, e.g. its options). Two callers
    racing for the same report get one run: the database's one-open-run-per-report index
    refuses the second, who is told which run to watch."""
    try:
        with session_scope() as session:
            busy = open_run_for(session, report_id)
            if busy is not None:
                raise busy_error(busy)
            run = UpdateRun(
                report_id=report_id,
                kind=kind,
                as_of=as_of,
                base_version_id=base_version_id,
                worker=worker_id(),
                heartbeat_at=utcnow(),
                summary=dict(summary or {}),
            )
            session.add(run)
            session.flush()
            return run.id
    except IntegrityError:
        with session_scope() as session:
            busy = open_run_for(session, report_id)
        if busy is not None:
            raise busy_error(busy) from None
        raise EvergreenError(f"Another run of report {report_id} just started.") from None


# -- state changes: each one compare-and-set ----------------------------------------------
def set_status(
    session: Session,
    run_id: int,
    to: RunStatus,
    *,
    expect: Sequence[RunStatus],
    lease: int | None = None,
    values: dict[str, Any] | None = None,
) -> bool:
    """Move the run to ``to`` only if it is in one of the ``expect`` states (and, given a
    lease, still held under it): one UPDATE whose WHERE names the state it expects. False
    when the row had moved on — another process got there first."""
    stmt = update(UpdateRun).where(
        col(UpdateRun.id) == int(run_id), col(UpdateRun.status).in_(tuple(expect))
    )
    if lease is not None:
        stmt = stmt.where(col(UpdateRun.lease) == lease)
    result = session.execute(stmt.values(status=to, **(values or {})))
    return result.rowcount == 1  # type: ignore[attr-defined]


def fail_run(
    run_id: int,
    error: str,
    status: RunStatus = RunStatus.FAILED,
    *,
    lease: int | None = None,
    expect: Sequence[RunStatus] = OPEN_RUN_STATUSES,
) -> bool:
    """End an open run with an error (compare-and-set: False if it had already ended)."""
    with session_scope() as session:
        return set_status(
            session,
            run_id,
            status,
            expect=expect,
            lease=lease,
            values={"error": redact_credentials(error)[:2000], "finished_at": utcnow()},
        )


def end_failed(run_id: int, error: str, lease: int | None = None) -> None:
    """A worker's run failed: cancelled if the analyst had asked to cancel it, else failed."""
    if not fail_run(
        run_id, error, RunStatus.CANCELLED, lease=lease, expect=(RunStatus.CANCELLING,)
    ):
        fail_run(run_id, error, RunStatus.FAILED, lease=lease, expect=(RunStatus.RUNNING,))


class RunStopped(BaseException):
    """The run's work must stop now: cancelled, interrupted, or taken over by another
    process. Like asyncio's CancelledError (and KeyboardInterrupt) it is no Exception, so
    no broad ``except Exception`` / ``except EvergreenError`` on the way swallows it; the
    doors (CLI, jobs) turn it into a message."""


class RunCancelled(RunStopped):
    """The analyst cancelled the run."""


class RunInterrupted(RunStopped):
    """The process was interrupted (Ctrl-C); the run is marked interrupted."""


class RunLost(RunStopped):
    """Another process took the run over, or it changed under this one; nothing of the
    current step was written."""


def _state_now(run_id: int) -> tuple[str | None, int | None]:
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        return (run.status, run.lease) if run else (None, None)


def request_cancel(run_id: int) -> RunStatus:
    """Cancel a run. A running run is asked to stop at its next step (cancelling); one
    awaiting review, or whose worker is gone (interrupted), is cancelled at once. Every
    move is a compare-and-set, so a cancel racing a commit (or a worker finishing) either
    wins or is told what happened instead."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        seen, lease, state = run.status, run.lease, run_state(run)
        now = utcnow()
        if state == RunStatus.INTERRUPTED:
            done = set_status(
                session,
                run.id,
                RunStatus.CANCELLED,
                expect=(seen,),
                lease=lease,
                values={
                    "finished_at": now,
                    "error": "Cancelled after it was interrupted "
                    f"(during: {run.progress or 'start'}).",
                },
            )
            outcome = RunStatus.CANCELLED
        elif seen == RunStatus.RUNNING:
            done = set_status(
                session, run.id, RunStatus.CANCELLING, expect=(RunStatus.RUNNING,), lease=lease
            )
            outcome = RunStatus.CANCELLING
        elif seen == RunStatus.AWAITING_REVIEW:
            done = set_status(
                session,
                run.id,
                RunStatus.CANCELLED,
                expect=(RunStatus.AWAITING_REVIEW,),
                values={"finished_at": now},
            )
            outcome = RunStatus.CANCELLED
        elif seen == RunStatus.CANCELLING:
            raise EvergreenError(
                f"Run {run_id} is already being cancelled; it stops at its next step."
            )
        else:
            raise EvergreenError(f"Run {run_id} is {seen}; there is nothing to cancel.")
    if done:
        return outcome
    status, _ = _state_now(run_id)
    raise EvergreenError(
        f"Run {run_id} changed while it was being cancelled: it is {status} now"
        + ("; nothing was cancelled." if status != RunStatus.CANCELLED else ".")
    )


def take_over(session: Session, run: UpdateRun) -> int:
    """Make this process the run's worker (resume): one compare-and-set on the status and
    lease the run was read with, so of two processes taking it over at once exactly one
    wins. Returns the new lease; the loser gets an EvergreenError."""
    lease = run.lease + 1
    values = {
        "lease": lease,
        "worker": worker_id(),
        "heartbeat_at": utcnow(),
        "error": None,
        "finished_at": None,
        "progress": "resuming",
    }
    try:
        won = set_status(
            session, run.id, RunStatus.RUNNING, expect=(run.status,), lease=run.lease, values=values
        )
    except IntegrityError:  # another run of the report opened meanwhile
        session.rollback()
        busy = open_run_for(session, run.report_id)
        if busy is not None:
            raise busy_error(busy) from None
        raise EvergreenError(f"Another run of report {run.report_id} is open.") from None
    if not won:
        raise EvergreenError(
            f"Run {run.id} was just taken over by another process; watch it instead."
        )
    return lease


def claim(run_id: int, *, resumed: bool = False) -> int | None:
    """The worker about to do a run's job takes the run: one compare-and-set that bumps
    its lease, so whichever process registered the run, and whoever held it before (a
    worker that was killed), this worker alone can write to it from now on. Returns the
    lease, or None when there is nothing to do: the run is gone, ended (a job for a final
    run just returns), not open for work, or was cancelled before any worker took it up
    (it ends cancelled here). ``resumed``: the job was started before, by a worker that
    stopped (its run continues from its checkpoints)."""
    for _ in range(10):  # a cancel or heartbeat moving the row meanwhile: read it again
        with session_scope() as session:
            run = session.get(UpdateRun, int(run_id))
            if run is None or run.status not in (RunStatus.RUNNING, RunStatus.CANCELLING):
                return None
            if run.status == RunStatus.CANCELLING:
                values = {"finished_at": utcnow(), "error": "Cancelled before a worker took it up."}
                set_status(
                    session,
                    run.id,
                    RunStatus.CANCELLED,
                    expect=(RunStatus.CANCELLING,),
                    lease=run.lease,
                    values=values,
                )
                return None
            held, lease = run.lease, run.lease + 1  # (the UPDATE refreshes ``run``)
            values = {"lease": lease, "worker": worker_id(), "heartbeat_at": utcnow()}
            if resumed:
                values["progress"] = "resuming (the worker doing it stopped)"
            if set_status(
                session,
                run.id,
                RunStatus.RUNNING,
                expect=(RunStatus.RUNNING,),
                lease=held,
                values=values,
            ):
                return lease
    return None


def mark_queued(run_id: int, *, was: str | None = None) -> bool:
    """The run waits in the job queue (no worker has it yet): its worker reads ``queue``,
    so every screen shows it running, not interrupted, while its job is there. Only if
    the run is still open for work and held by ``was`` (default: this process) — a
    worker that took it up meanwhile keeps it."""
    with session_scope() as session:
        stmt = (
            update(UpdateRun)
            .where(
                col(UpdateRun.id) == int(run_id),
                col(UpdateRun.status).in_((RunStatus.RUNNING, RunStatus.CANCELLING)),
                col(UpdateRun.worker) == (was or worker_id()),
            )
            .values(worker=QUEUED, heartbeat_at=utcnow())
        )
        return session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]


def interrupt_run(run_id: int, lease: int) -> None:
    """Ctrl-C: the worker stops; a running run is marked interrupted (resume or cancel it),
    one the analyst was cancelling ends cancelled."""
    if fail_run(
        run_id,
        "Cancelled (interrupted).",
        RunStatus.CANCELLED,
        lease=lease,
        expect=(RunStatus.CANCELLING,),
    ):
        return
    with session_scope() as session:
        set_status(
            session,
            run_id,
            RunStatus.INTERRUPTED,
            expect=(RunStatus.RUNNING,),
            lease=lease,
            values={"worker": None, "heartbeat_at": None},
        )


def _stopped(run_id: int, lease: int | None, during: str) -> RunStopped:
    """Why a compare-and-set of this worker found the run moved on."""
    status, now_lease = _state_now(run_id)
    if status == RunStatus.CANCELLING and now_lease == lease:
        return RunCancelled(f"Run {run_id} was cancelled during: {during}.")
    return RunLost(
        f"Run {run_id} was taken over or ended by another process (it is {status} now); "
        "this process stopped working on it."
    )


def _raise_stopped(run_id: int, lease: int, during: str) -> NoReturn:
    raise _stopped(run_id, lease, during)


def checkpoint(session: Session, run: UpdateRun, text: str, meter: CostMeter | None = None) -> None:
    """Record progress and commit the work so far — evidence, proposals and costs are kept
    even if a later step fails or the process dies; stop here if the analyst cancelled or
    another process took the run over (the heartbeat is a compare-and-set on both)."""
    if meter is not None:
        for event in meter.events(run.id):
            session.add(event)
    held = set_status(
        session,
        run.id,
        RunStatus.RUNNING,
        expect=(RunStatus.RUNNING,),
        lease=run.lease,
        values={"progress": text[:500], "heartbeat_at": utcnow(), "worker": worker_id()},
    )
    if not held:
        session.rollback()
        _raise_stopped(run.id, run.lease, text)
    session.commit()


@contextmanager
def run_work(
    run_id: int, lease: int | None = None
) -> Iterator[tuple[Session, UpdateRun, CostMeter]]:
    """The work of one run. Checkpoints commit as it goes; the final step (proposals,
    or a version) commits at the end, and only if the run is still this worker's and in
    the state the work expects (a cancel or take-over meanwhile rolls it back). On any
    error the run is marked failed, nothing after its last checkpoint remains, and
    committed versions are untouched. Ctrl-C marks it interrupted."""
    meter = CostMeter()
    start = time.perf_counter()
    held = lease
    try:
        with session_scope() as session:
            run = session.get(UpdateRun, run_id)
            if run is None:
                raise EvergreenError(f"No run {run_id}.")
            if lease is not None and run.lease != lease:
                raise RunLost(f"Run {run_id} was taken over by another process.")
            held = run.lease
            yield session, run, meter
            for event in meter.events(run_id):
                session.add(event)
            run.timings = {
                **run.timings,
                "seconds": round(meter.total("seconds"), 3),
                "wall": round(time.perf_counter() - start, 3),
            }
            run.summary = {**run.summary, "writer_calls": int(meter.total("writer_calls"))}
            _store_baseline(session, run)
            session.add(run)
            if not _still_mine(session, run_id, held):
                raise RunLost(f"Run {run_id} was taken over by another process.")
    except StaleDataError:  # the final status change found the run moved on
        stop = _stopped(run_id, held, "its last step")
        if isinstance(stop, RunCancelled):
            fail_run(
                run_id, str(stop), RunStatus.CANCELLED, lease=held, expect=(RunStatus.CANCELLING,)
            )
        raise stop from None
    except RunCancelled as exc:
        fail_run(run_id, str(exc), RunStatus.CANCELLED, lease=held, expect=(RunStatus.CANCELLING,))
        raise
    except RunStopped:
        raise
    except KeyboardInterrupt:
        if held is not None:
            interrupt_run(run_id, held)
        raise RunInterrupted(
            f"Run {run_id} was interrupted — `evergreen resume {run_id}` or "
            f"`evergreen cancel {run_id}`."
        ) from None
    except EvergreenError as exc:
        end_failed(run_id, str(exc), held)
        raise
    except Exception as exc:
        end_failed(run_id, f"{type(exc).__name__}: {exc}", held)
        raise


def _store_baseline(session: Session, run: UpdateRun) -> None:
    """Keep with an update what starting over would have cost at its end (its time at
    the update's pace), so History and Review compare a past run with its own day's
    baseline, not with today's pool (``core.cost_views.scratch_for_run``)."""
    if run.kind != RunKind.UPDATE:
        return
    from core.cost_views import SCRATCH_KEY, scratch_baseline

    session.flush()  # the run's last cost events, for its pace
    baseline = scratch_baseline(session, run)
    run.summary = {**run.summary, SCRATCH_KEY: {**baseline, "at": utcnow().isoformat()}}


def _still_mine(session: Session, run_id: int, lease: int | None) -> bool:
    """Hold the run's row for the final commit: still under this worker's lease."""
    stmt = update(UpdateRun).where(col(UpdateRun.id) == run_id)
    if lease is not None:
        stmt = stmt.where(col(UpdateRun.lease) == lease)
    result = session.execute(stmt.values(heartbeat_at=utcnow()))
    return result.rowcount == 1  # type: ignore[attr-defined]


def call_writer(meter: CostMeter, stage: str, writer_name: str, fn: Callable[[], T]) -> T:
    """Every writer call is counted and timed under its stage."""
    from core.costs import metering

    faults.point("write")
    with meter.stage(stage, writer_name), metering(meter, stage):
        meter.add(stage, writer_name, writer_calls=1)
        return fn()
