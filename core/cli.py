"""The `evergreen` command: a thin door onto the core (the app is the other one).

Every command turns an EvergreenError into one line on stderr and exit code 1;
JSON output (``--json``) is a stable contract for scripts and cron jobs.

A command does its work through :mod:`core.actions` (the layer the app calls too) and
:mod:`core.jobs` (runs on workers), imported when the command runs: loading the core takes
seconds, and ``--help`` or a usage error should not wait for it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core import config
from core.cli_results import Created, Updated, as_json_data
from core.errors import EvergreenError, RunBusyError
from core.report_settings import WRITERS, ReportSettings
from core.states import RunKind

_TAU = ReportSettings.bounds("tau")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Evergreen keeps cited research reports current with reviewed, incremental updates.",
)
corpus_app = typer.Typer(no_args_is_help=True, help="Local temporal document corpora.")
app.add_typer(corpus_app, name="corpus")
out = Console()
err = Console(stderr=True)


@app.callback()
def _global(
    ctx: typer.Context,
    db: Annotated[
        str | None, typer.Option("--db", help="Database URL or SQLite path (or EVERGREEN_DB).")
    ] = None,
) -> None:
    # the choice holds while the command runs (its run threads included), then is undone;
    # the environment is not touched, so nothing leaks into a process started later
    ctx.with_resource(config.overriding(config.ENV_DB, db))


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _as_of(value: str | None) -> Any:
    """An --as-of option: None for now; a date after today is refused."""
    from core.dates import parse_as_of
    from core.validation import check_as_of

    return check_as_of(parse_as_of(value)) if value else None


# -- corpora ----------------------------------------------------------------------
@corpus_app.command("add")
def corpus_add(
    name: Annotated[str, typer.Argument(help="Name for the corpus, e.g. peps.")],
    path: Annotated[Path, typer.Argument(help="A .jsonl / .jsonl.gz file or a folder.")],
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="Skip bad records instead of aborting.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Import page versions into a corpus (re-importing the same data changes nothing)."""
    from core.sources.corpus import add_corpus

    with out.status(f"Importing {path} …"):
        result = add_corpus(name, path, skip_bad=skip_bad)
    if as_json:
        _print_json(result.as_dict())
        return
    out.print(
        f"Corpus [bold]{name}[/]: read {result.read} records — {result.inserted} new, "
        f"{result.updated} updated, {result.unchanged} unchanged."
    )
    for line in result.skipped[:20]:
        err.print(f"skipped {line}", markup=False)
    if len(result.skipped) > 20:
        err.print(f"… and {len(result.skipped) - 20} more skipped")


