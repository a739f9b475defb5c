"""The analyst's actions, one function each: the one layer under both doors.

The app's buttons and the ``evergreen`` commands call these, so an action means the same
thing — the same checks, the same messages, the same result — whichever door it came
through. Each action opens and ends its own transaction (a refusal leaves nothing
half-written) and returns a typed result: the models of :mod:`core.app.cli_results`, whose
JSON form is the CLI's ``--json`` output, or a small dataclass for what only the app
shows. The doors keep only their own concerns: widgets and flash messages, options and
printed lines.

Runs that take long are started through :mod:`core.engine.jobs`, which does them here or hands
them to a worker (``start_update``, ``start_create``, ``submit_create``, ``resume``) and
stops them (``cancel``, ``abandon``); the actions below are the "do it now and give me
the result" forms of create, rebuild, update and resume.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm.exc import StaleDataError

from core.app.cli_results import Created, Deleted, Imported, Reviewed, SettingsShown, Updated
from core.app.report_deletion import delete_report, deletion_message, deletion_preview
from core.app.services import report_rows
from core.domain.report_settings import WRITERS, ReportSettings, writer_name
from core.engine.audit import APP_USER, Actor, record
from core.engine.creation import create_report, create_result
from core.engine.review import Seen, commit_run, decide, get_run, proposals_of, run_result
from core.engine.schedule import save_report_settings
from core.engine.update import resume_run, update_report
from core.errors import EvergreenError
from core.sources.registry import check_source
from core.states import Decision, RunStatus
from core.store.db import session_scope
from core.store.report_archive import archive_report, archived_report_ids, unarchive_report
from core.store.repository import get_report

if TYPE_CHECKING:
    from core.bench.runner import BenchConfig
    from core.bench.truth import QuerySpec

# The importer, the exports, the sample and the benchmark are imported by the actions that
# use them: every command loads this module, and they cost it 0.8 s of its 1.4 s
# (``python -X importtime -c "import core.app.actions"``, issue 42).

ReportRef = int | str  # a report's id, or its exact title


# -- making a report -----------------------------------------------------------------------
def import_markdown(
    text: str,
    *,
    query: str,
    as_of: datetime | None,
    source: str,
    default_title: str,
    allow_duplicate: bool = False,
) -> Imported:
    """Version 1 of a new report from a Markdown report written elsewhere. A file
    imported before is refused (``DuplicateImportError``) unless ``allow_duplicate``."""
    from core.app.importer import import_report

    source = check_source(source)
    with session_scope() as session:
        _report, summary = import_report(
            session,
            text,
            query=query,
            as_of=as_of,
            source=source,
            default_title=default_title,
            refuse_duplicate=not allow_duplicate,
        )
    return Imported.model_validate(summary)


def title_from_file_name(name: str) -> str:
    """A report title from an imported file's name: its stem, ``-`` and ``_`` as spaces."""
    return Path(name).stem.replace("-", " ").replace("_", " ").strip()


def create(
    question: str, *, title: str | None = None, as_of: datetime | None = None, source: str
) -> Created:
    """Research a new report from scratch here and commit its version 1."""
    return Created.model_validate(create_report(question, title=title, as_of=as_of, source=source))


def created(run_id: int) -> Created:
    """A create (or rebuild) run's result, read back once it ended (on a worker)."""
    return Created.model_validate(create_result(run_id))


@dataclass(frozen=True)
class Baseline:
    """What a from-scratch rebuild of a report researches: its question, and the options
    of the baseline report it makes (``create_report``'s or ``jobs.submit_create``'s)."""

    report_id: int
    question: str
    options: dict[str, Any]


def baseline(report: ReportRef, *, as_of: datetime | None) -> Baseline:
    """A rebuild's plan, read before the long work starts: the same question, source and
    settings as ``report``, as a separate baseline report."""
    with session_scope() as session:
        original = get_report(session, report)
        return Baseline(
            report_id=int(original.id or 0),
            question=original.query,
            options={
                "title": f"Baseline of {original.title}",
                "as_of": as_of,
                "source": original.source,
                "settings": dict(original.settings or {}),
                "baseline_of": original.id,
            },
        )


def rebuild(plan: Baseline) -> Created:
    """Do a rebuild here (``baseline`` plans it): the report itself is not changed."""
    return Created.model_validate(create_report(plan.question, **plan.options))


# -- updating ---------------------------------------------------------------------------
def update(
    report: ReportRef,
    *,
    as_of: datetime | None = None,
    approve_all: bool = False,
    force_recheck: bool = False,
    actor: Actor = APP_USER,
) -> Updated:
    """An update run done here; it awaits review unless ``approve_all`` committed it (in
    ``actor``'s name)."""
    return Updated.model_validate(
        update_report(
            report,
            as_of=as_of,
            approve_all=approve_all,
            force_recheck=force_recheck,
            actor=actor,
        )
    )


def resume(run_id: int, *, approve_all: bool = False) -> Updated:
    """Continue an interrupted update here, reusing what it already fetched and wrote."""
    return Updated.model_validate(resume_run(run_id, approve_all=approve_all))


