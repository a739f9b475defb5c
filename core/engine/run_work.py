"""The work of one run: its session, the checkpoints that commit its progress, the final
commit held under the worker's lease, and the counted writer calls within it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, TypeVar

from sqlalchemy import update
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, col

from core import faults
from core.dates import utcnow
from core.engine.costs import CostMeter, metering
from core.engine.run_liveness import worker_id
from core.engine.run_stops import RunCancelled, RunInterrupted, RunLost, RunStopped
from core.engine.runs import end_failed, fail_run, interrupt_run, set_status, state_now
from core.engine.scratch import SCRATCH_KEY, scratch_baseline
from core.errors import EvergreenError
from core.states import RunKind, RunStatus
from core.store.db import session_scope
from core.store.models import UpdateRun

T = TypeVar("T")


def _stopped(run_id: int, lease: int | None, during: str) -> RunStopped:
    """Why a compare-and-set of this worker found the run moved on."""
    status, now_lease = state_now(run_id)
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
    baseline, not with today's pool (``core.app.cost_views.scratch_for_run``)."""
    if run.kind != RunKind.UPDATE:
        return
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
    faults.point("write")
    with meter.stage(stage, writer_name), metering(meter, stage):
        meter.add(stage, writer_name, writer_calls=1)
        return fn()