@corpus_app.command("list")
def corpus_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The corpora in this workspace."""
    from core.sources.corpus import list_corpora

    rows = list_corpora()
    if as_json:
        _print_json(rows)
        return
    if not rows:
        out.print("No corpora yet. Import one with: evergreen corpus add NAME PATH")
        return
    table = Table("name", "pages", "versions", "first", "last")
    for r in rows:
        if r.get("error"):
            table.add_row(r["name"], "damaged", "", "", "")
            continue
        table.add_row(r["name"], str(r["pages"]), str(r["versions"]), r["first"], r["last"])
    out.print(table)
    for r in rows:
        if r.get("error"):
            err.print(escape(r["error"]))


@corpus_app.command("search")
def corpus_search(
    name: str,
    query: str,
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only pages updated after.")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 10,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Search a corpus as it stood at a date."""
    from core.dates import iso, parse_as_of
    from core.sources.corpus import Corpus

    corpus = Corpus.open(name)
    hits = corpus.search(
        query,
        max_results=limit,
        end_date=parse_as_of(as_of) if as_of else None,
        start_date=parse_as_of(since) if since else None,
    )
    if as_json:
        _print_json(
            [
                {
                    "url": h.url,
                    "title": h.title,
                    "date": iso(h.date),
                    "score": round(h.score, 4),
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        )
        return
    for h in hits:
        out.print(
            f"[bold]{escape(h.title)}[/] ({h.date.date() if h.date else '?'}) {escape(h.url)}"
        )
        out.print(f"   {h.snippet[:200]}", markup=False)


# -- reports ------------------------------------------------------------------------
@app.command("list")
def list_cmd(
    archived: Annotated[
        bool, typer.Option("--archived", help="Also list archived reports (status archived).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Tracked reports with their current version (archived ones with --archived)."""
    from core.db import session_scope
    from core.report_archive import archived_report_ids
    from core.services import report_rows

    with session_scope() as session:
        rows = report_rows(session)
        hidden = archived_report_ids(session)
    rows = [
        _archived_row(r) if r["id"] in hidden else r
        for r in rows
        if archived or r["id"] not in hidden
    ]
    if as_json:
        _print_json(rows)
        return
    if not rows:
        out.print("No reports yet. Try: evergreen demo")
        return
    table = Table("id", "title", "version", "as of", "sources", "status")
    for r in rows:
        table.add_row(
            str(r["id"]),
            escape(r["title"]),
            str(r["version"] or "—"),
            r["as_of"] or "—",
            str(r["sources"]),
            r["status"],
        )
    out.print(table)


def _archived_row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "status": "archived"}


@app.command("show")
def show_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    version: Annotated[int | None, typer.Option("--version", "-v")] = None,
) -> None:
    """Print a version of a report as Markdown."""
    from core.db import session_scope
    from core.export import version_markdown
    from core.repository import get_report

    with session_scope() as session:
        text = version_markdown(
            session, get_report(session, report), version, with_version_line=True
        )
    sys.stdout.write(text)


@app.command("import-report")
def import_report_cmd(
    file: Annotated[Path, typer.Argument(help="A Markdown report.")],
    query: Annotated[str, typer.Option("--query", "-q", help="The question it answers.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    source: Annotated[
        str, typer.Option("--source", help="Where updates look: sample | corpus:NAME | web.")
    ] = "sample",
    allow_duplicate: Annotated[
        bool,
        typer.Option("--allow-duplicate", help="Import a file imported before as a second copy."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Import an existing Markdown report as version 1 of a new tracked report."""
    from core import actions  # lazy: see the module docstring
    from core.importer import DuplicateImportError, read_markdown_file

    text = read_markdown_file(file)
    try:
        summary = actions.import_markdown(
            text,
            query=query,
            as_of=_as_of(as_of),
            source=source,
            default_title=actions.title_from_file_name(file.name) or "Imported",
            allow_duplicate=allow_duplicate,
        )
    except DuplicateImportError as exc:
        raise EvergreenError(f"{exc} Add --allow-duplicate to import a second copy.") from None
    if as_json:
        _print_json(as_json_data(summary))
        return
    out.print(
        f"Imported report {summary.report_id}: {summary.sections} sections, "
        f"{summary.references} references."
    )
    if summary.uncited_references:
        err.print(
            f"note: references never cited in the text were dropped: {summary.uncited_references}",
            markup=False,
        )
    if summary.untracked_references:
        err.print(
            "note: references without a web address stay as plain text (nothing to re-check): "
            f"{summary.untracked_references}",
            markup=False,
        )


@app.command("export")
def export_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md or pdf.")] = "md",
    version: Annotated[int | None, typer.Option("--version", "-v")] = None,
) -> None:
    """Export a version to Markdown or PDF."""
    from core import actions  # lazy: see the module docstring

    path = actions.export(report, output, fmt=fmt, version=version)
    out.print(f"Wrote {path}")


@app.command("create")
def create_cmd(
    question: Annotated[str, typer.Argument(help="The research question.")],
    title: Annotated[str | None, typer.Option("--title")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    source: Annotated[str, typer.Option("--source", help="sample | corpus:NAME | web.")] = "sample",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Research a new report from scratch and commit version 1 (on PostgreSQL with a
    worker running: the worker does it, this command watches)."""
    from core import actions  # lazy: see the module docstring

    when = _as_of(as_of)
    if _queued():
        result = _create_on_worker(question, title=title, as_of=when, source=source)
    else:
        with out.status("Researching …"):
            result = actions.create(question, title=title, as_of=when, source=source)
    if as_json:
        _print_json(as_json_data(result))
        return
    out.print(
        f"Created report {result.report_id} (version {result.version}): "
        f"{result.sections} sections citing {result.sources} sources; "
        f"{result.cost.searches} searches, {result.cost.fetches} fetches."
    )


@app.command("update")
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
    from core import actions  # lazy: see the module docstring

    if due or every:
        flag = "--due" if due else "--all"
        if due and every:
            raise EvergreenError("Choose --due (the scheduled reports) or --all (every report).")
        if report is not None or approve_all:
            raise EvergreenError(
                f"{flag} updates {'the scheduled' if due else 'every'} report: give no REPORT "
                "or --approve-all."
            )
        _update_many(due, _as_of(as_of), workers, wait, as_json, force_recheck)
        return
    if report is None:
        raise EvergreenError(
            "Name a report to update (evergreen list shows them), or use --due or --all."
        )
    when = _as_of(as_of)
    if _queued():
        result = _update_on_worker(
            report, as_of=when, approve_all=approve_all, force_recheck=force_recheck
        )
    else:
        with out.status("Updating …"):
            result = actions.update(
                report, as_of=when, approve_all=approve_all, force_recheck=force_recheck
            )
    if as_json:
        _print_json(as_json_data(result))
        return
    acts = ", ".join(f"{v} {k}" for k, v in result.actions.items() if v)
    ev = ", ".join(f"{v} {k}" for k, v in result.evidence.items() if v)
    out.print(f"Run {result.run_id}: {acts}. Evidence: {ev}.")
    if result.version:
        continuity = as_json_data(result)["continuity"]
        out.print(f"Committed version {result.version}; continuity {continuity}.")
    else:
        out.print(f"Review with: evergreen review {result.run_id} --approve-all --commit")


def _update_many(
    due: bool, now: Any, workers: int, wait: bool, as_json: bool, force_recheck: bool = False
) -> None:
    """--due: propose an update for each report whose schedule is due; --all: for every
    report. On workers the runs are queued (--wait: watched to their end); otherwise done
    here, ``workers`` at a time. The runs wait for review."""
    from core.schedule import enqueue_due, run_due, run_row, update_round

    queued = _queued()
    if workers < 1:
        raise EvergreenError(f"--workers must be at least 1 (got {workers}).")
    if due:
        rows = enqueue_due(now) if queued else run_due(workers=workers, now=now)
    else:
        rows = update_round(as_of=now, workers=workers, queue=queued, force_recheck=force_recheck)
    if queued and wait:
        rows = [{**r, **_watched(r["run_id"], run_row)} if r["run_id"] else r for r in rows]
    if as_json:
        _print_json(rows)
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
def _queued() -> bool:
    """Whether this command's runs go to the workers (``core.jobs.mode``: PostgreSQL and a
    worker running, or EVERGREEN_JOBS=queue); otherwise they are done here."""
    from core import jobs  # lazy: see the module docstring

    return jobs.mode() == "queue"


def _watched(run_id: int, then: Any) -> Any:
    """Wait for a run on a worker to end (its progress on the status line), then return
    ``then(run_id)``. Ctrl-C stops watching; the run goes on."""
    import time

    from core.db import session_scope
    from core.jobs import FINAL
    from core.models import UpdateRun

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
        _fail(
            f"Stopped watching run {run_id}; it goes on on a worker "
            f"(evergreen cancel {run_id} stops it).",
            130,
        )
    return then(run_id)


def _update_on_worker(
    report: str, *, as_of: Any, approve_all: bool, force_recheck: bool = False
) -> Updated:
    from core import actions, jobs  # lazy: see the module docstring

    run_id = jobs.start_update(
        report, as_of=as_of, approve_all=approve_all, sync=False, force_recheck=force_recheck
    )
    return _watched(run_id, actions.outcome)


def _create_on_worker(question: str, **kwargs: Any) -> Created:
    from core import actions, jobs  # lazy: see the module docstring

    run_id = jobs.submit_create(question, **kwargs)
    return _watched(run_id, actions.created)


@app.command("cancel")
def cancel_cmd(run: Annotated[int, typer.Argument(help="Run id.")]) -> None:
    """Cancel a run: a running one stops at its next step; one awaiting review is dropped."""
    from core import jobs  # lazy: see the module docstring

    status = jobs.cancel(run)
    out.print(f"Run {run}: {status}.")


@app.command("abandon")
def abandon_cmd(
    run: Annotated[int, typer.Argument(help="Run id of an unfinished run no worker is doing.")],
) -> None:
    """Mark a run that no worker is doing (its process stopped mid-run) as failed, so the
    report can be updated again — the Reports and Review screens' "Mark abandoned"."""
    from core import jobs  # lazy: see the module docstring

    status = jobs.abandon(run)
    out.print(f"Run {run}: {status}.")


@app.command("review")
def review_cmd(
    run: Annotated[int, typer.Argument(help="Run id.")],
    approve: Annotated[list[str] | None, typer.Option("--approve", help="Section key.")] = None,
    reject: Annotated[list[str] | None, typer.Option("--reject", help="Section key.")] = None,
    approve_all: Annotated[bool, typer.Option("--approve-all")] = False,
    commit: Annotated[bool, typer.Option("--commit")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Approve or reject a run's proposals and commit the new version."""
    from core import actions  # lazy: see the module docstring

    result = actions.review(
        run, approve=approve or [], reject=reject or [], approve_all=approve_all, commit=commit
    )
    if as_json:
        _print_json(as_json_data(result))
        return
    table = Table("section", "action", "decision", "why")
    for p in result.proposals:
        table.add_row(escape(p.key), p.action, p.decision, escape(p.rationale[:90]))
    out.print(table)
    if result.version:
        out.print(f"Committed version {result.version}.")


@app.command("rebuild")
def rebuild_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    as_of: Annotated[str, typer.Option("--as-of", help="YYYY-MM-DD.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """A from-scratch report for the same question at a date, kept as a separate baseline."""
    from core import actions  # lazy: see the module docstring

    plan = actions.baseline(report, as_of=_as_of(as_of))
    if _queued():
        result = _create_on_worker(plan.question, **plan.options)
    else:
        with out.status("Rebuilding from scratch …"):
            result = actions.rebuild(plan)
    if as_json:
        _print_json(as_json_data(result))
        return
    out.print(f"Baseline report {result.report_id} for report {plan.report_id} as of {as_of}.")


@app.command("archive")
def archive_cmd(report: Annotated[str, typer.Argument(help="Report id or exact title.")]) -> None:
    """Hide a report from the list and the update schedule; it is kept whole."""
    from core import actions  # lazy: see the module docstring

    done = actions.archive(report)
    out.print(f"Archived report {done}; `evergreen unarchive {done}` brings it back.", markup=False)


@app.command("unarchive")
def unarchive_cmd(report: Annotated[str, typer.Argument(help="Report id or exact title.")]) -> None:
    """Bring an archived report back to the list (and its schedule)."""
    from core import actions  # lazy: see the module docstring

    done = actions.unarchive(report)
    out.print(f"Report {done} is back in the list.", markup=False)


@app.command("delete")
def delete_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: delete it for good.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Delete a report, its versions, runs and evidence pool for good (needs --yes);
    `evergreen archive` hides a report and keeps it."""
    from core import actions  # lazy: see the module docstring

    if not yes:
        raise EvergreenError(f"{actions.deletion_warning(report)} Add --yes to confirm.")
    result = actions.delete(report)
    if as_json:
        _print_json(as_json_data(result))
        return
    gone = result.deleted
    out.print(
        f"Deleted report {result.report_id}: {gone.versions} versions, {gone.runs} runs, "
        f"{gone.snapshots} snapshots, {gone.sources} sources no other report uses.",
        markup=False,
    )


@app.command("settings")
def settings_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    max_sources: Annotated[
        int | None, typer.Option("--max-sources", help="Source budget (0: no limit).")
    ] = None,
    max_section_words: Annotated[
        int | None,
        typer.Option("--max-section-words", help="Words per section (0: no limit)."),
    ] = None,
    tau: Annotated[
        float | None, typer.Option("--tau", help="Similarity gate, {}–{}.".format(*_TAU))
    ] = None,
    writer: Annotated[
        str | None,
        typer.Option("--writer", help=f"{' or '.join(WRITERS)} ('default': the configured one)."),
    ] = None,
    every_days: Annotated[
        int | None, typer.Option("--every-days", help="Schedule (0: none).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", help="Pages fetched at once.")
    ] = None,
    max_sections: Annotated[
        int | None,
        typer.Option("--max-sections", help="Sections a from-scratch research writes at most."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show a report's settings, or change them: its budget (an update drops the least
    relevant sources and sentences beyond it), τ, writer, schedule, concurrency and
    sections — the same settings, checked by the same rules, as the app's Settings screen."""
    from core import actions  # lazy: see the module docstring

    numbers = {
        "tau": tau,
        "concurrency": concurrency,
        "max_sections": max_sections,
        "max_sources": max_sources,
        "max_section_words": max_section_words,
    }
    changes: dict[str, Any] = {k: v for k, v in numbers.items() if v is not None}
    if writer is not None:
        changes["writer"] = writer
    if every_days is not None:
        changes["every_days"] = every_days
    shown, problems = actions.settings(report, **changes)
    for line in problems:
        err.print(f"note: {line}", markup=False)
    if as_json:
        _print_json(as_json_data(shown))
        return
    for key, words in _SETTING_WORDS.items():
        out.print(f"{key.replace('_', ' ')}: {words(getattr(shown, key))}", markup=False)


#: what ``evergreen settings`` shows, in its order, and how each value reads
_SETTING_WORDS: dict[str, Any] = {
    "max_sources": lambda v: "no limit" if not v else f"{v} sources",
    "max_section_words": lambda v: "no limit" if not v else f"{v} words per section",
    "tau": str,
    "writer": lambda v: v or "the configured default",
    "every_days": lambda v: f"every {v} days" if v else "no schedule",
    "concurrency": lambda v: f"{v} pages at once",
    "max_sections": lambda v: f"at most {v} sections",
}


@app.command("demo")
def demo_cmd(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Load the sample workspace (sample corpus and a sample report), once."""
    from core import actions  # lazy: see the module docstring

    with out.status("Loading the sample workspace …"):
        summary = actions.demo()
    if as_json:
        _print_json(summary)
        return
    out.print(summary["message"])


@app.command("resume")
def resume_cmd(
    run: Annotated[int, typer.Argument(help="Run id of a killed or failed update.")],
    approve_all: Annotated[bool, typer.Option("--approve-all")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Continue an interrupted update, reusing what it already fetched and wrote (on a
    worker when the workers do the runs)."""
    from core import actions, jobs  # lazy: see the module docstring

    if _queued():
        jobs.resume(run, approve_all=approve_all, sync=False)
        result = _watched(run, actions.outcome)
    else:
        with out.status(f"Resuming run {run} …"):
            result = actions.resume(run, approve_all=approve_all)
    if as_json:
        _print_json(as_json_data(result))
        return
    state = f"committed version {result.version}" if result.version else "awaiting review"
    out.print(f"Run {result.run_id} resumed: {state}.")


@app.command("worker")
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
    import logging

    from core.queue_worker import run_worker

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s"
    )
    run_worker(concurrency=concurrency, until_empty=until_empty)


@app.command("bench")
def bench_cmd(
    corpus: Annotated[str, typer.Option("--corpus", help="A corpus in this workspace.")],
    queries: Annotated[Path, typer.Option("--queries", help="queries.json with ground truth.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder.")],
    year_from: Annotated[int, typer.Option("--from")] = 2016,
    year_to: Annotated[int, typer.Option("--to")] = 2025,
    task: Annotated[str, typer.Option("--task", help="sst, lct or both.")] = "both",
    interval: Annotated[
        list[int] | None, typer.Option("--interval", help="SST gaps in years (repeatable).")
    ] = None,
    writer: Annotated[
        str, typer.Option("--writer", help="offline or openai (llm: the old name of openai).")
    ] = "offline",
    workers: Annotated[int, typer.Option("--workers", help="Questions run in parallel.")] = 2,
    resume: Annotated[bool, typer.Option("--resume", help="Continue in --out.")] = False,
    judge: Annotated[
        bool, typer.Option("--judge", help="With --writer openai: RACE scores vs regeneration.")
    ] = False,
    key_share: Annotated[
        float, typer.Option("--key-share", help="Key sources: score ≥ this × the top score.")
    ] = 0.9,
) -> None:
    """The temporal benchmark: regenerate vs SST vs LCT — support, fact accuracy, stale
    claims, freshness, continuity and cost."""
    from rich.progress import Progress

    from core import actions  # lazy: see the module docstring

    plan = actions.plan_bench(
        corpus=corpus,
        queries=queries,
        out=out_dir,
        year_from=year_from,
        year_to=year_to,
        task=task,
        intervals=interval or [1],
        writer=writer,
        workers=workers,
        resume=resume,
        judge=judge,
        key_share=key_share,
    )
    for note in plan.notes:
        err.print(f"note: {note}")
    with Progress(console=err) as progress:
        title = f"{len(plan.specs)} questions × {len(plan.config.years)} years"
        bar = progress.add_task(title, total=plan.steps)
        line = actions.bench(plan, on_step=lambda: progress.advance(bar))
    out.print(line)
    out.print(f"Results in {out_dir}/ (results.json, table.md, charts.html)")


def main() -> None:
    """Entry point: run the CLI, turning known failures into one clear line (exit 1);
    Ctrl-C stops the work, marks its run interrupted and exits 130."""
    from core.run_stops import RunInterrupted, RunStopped

    try:
        code = app(standalone_mode=False)  # typer returns 130 for a KeyboardInterrupt
    except RunBusyError as exc:
        _fail(f"{exc} {_next_step(exc)}", 1)
    except EvergreenError as exc:
        _fail(str(exc), 1)
    except RunInterrupted as exc:
        _fail(str(exc), 130)
    except RunStopped as exc:  # cancelled, or taken over by another process
        _fail(str(exc), 1)
    except (typer.Abort, KeyboardInterrupt):
        _fail("Interrupted.", 130)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:  # usage errors: one line and the usage, never a traceback
        if _usage_error(exc):
            exc.show()  # type: ignore[attr-defined]
            raise SystemExit(exc.exit_code) from None  # type: ignore[attr-defined]
        raise
    if isinstance(code, int) and code == 130:
        _fail("Interrupted.", code)
    if isinstance(code, int) and code:
        _exit(code)


def _usage_error(exc: Exception) -> bool:
    """A click usage error — click's own, or the copy of click that newer typer releases
    carry (``typer._click``: not a subclass of click's)."""
    import click

    kinds: list[type] = [click.ClickException]
    try:
        from typer._click.exceptions import ClickException as TyperClickException

        kinds.append(TyperClickException)
    except ImportError:  # a typer that uses click itself
        pass
    return isinstance(exc, tuple(kinds))


def _next_step(exc: RunBusyError) -> str:
    """What to type next when a report is held by an open run."""
    n = exc.run_id
    if exc.state == "awaiting_review":
        return f"Review it: evergreen review {n} (or evergreen cancel {n})."
    if exc.state == "interrupted" and exc.kind == RunKind.UPDATE:
        return f"Resume it: evergreen resume {n} (or evergreen cancel {n})."
    if exc.state == "interrupted":
        return f"Cancel it: evergreen cancel {n}."
    return f"Wait for it to finish, or stop it: evergreen cancel {n}."


def _fail(message: str, code: int) -> NoReturn:
    """One line on stderr, printed as text: brackets such as [1] are not console markup."""
    prefix = "[red]Error:[/] " if code == 1 else ""
    err.print(prefix + escape(message), highlight=False)
    _exit(code)


def _exit(code: int) -> NoReturn:
    """Exit now. After Ctrl-C, worker threads still blocked on a fetch or a model call
    are abandoned instead of being waited for at interpreter exit."""
    import threading

    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if code == 130 and busy:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