def outcome(run_id: int) -> Updated:
    """An update run's result, read back once it ended (on a worker): a run that failed
    or was cancelled is an error saying why, as a run done here is."""
    with session_scope() as session:
        run = get_run(session, run_id)
        if run.status in (RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED):
            raise EvergreenError(run.error or f"Run {run_id} is {run.status}.")
        return Updated.model_validate(run_result(session, run_id))


# -- review ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Decided:
    """A decision taken: how many proposals were pending before it and after it."""

    pending_before: int
    pending_after: int


def decide_on(
    run_id: int,
    *,
    approve: Iterable[str] = (),
    reject: Iterable[str] = (),
    approve_all: bool = False,
    edits: dict[str, str] | None = None,
    seen: Mapping[str, Seen] | None = None,
    actor: Actor = APP_USER,
) -> Decided:
    """Approve, reject or edit proposals of a run awaiting review; ``seen``: each
    section's state as the view showed it (a changed one refuses the decision)."""
    with _review(run_id) as session:
        before = sum(p.decision == Decision.PENDING for p in proposals_of(session, run_id))
        proposals = decide(
            session,
            get_run(session, run_id),
            approve=approve,
            reject=reject,
            approve_all=approve_all,
            edits=edits,
            seen=seen,
            actor=actor,
        )
        after = sum(p.decision == Decision.PENDING for p in proposals)
    return Decided(before, after)


def commit(run_id: int, *, seen: Mapping[str, Seen] | None = None, actor: Actor = APP_USER) -> int:
    """Commit a decided run as the report's next version; returns its number. ``seen``:
    the decisions as the view showed them (changed since: refused)."""
    with _review(run_id) as session:
        run = get_run(session, run_id)
        return int(commit_run(session, run, seen=seen, actor=actor).number)


def review(
    run_id: int,
    *,
    approve: Iterable[str] = (),
    reject: Iterable[str] = (),
    approve_all: bool = False,
    commit: bool = False,
    actor: Actor = APP_USER,
) -> Reviewed:
    """Decisions and, with ``commit``, the commit, in one transaction; then the run and
    each section's proposal (``evergreen review``)."""
    with _review(run_id) as session:
        run = get_run(session, run_id)
        decide(session, run, approve=approve, reject=reject, approve_all=approve_all, actor=actor)
        if commit:
            commit_run(session, run, actor=actor)
    with session_scope() as session:
        result = run_result(session, run_id)
        result["proposals"] = [
            {
                "key": p.key,
                "heading": p.heading,
                "action": p.action,
                "decision": p.decision,
                "rationale": p.rationale,
            }
            for p in proposals_of(session, run_id)
        ]
    return Reviewed.model_validate(result)


@contextmanager
def _review(run_id: int) -> Iterator[Any]:
    """A review transaction. If the run's status moved on meanwhile (a cancel in another
    tab or process won the compare-and-set), nothing was written: say what happened."""
    try:
        with session_scope() as session:
            yield session
    except StaleDataError:
        with session_scope() as session:
            status = get_run(session, run_id).status
        raise EvergreenError(
            f"Run {run_id} was {status} by another process while it was being reviewed; "
            "nothing was committed."
            if status == RunStatus.CANCELLED
            else f"Run {run_id} is {status} now (it changed while it was being reviewed); "
            "nothing was committed."
        ) from None


# -- reading reports ---------------------------------------------------------------------
def report_list(*, include_archived: bool = False) -> list[dict[str, Any]]:
    """The tracked reports with their current version; archived ones (their status then
    ``archived``) only with ``include_archived``."""
    with session_scope() as session:
        rows = report_rows(session)
        hidden = archived_report_ids(session)
    return [
        {**r, "status": "archived"} if r["id"] in hidden else r
        for r in rows
        if include_archived or r["id"] not in hidden
    ]


def markdown(report: ReportRef, version: int | None = None) -> str:
    """A version of a report (default: the current one) as Markdown, with its version line."""
    from core.app.export import version_markdown

    with session_scope() as session:
        return version_markdown(
            session, get_report(session, report), version, with_version_line=True
        )


# -- keeping reports ---------------------------------------------------------------------
def archive(report: ReportRef, *, actor: Actor = APP_USER) -> int:
    """Hide a report from the list and the schedule; it is kept whole. Returns its id."""
    with session_scope() as session:
        report_id = int(archive_report(session, get_report(session, report)).id or 0)
        record(session, actor, "archive", report_id=report_id)
        return report_id


def unarchive(report: ReportRef, *, actor: Actor = APP_USER) -> int:
    """Bring an archived report back to the list (and its schedule). Returns its id."""
    with session_scope() as session:
        report_id = int(unarchive_report(session, get_report(session, report)).id or 0)
        record(session, actor, "unarchive", report_id=report_id)
        return report_id


def deletion_warning(report: ReportRef) -> str:
    """One sentence saying what deleting the report would remove (nothing is deleted)."""
    with session_scope() as session:
        target = get_report(session, report)
        return deletion_message(target, deletion_preview(session, target))


