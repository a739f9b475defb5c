"""The ``evergreen`` commands on runs: update (one report, the due ones or all), cancel,
abandon, review, resume and the queue worker; and watching a run a worker does."""

from __future__ import annotations

import logging
import sys
import time
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from core.app.cli_results import Created, Updated, as_json_data
from core.cli.console import actor, as_of_option, fail, out, print_json
from core.errors import EvergreenError


def update_cmd(
    report: Annotated[
        str | None, typer.Argument(help="Report id or exact title (omit with --due).")
    ] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    approve_all: Annotated[bool, typer.Option("--approve-all")] = False,
    due: Annotated[
        bool, typer.Option("--due", help="Update every report whose schedule is due (cron).")
    ] = False,
    every: Annotated[
        bool, typer.Option("--all", help="Update every report (not archived, no open run).")
    ] = False,
    workers: Annotated[
        int, typer.Option("--workers", help="With --due / --all: reports updated at once here.")
    ] = 1,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="With --due / --all on workers: wait for every run to end."),
    ] = False,
    force_recheck: Annotated[
        bool,
        typer.Option(
            "--force-recheck",
            help="Fetch every cited page whole, even one another report's update checked "
            "within the freshness window (EVERGREEN_RECHECK_HOURS).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Refresh evidence, look for what is new, and propose section changes (on PostgreSQL
    with a worker running: the workers do the runs; --due and --all queue them). A page
    another report's update checked recently is not fetched again (--force-recheck)."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    if due or every:
        _many_alone(due, every, report, approve_all)
        _update_many(due, as_of_option(as_of), workers, wait, as_json, force_recheck)
        return
    if report is None:
        raise EvergreenError(
            "Name a report to update (evergreen list shows them), or use --due or --all."
        )
    when = as_of_option(as_of)
    if queued():
        result = _update_on_worker(
            report, as_of=when, approve_all=approve_all, force_recheck=force_recheck
        )
    else:
        with out.status("Updating …"):
            result = actions.update(
                report,
                as_of=when,
                approve_all=approve_all,
                force_recheck=force_recheck,
                actor=actor(),
            )
    if as_json:
        print_json(as_json_data(result))
        return
    _print_update(result)


def _print_update(result: Updated) -> None:
    """An update's result as lines for a person."""
    acts = ", ".join(f"{v} {k}" for k, v in result.actions.items() if v)
    ev = ", ".join(f"{v} {k}" for k, v in result.evidence.items() if v)
    out.print(f"Run {result.run_id}: {acts}. Evidence: {ev}.")
    if result.version:
        continuity = as_json_data(result)["continuity"]
        out.print(f"Committed version {result.version}; continuity {continuity}.")
    else:
        out.print(f"Review with: evergreen review {result.run_id} --approve-all --commit")


def _many_alone(due: bool, every: bool, report: str | None, approve_all: bool) -> None:
    """--due and --all choose the reports themselves: one of them, and no REPORT."""
    flag = "--due" if due else "--all"
    if due and every:
        raise EvergreenError("Choose --due (the scheduled reports) or --all (every report).")
    if report is not None or approve_all:
        raise EvergreenError(
            f"{flag} updates {'the scheduled' if due else 'every'} report: give no REPORT "
            "or --approve-all."
        )


def _update_many(
    due: bool, now: Any, workers: int, wait: bool, as_json: bool, force_recheck: bool = False
) -> None:
    """--due: propose an update for each report whose schedule is due; --all: for every
    report. On workers the runs are queued (--wait: watched to their end); otherwise done
    here, ``workers`` at a time. The runs wait for review."""
    # lazy: the core loads when a command runs (core.cli)
    from core.engine.schedule import enqueue_due, run_due, run_row, update_round

    on_workers = queued()
    if workers < 1:
        raise EvergreenError(f"--workers must be at least 1 (got {workers}).")
    if due:
        rows = enqueue_due(now) if on_workers else run_due(workers=workers, now=now)
    else:
        rows = update_round(
            as_of=now, workers=workers, queue=on_workers, force_recheck=force_recheck
        )
    if on_workers and wait:
        rows = [{**r, **_watched(r["run_id"], run_row)} if r["run_id"] else r for r in rows]
    if as_json:
        print_json(rows)
    elif not rows:
        out.print("No report is due." if due else "No report to update.")
    for row in rows:
        if not as_json:
            line = f"Report {row['report_id']}: run {row['run_id'] or '—'} {row['status']}"
            out.print(line + (f" — {row['error']}" if row["error"] else ""), markup=False)
    failed = [r for r in rows if r["error"]]
    if failed:
        raise EvergreenError(
            f"{len(failed)} of {len(rows)} {'due ' if due else ''}update(s) failed."
        )


# -- runs on workers (PostgreSQL) ---------------------------------------------------------------
def queued() -> bool:
    """Whether this command's runs go to the workers (``core.engine.jobs.mode``: PostgreSQL and a
    worker running, or EVERGREEN_JOBS=queue); otherwise they are done here."""
    from core.engine import jobs  # lazy: the core loads when a command runs (core.cli)

    return jobs.mode() == "queue"


def _watched(run_id: int, then: Any) -> Any:
    """Wait for a run on a worker to end (its progress on the status line), then return
    ``then(run_id)``. Ctrl-C stops watching; the run goes on."""
    # lazy: the core loads when a command runs (core.cli)
    from core.engine.jobs import FINAL
    from core.store.db import session_scope
    from core.store.models import UpdateRun

    try:
        with out.status(f"Run {run_id}: queued for a worker …") as status:
            while True:
                with session_scope() as session:
                    run = session.get(UpdateRun, run_id)
                    state, progress = (run.status, run.progress) if run else ("failed", "")
                if state in FINAL:
                    break
                status.update(f"Run {run_id} on a worker: {progress or 'queued'} …")
                time.sleep(0.2)
    except KeyboardInterrupt:
        fail(
            f"Stopped watching run {run_id}; it goes on on a worker "
            f"(evergreen cancel {run_id} stops it).",
            130,
        )
    return then(run_id)


def _update_on_worker(
    report: str, *, as_of: Any, approve_all: bool, force_recheck: bool = False
) -> Updated:
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)
    from core.engine import jobs

    run_id = jobs.start_update(
        report, as_of=as_of, approve_all=approve_all, sync=False, force_recheck=force_recheck
    )
    return _watched(run_id, actions.outcome)


