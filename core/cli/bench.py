"""``evergreen bench``: the temporal benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.cli.console import err, out


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

    from core.app import actions  # lazy: the core loads when a command runs (core.cli)

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
