"""The tables: a report is a chain of immutable versions over a shared evidence pool.

Data flows one way: sources → snapshots (the evidence pool) → writers →
section proposals (one update run) → review → a new committed ReportVersion.
Instants are timezone-aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, CheckConstraint, Column, Index, Text, UniqueConstraint, text
from sqlalchemy.orm import declared_attr
from sqlalchemy.types import TypeDecorator
from sqlmodel import AutoString, Field, SQLModel

from core.dates import utcnow
from core.errors import EvergreenError
from core.states import (
    OPEN_RUN_STATUSES,
    SNAPSHOT_KINDS,
    Action,
    ChangeKind,
    CheckOutcome,
    ClaimState,
    Decision,
    RunKind,
    RunStatus,
    SectionStatus,
)

# Every state is a StrEnum of core.states, stored as its plain text (portable across
# SQLite and PostgreSQL); the database refuses any other value (CHECK constraints,
# migration 0008) and rows read back as members.
RUN_STATUSES = tuple(RunStatus)
RUN_KINDS = tuple(RunKind)
ACTIONS = tuple(Action)
DECISIONS = tuple(Decision)
CHANGE_KINDS = SNAPSHOT_KINDS
SECTION_STATUSES = tuple(SectionStatus)
CHECK_OUTCOMES = tuple(CheckOutcome)
CLAIM_STATES = tuple(ClaimState)


class Vocabulary(TypeDecorator[StrEnum]):
    """A column holding one StrEnum's values as text: members are written as their
    string, a value outside the vocabulary is refused before it reaches the database,
    and what is read comes back as a member."""

    impl = AutoString
    cache_ok = True

    def __init__(self, vocabulary: type[StrEnum]) -> None:
        super().__init__()
        self.vocabulary = vocabulary

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        if value is None:
            return None
        try:
            return str(self.vocabulary(value))
        except ValueError:
            allowed = ", ".join(self.vocabulary)
            raise EvergreenError(
                f"{value!r} is not a {self.vocabulary.__name__} (one of {allowed})."
            ) from None

    def process_result_value(self, value: Any, dialect: Any) -> StrEnum | None:
        return None if value is None else self.vocabulary(value)


def one_of(column: str, values: Iterable[str], name: str) -> CheckConstraint:
    """The CHECK constraint keeping ``column`` inside its vocabulary."""
    listed = ", ".join(f"'{v}'" for v in values)
    return CheckConstraint(f"{column} IN ({listed})", name=name)


class Report(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    title: str
    query: str = Field(sa_column=Column(Text, nullable=False))
    source: str = "sample"  # sample | corpus:NAME | web | none
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    baseline_of: int | None = Field(default=None, foreign_key="report.id", index=True)
    next_marker: int = 1  # citation markers are stable per source within a report
    created_at: datetime = Field(default_factory=utcnow)
    # when the analyst archived it: hidden from the Reports list, never updated by the
    # schedule, kept whole (None: an active report)
    archived_at: datetime | None = None


class ReportVersion(SQLModel, table=True):
    """A committed state of a report. Never updated or deleted once written."""

    __table_args__ = (UniqueConstraint("report_id", "number"),)
    id: int | None = Field(default=None, primary_key=True)
    report_id: int = Field(foreign_key="report.id", index=True)
    number: int
    as_of: datetime
    parent_id: int | None = Field(default=None, foreign_key="reportversion.id")
    run_id: int | None = None  # the UpdateRun that produced it (no FK: runs point at versions)
    title: str
    created_at: datetime = Field(default_factory=utcnow)
    metrics: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    stale_citations: int = 0
    committed_by: str | None = None  # who committed it (None: made by the engine, or before)


class Section(SQLModel, table=True):
    __table_args__ = (
        Index("ix_section_version_order", "version_id", "order"),
        one_of("status", SectionStatus, "ck_section_status"),
    )
    id: int | None = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="reportversion.id")
    key: str  # stable across versions
    heading: str
    level: int
    order: int
    body: str = Field(sa_column=Column(Text, nullable=False))
    # relative to the parent version
    status: SectionStatus = Field(default=SectionStatus.NEW, sa_type=Vocabulary(SectionStatus))


class Source(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    url: str = Field(sa_column=Column(Text, nullable=False, unique=True))
    title: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class Snapshot(SQLModel, table=True):
    """What a source said when fetched (as of a date). Content may be absent for
    a reference imported from someone's report and not yet fetched."""

    __table_args__ = (
        Index("ix_snapshot_source_asof", "source_id", "as_of"),
        one_of("change_kind", SNAPSHOT_KINDS, "ck_snapshot_change_kind"),
    )
    id: int | None = Field(default=None, primary_key=True)
    source_id: int = Field(foreign_key="source.id")
    title: str = ""
    content: str | None = Field(default=None, sa_column=Column(Text))
    content_hash: str | None = None
    fetched_at: datetime = Field(default_factory=utcnow)
    as_of: datetime | None = None  # the "as of" the fetch asked for
    published: datetime | None = None  # when this content became valid, if known
    previous_id: int | None = Field(default=None, foreign_key="snapshot.id")
    # vs previous_id
    change_kind: ChangeKind = Field(default=ChangeKind.NEW, sa_type=Vocabulary(ChangeKind))
    similarity: float | None = None
    claim_diff: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    reasons: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    run_id: int | None = Field(default=None, foreign_key="updaterun.id")
    # what the source said about the page besides its text (a corpus record's fields, e.g.
    # status): key facts are read from it as well as from the text
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))