def create_on_worker(question: str, **kwargs: Any) -> Created:
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)
    from core.engine import jobs

    run_id = jobs.submit_create(question, **kwargs)
    return _watched(run_id, actions.created)


def cancel_cmd(run: Annotated[int, typer.Argument(help="Run id.")]) -> None:
    """Cancel a run: a running one stops at its next step; one awaiting review is dropped."""
    from core.engine import jobs  # lazy: the core loads when a command runs (core.cli)

    status = jobs.cancel(run)
    out.print(f"Run {run}: {status}.")


def abandon_cmd(
    run: Annotated[int, typer.Argument(help="Run id of an unfinished run no worker is doing.")],
) -> None:
    """Mark a run that no worker is doing (its process stopped mid-run) as failed, so the
    report can be updated again — the Reports and Review screens' "Mark abandoned"."""
    from core.engine import jobs  # lazy: the core loads when a command runs (core.cli)

    status = jobs.abandon(run)
    out.print(f"Run {run}: {status}.")


def review_cmd(
    run: Annotated[int, typer.Argument(help="Run id.")],
    approve: Annotated[list[str] | None, typer.Option("--approve", help="Section key.")] = None,
    reject: Annotated[list[str] | None, typer.Option("--reject", help="Section key.")] = None,
    approve_all: Annotated[bool, typer.Option("--approve-all")] = False,
    commit: Annotated[bool, typer.Option("--commit")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Approve or reject a run's proposals and commit the new version."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    result = actions.review(
        run,
        approve=approve or [],
        reject=reject or [],
        approve_all=approve_all,
        commit=commit,
        actor=actor(),
    )
    if as_json:
        print_json(as_json_data(result))
        return
    table = Table("section", "action", "decision", "why")
    for p in result.proposals:
        table.add_row(escape(p.key), p.action, p.decision, escape(p.rationale[:90]))
    out.print(table)
    if result.version:
        out.print(f"Committed version {result.version}.")


def resume_cmd(
    run: Annotated[int, typer.Argument(help="Run id of a killed or failed update.")],
    approve_all: Annotated[bool, typer.Option("--approve-all")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Continue an interrupted update, reusing what it already fetched and wrote (on a
    worker when the workers do the runs)."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)
    from core.engine import jobs

    if queued():
        jobs.resume(run, approve_all=approve_all, sync=False)
        result = _watched(run, actions.outcome)
    else:
        with out.status(f"Resuming run {run} …"):
            result = actions.resume(run, approve_all=approve_all)
    if as_json:
        print_json(as_json_data(result))
        return
    state = f"committed version {result.version}" if result.version else "awaiting review"
    out.print(f"Run {result.run_id} resumed: {state}.")


def worker_cmd(
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", help="Runs this worker does at once.")
    ] = 1,
    until_empty: Annotated[
        bool, typer.Option("--until-empty", help="Stop once no job is left to take.")
    ] = False,
) -> None:
    """Do queued runs (PostgreSQL): creates, updates, resumes and the scheduled updates.
    Start one per machine, or several; Ctrl-C lets the runs in hand finish, then stops."""
    from core.engine.queue_worker import (
        run_worker,  # lazy: the core loads when a command runs (core.cli)
    )

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s"
    )
    run_worker(concurrency=concurrency, until_empty=until_empty)
