"""The ``evergreen`` commands on reports: list, show, import, export, create, rebuild,
archive, unarchive, delete, settings and the sample workspace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from core.app.cli_results import as_json_data
from core.cli.console import actor, as_of_option, err, out, print_json
from core.cli.runs import create_on_worker, queued
from core.domain.report_settings import WRITERS, ReportSettings
from core.errors import EvergreenError

_TAU = ReportSettings.bounds("tau")


def list_cmd(
    archived: Annotated[
        bool, typer.Option("--archived", help="Also list archived reports (status archived).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Tracked reports with their current version (archived ones with --archived)."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    rows = actions.report_list(include_archived=archived)
    if as_json:
        print_json(rows)
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


def show_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    version: Annotated[int | None, typer.Option("--version", "-v")] = None,
) -> None:
    """Print a version of a report as Markdown."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    text = actions.markdown(report, version)
    sys.stdout.write(text)


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
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)
    from core.app.importer import DuplicateImportError, read_markdown_file

    text = read_markdown_file(file)
    try:
        summary = actions.import_markdown(
            text,
            query=query,
            as_of=as_of_option(as_of),
            source=source,
            default_title=actions.title_from_file_name(file.name) or "Imported",
            allow_duplicate=allow_duplicate,
        )
    except DuplicateImportError as exc:
        raise EvergreenError(f"{exc} Add --allow-duplicate to import a second copy.") from None
    if as_json:
        print_json(as_json_data(summary))
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


def export_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md or pdf.")] = "md",
    version: Annotated[int | None, typer.Option("--version", "-v")] = None,
) -> None:
    """Export a version to Markdown or PDF."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    path = actions.export(report, output, fmt=fmt, version=version)
    out.print(f"Wrote {path}")


def create_cmd(
    question: Annotated[str, typer.Argument(help="The research question.")],
    title: Annotated[str | None, typer.Option("--title")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    source: Annotated[str, typer.Option("--source", help="sample | corpus:NAME | web.")] = "sample",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Research a new report from scratch and commit version 1 (on PostgreSQL with a
    worker running: the worker does it, this command watches)."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    when = as_of_option(as_of)
    if queued():
        result = create_on_worker(question, title=title, as_of=when, source=source)
    else:
        with out.status("Researching …"):
            result = actions.create(question, title=title, as_of=when, source=source)
    if as_json:
        print_json(as_json_data(result))
        return
    out.print(
        f"Created report {result.report_id} (version {result.version}): "
        f"{result.sections} sections citing {result.sources} sources; "
        f"{result.cost.searches} searches, {result.cost.fetches} fetches."
    )


def rebuild_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    as_of: Annotated[str, typer.Option("--as-of", help="YYYY-MM-DD.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """A from-scratch report for the same question at a date, kept as a separate baseline."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    plan = actions.baseline(report, as_of=as_of_option(as_of))
    if queued():
        result = create_on_worker(plan.question, **plan.options)
    else:
        with out.status("Rebuilding from scratch …"):
            result = actions.rebuild(plan)
    if as_json:
        print_json(as_json_data(result))
        return
    out.print(f"Baseline report {result.report_id} for report {plan.report_id} as of {as_of}.")


def archive_cmd(report: Annotated[str, typer.Argument(help="Report id or exact title.")]) -> None:
    """Hide a report from the list and the update schedule; it is kept whole."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    done = actions.archive(report, actor=actor())
    out.print(f"Archived report {done}; `evergreen unarchive {done}` brings it back.", markup=False)


def unarchive_cmd(report: Annotated[str, typer.Argument(help="Report id or exact title.")]) -> None:
    """Bring an archived report back to the list (and its schedule)."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    done = actions.unarchive(report, actor=actor())
    out.print(f"Report {done} is back in the list.", markup=False)


def delete_cmd(
    report: Annotated[str, typer.Argument(help="Report id or exact title.")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: delete it for good.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Delete a report, its versions, runs and evidence pool for good (needs --yes);
    `evergreen archive` hides a report and keeps it."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    if not yes:
        raise EvergreenError(f"{actions.deletion_warning(report)} Add --yes to confirm.")
    result = actions.delete(report, actor=actor())
    if as_json:
        print_json(as_json_data(result))
        return
    gone = result.deleted
    out.print(
        f"Deleted report {result.report_id}: {gone.versions} versions, {gone.runs} runs, "
        f"{gone.snapshots} snapshots, {gone.sources} sources no other report uses.",
        markup=False,
    )


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
        typer.Option(
            "--max-sections",
            help="Sections a report holds at most (a research writes up to this many; an "
            "update splits a full section only within it).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show a report's settings, or change them: its budget (an update drops the least
    relevant sources and sentences beyond it), τ, writer, schedule, concurrency and
    sections — the same settings, checked by the same rules, as the app's Settings screen."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

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
    shown, problems = actions.settings(report, actor=actor(), **changes)
    for line in problems:
        err.print(f"note: {line}", markup=False)
    if as_json:
        print_json(as_json_data(shown))
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


def demo_cmd(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Load the sample workspace (sample corpus and a sample report), once."""
    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

    with out.status("Loading the sample workspace …"):
        summary = actions.demo()
    if as_json:
        print_json(summary)
        return
    out.print(summary["message"])
