"""``evergreen corpus``: local temporal document corpora — import, list, search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from core.cli.console import err, out, print_json
from core.dates import iso, parse_as_of


def corpus_add(
    name: Annotated[str, typer.Argument(help="Name for the corpus, e.g. peps.")],
    path: Annotated[Path, typer.Argument(help="A .jsonl / .jsonl.gz file or a folder.")],
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="Skip bad records instead of aborting.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Import page versions into a corpus (re-importing the same data changes nothing)."""
    # lazy: the core loads when a command runs (core.cli)
    from core.sources.corpus import add_corpus

    with out.status(f"Importing {path} …"):
        result = add_corpus(name, path, skip_bad=skip_bad)
    if as_json:
        print_json(result.as_dict())
        return
    out.print(
        f"Corpus [bold]{name}[/]: read {result.read} records — {result.inserted} new, "
        f"{result.updated} updated, {result.unchanged} unchanged."
    )
    for line in result.skipped[:20]:
        err.print(f"skipped {line}", markup=False)
    if len(result.skipped) > 20:
        err.print(f"… and {len(result.skipped) - 20} more skipped")


def corpus_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The corpora in this workspace."""
    # lazy: the core loads when a command runs (core.cli)
    from core.sources.corpus import list_corpora

    rows = list_corpora()
    if as_json:
        print_json(rows)
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


def corpus_search(
    name: str,
    query: str,
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default now).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only pages updated after.")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 10,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Search a corpus as it stood at a date."""
    from core.sources.corpus import Corpus  # lazy: the core loads when a command runs (core.cli)

    corpus = Corpus.open(name)
    hits = corpus.search(
        query,
        max_results=limit,
        end_date=parse_as_of(as_of) if as_of else None,
        start_date=parse_as_of(since) if since else None,
    )
    if as_json:
        print_json(
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