def delete(report: ReportRef, *, actor: Actor = APP_USER) -> Deleted:
    """Delete a report, its versions, runs, pool and baselines for good; the audit trail
    keeps who deleted it, when, and its title."""
    with session_scope() as session:
        target = get_report(session, report)
        report_id, title = int(target.id or 0), target.title
        deleted = delete_report(session, target)
        record(session, actor, "delete", report_id=report_id, title=title, deleted=deleted)
        return Deleted(report_id=report_id, deleted=deleted)


def settings(
    report: ReportRef, *, actor: Actor = APP_USER, **changes: Any
) -> tuple[SettingsShown, list[str]]:
    """A report's settings, after saving ``changes`` if any are given (the arguments of
    ``save_report_settings``; a left-out one keeps its value). Returns the settings
    shown and, when only reading, the notes on stored values that were invalid."""
    problems: list[str] = []
    with session_scope() as session:
        target = get_report(session, report)
        if changes:
            before = dict(target.settings or {})
            cfg = save_report_settings(session, target, **changes)
            after = dict(target.settings or {})
            changed = {k: after.get(k) for k in after if after.get(k) != before.get(k)}
            record(session, actor, "settings", report_id=int(target.id or 0), changed=changed)
        else:
            cfg, problems = ReportSettings.salvage(target.settings)
        shown = cfg.model_dump(include=set(SettingsShown.model_fields))
        return SettingsShown(report_id=int(target.id or 0), **shown), problems


def export(report: ReportRef, output: Path, *, fmt: str = "md", version: int | None = None) -> Path:
    """Write a version of a report to a Markdown or PDF file; returns its path."""
    from core.app.export import export_version

    with session_scope() as session:
        return export_version(session, get_report(session, report), output, fmt=fmt, number=version)


def demo() -> dict[str, Any]:
    """Load the sample workspace (sample corpus and a sample report), once."""
    from core.workspace import load_sample

    with session_scope() as session:
        return load_sample(session)


# -- the temporal benchmark ----------------------------------------------------------------
@dataclass(frozen=True)
class BenchPlan:
    """A benchmark checked and ready to run: its questions, its configuration, how many
    steps it takes (for a progress bar) and notes on what was asked but does not fit."""

    specs: list[QuerySpec]
    config: BenchConfig
    steps: int
    notes: list[str]


def plan_bench(
    *,
    corpus: str,
    queries: Path,
    out: Path,
    year_from: int = 2016,
    year_to: int = 2025,
    task: str = "both",
    intervals: Iterable[int] = (1,),
    writer: str = "offline",
    workers: int = 2,
    resume: bool = False,
    judge: bool = False,
    key_share: float = 0.9,
) -> BenchPlan:
    """Check a benchmark's options (one clear message for a wrong one) and plan it: the
    questions of ``queries`` (bare ids resolved in ``corpus``) over each year of the range."""
    from core.bench.runner import BenchConfig, planned_steps
    from core.bench.truth import load_queries
    from core.sources.corpus import Corpus

    if task not in ("sst", "lct", "both"):
        raise EvergreenError(f"Unknown task {task!r}: choose sst, lct or both.")
    chosen = writer_name(writer)  # the same names as everywhere (llm: openai's old name)
    if chosen is None:
        raise EvergreenError(f"--writer needs a writer: {' or '.join(WRITERS)}.")
    if judge and chosen != "openai":
        raise EvergreenError("--judge needs --writer openai (the judge is a language model).")
    if not 1900 < year_from < year_to < 2200:
        raise EvergreenError(f"Invalid year range {year_from}–{year_to}: --from must be < --to.")
    index = Corpus.open(corpus)
    try:
        specs = load_queries(queries, index)
    finally:
        index.close()
    years = list(range(year_from, year_to + 1))
    asked = set(intervals) or {1}
    gaps = sorted({g for g in asked if 0 < g < len(years)} | {1})
    notes = [
        f"no {g}-year gap fits in {year_from}–{year_to} (it needs both t and t−{g} in range); "
        "skipped."
        for g in sorted(asked - set(gaps))
    ]
    config = BenchConfig(
        corpus=corpus,
        queries_file=str(queries),
        years=years,
        tasks=["sst", "lct"] if task == "both" else [task],
        intervals=gaps,
        writer=chosen,
        out=str(out),
        resume=resume,
        workers=workers,
        judge=judge,
        key_share=key_share,
    )
    return BenchPlan(specs, config, planned_steps(config) * len(specs), notes)


def bench(plan: BenchPlan, on_step: Callable[[], None] | None = None) -> str:
    """Run a planned benchmark and write its results (results.json, table.md,
    charts.html) into its output folder; returns the one-line summary."""
    from core.bench.output import write_outputs
    from core.bench.runner import run_bench

    records = run_bench(plan.specs, plan.config, on_step=on_step)
    return write_outputs(Path(plan.config.out), records, asdict(plan.config))
