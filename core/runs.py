"""Run lifecycle: a run row is committed before work starts, so a failure can
always be recorded on it while the work itself rolls back whole."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from core import faults
from core.costs import CostMeter
from core.dates import utcnow
from core.db import session_scope
from core.errors import EvergreenError
from core.models import OPEN_RUN_STATUSES, UpdateRun

T = TypeVar("T")
DEFAULT_SETTINGS: dict[str, Any] = {
    "tau": 0.9,
    "concurrency": 8,
    "max_sections": 6,
    "queries": 4,
    "results_per_query": 8,
    "section_results": 4,
    "discover_results": 5,
    "writer": None,  # None: the configured default (EVERGREEN_LLM)
}


def settings_of(report_settings: dict[str, Any] | None) -> dict[str, Any]:
    return {**DEFAULT_SETTINGS, **(report_settings or {})}


def open_run_for(session: Session, report_id: int) -> UpdateRun | None:
    return session.exec(
        select(UpdateRun)
        .where(
            UpdateRun.report_id == report_id,
            col(UpdateRun.status).in_(OPEN_RUN_STATUSES),
        )
        .order_by(col(UpdateRun.id).desc())
    ).first()


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def busy_message(run: UpdateRun) -> str:
    what = "is awaiting review" if run.status == "awaiting_review" else "is in progress"
    hint = (
        f"review it (evergreen review {run.id})"
        if run.status == "awaiting_review"
        else ("watch it in the app, or wait for it to finish")
    )
    return f"Run {run.id} of report {run.report_id} {what}; {hint}."


def start_run(report_id: int, kind: str, as_of: datetime, base_version_id: int | None) -> int:
    """Register a run. Two callers racing for the same report get one run: the database's
    one-open-run-per-report index refuses the second, who is told which run to watch."""
    try:
        with session_scope() as session:
            busy = open_run_for(session, report_id)
            if busy is not None:
                raise EvergreenError(busy_message(busy))
            run = UpdateRun(
                report_id=report_id,
                kind=kind,
                as_of=as_of,
                base_version_id=base_version_id,
                worker=worker_id(),
                heartbeat_at=utcnow(),
            )
            session.add(run)
            session.flush()
            return run.id
    except IntegrityError:
        with session_scope() as session:
            busy = open_run_for(session, report_id)
        raise EvergreenError(
            busy_message(busy) if busy else f"Another run of report {report_id} just started."
        ) from None


def fail_run(run_id: int, error: str, status: str = "failed") -> None:
    with session_scope() as session:
        run = session.get(UpdateRun, run_id)
        if run is not None:
            run.status = status
            run.error = error[:2000]
            run.finished_at = utcnow()
            session.add(run)


class RunCancelled(EvergreenError):
    """The analyst cancelled the run."""


def request_cancel(run_id: int) -> str:
    """Ask a running run to stop at its next step; a run awaiting review is cancelled now."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        if run.status == "running":
            run.status = "cancelling"
        elif run.status == "awaiting_review":
            run.status = "cancelled"
            run.finished_at = utcnow()
        else:
            raise EvergreenError(f"Run {run_id} is {run.status}; there is nothing to cancel.")
        session.add(run)
        return run.status


def checkpoint(session: Session, run: UpdateRun, text: str, meter: CostMeter | None = None) -> None:
    """Record progress and commit the work so far — evidence, proposals and costs are kept
    even if a later step fails or the process dies; stop here if the analyst cancelled."""
    run.progress = text[:500]
    run.heartbeat_at = utcnow()
    run.worker = worker_id()
    session.add(run)
    if meter is not None:
        for event in meter.events(run.id):
            session.add(event)
    session.commit()
    session.refresh(run)
    if run.status == "cancelling":
        raise RunCancelled(f"Run {run.id} was cancelled during: {text}.")


@contextmanager
def run_work(run_id: int) -> Iterator[tuple[Session, UpdateRun, CostMeter]]:
    """The work of one run. Checkpoints commit as it goes; the final step (proposals,
    or a version) commits at the end. On any error the run is marked failed, nothing
    after its last checkpoint remains, and committed versions are untouched."""
    meter = CostMeter()
    start = time.perf_counter()
    try:
        with session_scope() as session:
            run = session.get(UpdateRun, run_id)
            assert run is not None
            yield session, run, meter
            for event in meter.events(run_id):
                session.add(event)
            run.timings = {
                **run.timings,
                "seconds": round(meter.total("seconds"), 3),
                "wall": round(time.perf_counter() - start, 3),
            }
            run.summary = {**run.summary, "writer_calls": int(meter.total("writer_calls"))}
            session.add(run)
    except RunCancelled as exc:
        fail_run(run_id, str(exc), status="cancelled")
        raise
    except EvergreenError as exc:
        fail_run(run_id, str(exc))
        raise
    except Exception as exc:
        fail_run(run_id, f"{type(exc).__name__}: {exc}")
        raise


def call_writer(meter: CostMeter, stage: str, writer_name: str, fn: Callable[[], T]) -> T:
    """Every writer call is counted and timed under its stage."""
    from core.costs import metering

    faults.point("write")
    with meter.stage(stage, writer_name), metering(meter, stage):
        meter.add(stage, writer_name, writer_calls=1)
        return fn()
