"""What every ``evergreen`` command shares: the Typer apps, the two consoles, the global
``--db`` option, JSON printing and the ``--as-of`` option's reading."""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from core import config
from core.dates import parse_as_of
from core.domain.validation import check_as_of

if TYPE_CHECKING:
    from core.engine.audit import Actor

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
    as_name: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Who is acting, for the audit trail (default: the OS user).",
            metavar="NAME",
        ),
    ] = None,
) -> None:
    # the choice holds while the command runs (its run threads included), then is undone;
    # the environment is not touched, so nothing leaks into a process started later
    ctx.with_resource(config.overriding(config.ENV_DB, db))
    _acting.append(as_name)
    ctx.call_on_close(_acting.pop)


_acting: list[str | None] = []  # the --as of the command running (a stack: tests nest none)


def actor() -> Actor:
    """Who the running command acts as: ``--as NAME``, else the operating-system user."""
    from core.engine.audit import cli_actor  # lazy: the core loads when a command runs

    return cli_actor(_acting[-1] if _acting else None)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def as_of_option(value: str | None) -> datetime | None:
    """An --as-of option: None for now; a date after today is refused."""
    return check_as_of(parse_as_of(value)) if value else None


def wants_json() -> bool:
    """Was the command asked for ``--json`` (its result, or its failure, as JSON)?"""
    return "--json" in sys.argv[1:]


def print_failure(message: str, kind: str, code: int) -> None:
    """With ``--json``, the failure as a JSON object on stdout (``Failed``); else nothing."""
    if wants_json():
        from core.app.cli_results import Failed, as_json_data

        print_json(as_json_data(Failed(error=message, kind=kind, exit_code=code)))


def fail(message: str, code: int, kind: str = "error") -> NoReturn:
    """One line on stderr, printed as text: brackets such as [1] are not console markup.
    With ``--json``, also the failure as a JSON object on stdout (``Failed``: the message,
    its ``kind`` and the exit code), so a script reads one object either way."""
    print_failure(message, kind, code)
    prefix = "[red]Error:[/] " if code == 1 else ""
    err.print(prefix + escape(message), highlight=False)
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """Exit now. After Ctrl-C, worker threads still blocked on a fetch or a model call
    are abandoned instead of being waited for at interpreter exit."""
    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if code == 130 and busy:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)