class PoolEntry(SQLModel, table=True):
    """A source in one report's evidence pool, with its stable citation marker."""

    __table_args__ = (
        UniqueConstraint("report_id", "source_id"),
        one_of("status", ChangeKind, "ck_poolentry_status"),
    )
    id: int | None = Field(default=None, primary_key=True)
    report_id: int = Field(foreign_key="report.id", index=True)
    source_id: int = Field(foreign_key="source.id")
    marker: int
    latest_snapshot_id: int | None = Field(default=None, foreign_key="snapshot.id")
    last_checked: datetime | None = None
    # the last change kind seen
    status: ChangeKind = Field(default=ChangeKind.NEW, sa_type=Vocabulary(ChangeKind))


class SourceCheck(SQLModel, table=True):
    """One look at a source, shared by every report that cites it (core.engine.checks): a corpus
    page is looked at once per as-of, a web page once per freshness window. It names the
    snapshot holding the text it saw, and the validators a conditional re-check sends."""

    __table_args__ = (
        Index("ix_sourcecheck_source", "source_id", "provider", "checked_at"),
        one_of("outcome", CheckOutcome, "ck_sourcecheck_outcome"),
    )
    id: int | None = Field(default=None, primary_key=True)
    source_id: int = Field(foreign_key="source.id")
    provider: str  # the fetcher (and its revision: a corpus re-imported is another one)
    as_of: datetime | None = None  # the instant asked for
    checked_at: datetime = Field(default_factory=utcnow)
    outcome: CheckOutcome = Field(sa_type=Vocabulary(CheckOutcome))
    snapshot_id: int | None = Field(default=None, foreign_key="snapshot.id")
    etag: str | None = None
    last_modified: str | None = None
    bytes: int = 0  # body bytes transferred (0 for a 304 or a page read from the pool)
    run_id: int | None = Field(default=None, foreign_key="updaterun.id")
    error: str | None = Field(default=None, sa_column=Column(Text))


class CheckUse(SQLModel, table=True):
    """A report served by a check: the run that made it, and every run that reused it."""

    id: int | None = Field(default=None, primary_key=True)
    check_id: int = Field(foreign_key="sourcecheck.id", index=True)
    report_id: int = Field(foreign_key="report.id", index=True)
    run_id: int | None = Field(default=None, foreign_key="updaterun.id")
    used_at: datetime = Field(default_factory=utcnow)


class Citation(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id", index=True)
    snapshot_id: int = Field(foreign_key="snapshot.id")
    marker: int


class Claim(SQLModel, table=True):
    """One cited sentence of a committed section, anchored to the passages of the snapshot
    that support it (W3C TextQuoteSelectors). Immutable, like its section."""

    __table_args__ = (
        Index("ix_claim_section", "section_id", "position"),
        one_of("state", ClaimState, "ck_claim_state"),
    )
    id: int | None = Field(default=None, primary_key=True)
    section_id: int = Field(foreign_key="section.id")
    position: int  # the sentence's order in the section
    sentence: str = Field(sa_column=Column(Text, nullable=False))
    marker: int
    snapshot_id: int | None = Field(default=None, foreign_key="snapshot.id")
    selectors: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    state: ClaimState = Field(default=ClaimState.SUPPORTED, sa_type=Vocabulary(ClaimState))
    score: float = 0.0
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))


OPEN_RUN_WHERE = "status IN (" + ", ".join(f"'{s}'" for s in OPEN_RUN_STATUSES) + ")"


