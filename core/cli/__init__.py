"""The `evergreen` command: a thin door onto the core (the app is the other one).

Every command turns an EvergreenError into one line on stderr and exit code 1;
JSON output (``--json``) is a stable contract for scripts and cron jobs.

A command does its work through :mod:`core.app.actions` (the layer the app calls too) and
:mod:`core.engine.jobs` (runs on workers), imported when the command runs: loading the core takes
seconds, and ``--help`` or a usage error should not wait for it.
"""

from __future__ import annotations

import click
import typer

from core.cli import bench, corpora, reports, runs
from core.cli.console import app, corpus_app, exit_now, fail, print_failure
from core.engine.run_stops import RunInterrupted, RunStopped
from core.errors import EvergreenError, RunBusyError
from core.states import RunKind

# the commands, in the order ``evergreen --help`` lists them
corpus_app.command("add")(corpora.corpus_add)
corpus_app.command("list")(corpora.corpus_list)
corpus_app.command("search")(corpora.corpus_search)
for name, command in (
    ("list", reports.list_cmd),
    ("show", reports.show_cmd),
    ("import-report", reports.import_report_cmd),
    ("export", reports.export_cmd),
    ("create", reports.create_cmd),
    ("update", runs.update_cmd),
    ("cancel", runs.cancel_cmd),
    ("abandon", runs.abandon_cmd),
    ("review", runs.review_cmd),
    ("rebuild", reports.rebuild_cmd),
    ("archive", reports.archive_cmd),
    ("unarchive", reports.unarchive_cmd),
    ("delete", reports.delete_cmd),
    ("settings", reports.settings_cmd),
    ("demo", reports.demo_cmd),
    ("resume", runs.resume_cmd),
    ("worker", runs.worker_cmd),
    ("bench", bench.bench_cmd),
):
    app.command(name)(command)


def main() -> None:
    """Entry point: run the CLI, turning known failures into one clear line (exit 1);
    Ctrl-C stops the work, marks its run interrupted and exits 130."""
    try:
        code = app(standalone_mode=False)  # typer returns 130 for a KeyboardInterrupt
    except RunBusyError as exc:
        fail(f"{exc} {_next_step(exc)}", 1, "busy")
    except EvergreenError as exc:
        fail(str(exc), 1, _kind(exc))
    except RunInterrupted as exc:
        fail(str(exc), 130, "interrupted")
    except RunStopped as exc:  # cancelled, or taken over by another process
        fail(str(exc), 1, "stopped")
    except (typer.Abort, KeyboardInterrupt):
        fail("Interrupted.", 130, "interrupted")
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:  # usage errors: one line and the usage, never a traceback
        if _usage_error(exc):
            print_failure(exc.format_message(), "usage", exc.exit_code)  # type: ignore[attr-defined]
            exc.show()  # type: ignore[attr-defined]
            raise SystemExit(exc.exit_code) from None  # type: ignore[attr-defined]
        from core.store.db import busy  # loaded already: the command opened the database

        locked = busy(exc)  # SQLite gave up waiting for another command's write
        if locked is not None:
            fail(str(locked), 1, "busy")
        raise
    if isinstance(code, int) and code == 130:
        fail("Interrupted.", code, "interrupted")
    if isinstance(code, int) and code:
        exit_now(code)


def _kind(exc: EvergreenError) -> str:
    """``busy`` for a workspace another command holds (SQLite gave up waiting), else
    ``error``."""
    import sys

    db = sys.modules.get("core.store.db")  # raised there, so loaded: no import for this
    busy = db is not None and isinstance(exc, db.WorkspaceBusyError)
    return "busy" if busy else "error"


def _usage_error(exc: Exception) -> bool:
    """A click usage error — click's own, or the copy of click that newer typer releases
    carry (``typer._click``: not a subclass of click's)."""
    kinds: list[type] = [click.ClickException]
    try:
        # lazy: only newer typer releases carry it
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
