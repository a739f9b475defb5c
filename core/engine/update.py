"""An update run's life: register it (``begin_update``), do its work (``execute_update``:
the engine's stages, ``core.engine.stages``, then a commit when asked), and take over a killed,
interrupted or failed run to continue it (``begin_resume`` / ``resume_run``).

A section whose evidence is unchanged or only minor, and that gets no new evidence, is
kept byte-identical with no writer call.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.dates import as_utc, day, utcnow
from core.domain.report_settings import settings_of
from core.domain.validation import check_as_of
from core.engine.audit import SCHEDULER, Actor
from core.engine.review import run_result
from core.engine.run_liveness import worker_alive
from core.engine.run_work import run_work
from core.engine.runs import RESUMABLE, busy_error, open_run_for, start_run, take_over
from core.engine.stages import Update, commit_stage, prepare_review
from core.errors import EvergreenError
from core.sources.registry import Providers, providers_for
from core.states import RunKind, RunStatus
from core.store.db import session_scope
from core.store.models import Report, UpdateRun
from core.store.repository import get_report, get_version
from core.writers import get_writer


def begin_update(
    report_ref: int | str, *, as_of: datetime | None = None, force_recheck: bool = False
) -> int:
    """Validate and register an update run; returns its id at once (work not started).

    ``force_recheck``: fetch every cited source again even when the shared evidence pool
    holds a check of it that is still fresh (another report's, within the freshness window).
    """
    with session_scope() as session:
        report = get_report(session, report_ref)
        base = get_version(session, report)
        when = check_as_of(as_of) or utcnow()
        if as_utc(when) < as_utc(base.as_of):
            raise EvergreenError(
                f"As-of {day(when)} is earlier than the current version's ({day(base.as_of)}); "
                "an update moves forward in time (use `rebuild` for a report at an earlier date)."
            )
        report_id, base_id = report.id, base.id
    options = {"force_recheck": True} if force_recheck else None
    return start_run(report_id, "update", when, base_id, summary=options)


def execute_update(
    run_id: int, *, approve_all: bool = False, lease: int | None = None, actor: Actor = SCHEDULER
) -> dict[str, Any]:
    """Do the work of a registered run: refresh, discover, propose (and commit if asked).

    Safe to call from a background thread or process; progress is committed as it goes.
    ``lease``: the one a take-over (``begin_resume``) won; the work is refused if another
    process took the run over since.
    """
    with session_scope() as session:
        run = session.get(UpdateRun, run_id)
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        report = session.get(Report, run.report_id)
        source, writer_name = report.source, settings_of(report.settings).writer
    providers: Providers | None = None
    try:
        with run_work(run_id, lease) as (session, run, meter):
            providers = providers_for(source)  # a provider failure fails the run, visibly
            report = session.get(Report, run.report_id)
            update = Update.start(session, report, run, meter, providers, get_writer(writer_name))
            prepare_review(update)
            if approve_all:
                commit_stage(update, actor)
    finally:
        if providers is not None:
            providers.close()
    with session_scope() as session:
        return run_result(session, run_id, cost=meter.totals())


def update_report(
    report_ref: int | str,
    *,
    as_of: datetime | None = None,
    approve_all: bool = False,
    force_recheck: bool = False,
    actor: Actor = SCHEDULER,
) -> dict[str, Any]:
    """Propose an update as of ``as_of``; with approve_all, commit it too (CLI `update`),
    in ``actor``'s name."""
    run_id = begin_update(report_ref, as_of=as_of, force_recheck=force_recheck)
    return execute_update(run_id, approve_all=approve_all, actor=actor)


def begin_resume(run_id: int) -> int:
    """Check that a killed, interrupted or failed update run can continue and take it over
    (status running, this process as its worker). Refusals raise at once, before any work;
    the take-over is one compare-and-set, so of two processes resuming at once one wins.
    Returns the lease this process now holds on the run."""
    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        if run.kind != RunKind.UPDATE:
            raise EvergreenError(
                f"Run {run.id} is a {run.kind}; only updates resume (start it again instead)."
            )
        if run.status not in RESUMABLE:
            raise EvergreenError(f"Run {run.id} is {run.status}: there is nothing to resume.")
        if run.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and worker_alive(run):
            raise EvergreenError(
                f"Run {run.id} is still being worked on by {run.worker}; watch it instead."
            )
        other = open_run_for(session, run.report_id)
        if other is not None and other.id != run.id:
            raise busy_error(other)
        report = session.get(Report, run.report_id)
        base = get_version(session, report)
        if run.base_version_id is not None and base.id != run.base_version_id:
            raise EvergreenError(
                f"Report {report.id} moved on to version {base.number} since run {run.id} "
                "started; start a new update."
            )
        return take_over(session, run)


def resume_run(run_id: int, *, approve_all: bool = False) -> dict[str, Any]:
    """Continue an update run that was killed, interrupted or failed, reusing the snapshots
    and section proposals it already has (CLI `resume`, and offered in the app)."""
    lease = begin_resume(run_id)
    return execute_update(run_id, approve_all=approve_all, lease=lease)