class UpdateRun(SQLModel, table=True):
    """One create / update / rebuild / import. At most one open run per report, enforced
    by a partial unique index (migrations 0002, 0005).

    Every change of a run through the ORM is a compare-and-set on its status: the UPDATE's
    WHERE names the status the row was read with, and a row that moved on meanwhile (a
    cancel, a commit, a take-over) fails the flush with StaleDataError instead of being
    overwritten. ``lease`` counts take-overs: a worker's writes name the lease it holds
    (core.engine.runs), so a process that lost the run cannot write to it."""

    __table_args__ = (
        Index(
            "ux_updaterun_one_open_per_report",
            "report_id",
            unique=True,
            sqlite_where=text(OPEN_RUN_WHERE),
            postgresql_where=text(OPEN_RUN_WHERE),
        ),
        one_of("status", RunStatus, "ck_updaterun_status"),
        one_of("kind", RunKind, "ck_updaterun_kind"),
    )

    @declared_attr  # type: ignore[misc]
    def __mapper_args__(cls) -> dict[str, Any]:  # noqa: N805 - SQLAlchemy's declared_attr
        return {"version_id_col": cls.__table__.c.status, "version_id_generator": False}

    id: int | None = Field(default=None, primary_key=True)
    report_id: int = Field(foreign_key="report.id", index=True)
    kind: RunKind = Field(sa_type=Vocabulary(RunKind))
    as_of: datetime
    status: RunStatus = Field(default=RunStatus.RUNNING, sa_type=Vocabulary(RunStatus))
    error: str | None = Field(default=None, sa_column=Column(Text))
    base_version_id: int | None = Field(default=None, foreign_key="reportversion.id")
    version_id: int | None = Field(default=None, foreign_key="reportversion.id")
    progress: str = ""
    summary: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    timings: dict[str, float] = Field(default_factory=dict, sa_column=Column(JSON))
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None  # last checkpoint of the process doing the work
    worker: str | None = None  # host:pid of that process
    lease: int = 0  # bumped by every take-over (resume); fences the previous worker out


class SectionProposal(SQLModel, table=True):
    """One section's proposed change in a run; a run proposes each section once."""

    __table_args__ = (
        Index("ux_sectionproposal_run_key", "run_id", "key", unique=True),
        one_of("action", Action, "ck_sectionproposal_action"),
        one_of("decision", Decision, "ck_sectionproposal_decision"),
    )
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="updaterun.id", index=True)
    key: str
    action: Action = Field(sa_type=Vocabulary(Action))
    heading: str
    level: int
    order: int
    old_text: str | None = Field(default=None, sa_column=Column(Text))
    new_text: str | None = Field(default=None, sa_column=Column(Text))
    rationale: str = Field(default="", sa_column=Column(Text))
    evidence: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    citations: dict[str, int] = Field(default_factory=dict, sa_column=Column(JSON))
    decision: Decision = Field(default=Decision.PENDING, sa_type=Vocabulary(Decision))
    analyst_text: str | None = Field(default=None, sa_column=Column(Text))
    # the last decision or edit: when, through which door ("app", "cli"), and by whom
    decided_at: datetime | None = None
    decided_via: str | None = None
    decided_by: str | None = None
    flags: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    # each claim of old_text re-checked against the newest snapshots (core.engine.claims)
    claims: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    # what the writer says each new sentence quotes: [{sentence, marker, quote}]
    quotes: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))


class CostCounts(SQLModel):
    """What a step cost: the counters a CostEvent stores and the cost meter adds up."""

    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    searches: int = 0
    fetches: int = 0  # page bodies requested
    bytes: int = 0
    not_modified: int = 0  # conditional re-checks answered 304 (no body)
    shared_checks: int = 0  # sources served by another run's check (no request)
    seconds: float = 0.0
    usd: float = 0.0


class CostEvent(CostCounts, table=True):
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="updaterun.id", index=True)
    stage: str
    provider: str = ""
    model: str = ""
    prompt: str = ""  # prompt template and version, e.g. write_section@1
    created_at: datetime = Field(default_factory=utcnow)


class AuditEvent(SQLModel, table=True):
    """Who did what to a report, and when: a decision, an edit, a commit, an archive, a
    delete or a settings change. Appended, never changed; it outlives a deleted report
    (no foreign keys: ``detail`` names what the ids pointed at)."""

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow)
    actor: str  # the signed-in user, ``--as NAME`` or the OS user, "scheduler"
    via: str  # the door: "app", "cli", "worker"
    action: str  # approve | reject | edit | commit | archive | unarchive | delete | settings
    report_id: int | None = Field(default=None, index=True)
    run_id: int | None = None
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
