"""Run lifecycle: a run row is committed before work starts, so a failure can
always be recorded on it while the work itself rolls back whole. Registering a run and
every move between its states, each one a compare-and-set."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from core.dates import utcnow
from core.engine.run_liveness import QUEUED, run_state, worker_id
from core.errors import EvergreenError, RunBusyError
from core.redact import redact_credentials
from core.states import OPEN_RUN_STATUSES, RunStatus
from core.store.db import session_scope
from core.store.models import UpdateRun


def open_run_for(session: Session, report_id: int) -> UpdateRun | None:
    return session.exec(
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report_id,
            col(UpdateRun.status).in_(OPEN_RUN_STATUSES),
        )
        .order_by(col(UpdateRun.id).desc())
    ).first()


RESUMABLE = (
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.INTERRUPTED,
    RunStatus.RUNNING,
    RunStatus.CANCELLING,
)


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


def state_now(run_id: int) -> tuple[str | None, int | None]:
    """The run's status and lease as committed now ((None, None): no such run)."""
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
    status, _ = state_now(run_id)
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
