"""Every state vocabulary of Evergreen, one StrEnum each.

A member *is* its string (``RunStatus.AWAITING_REVIEW == "awaiting_review"``), so the
database stores the same plain text it always has (portable across SQLite and
PostgreSQL, readable in a SQL shell), JSON dumps it as that text, and rows written before
these types existed read back as members. The database refuses any other value: each
column carries a CHECK constraint listing its vocabulary (migration 0008), so a typo in
code fails at the write, not in a screen weeks later.

Adding a value means adding it here *and* a migration that widens the column's CHECK.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """Where an update run is. ``interrupted``: its worker stopped before it finished (or
    died: a ``running`` run with no live worker reads as interrupted,
    core.engine.run_liveness.run_state); it still holds the report until it is resumed or
    cancelled."""

    RUNNING = "running"
    CANCELLING = "cancelling"
    INTERRUPTED = "interrupted"
    AWAITING_REVIEW = "awaiting_review"
    COMMITTED = "committed"
    FAILED = "failed"
    CANCELLED = "cancelled"


#: a run in one of these holds its report: no second run may start (a partial unique index)
OPEN_RUN_STATUSES: tuple[RunStatus, ...] = (
    RunStatus.RUNNING,
    RunStatus.CANCELLING,
    RunStatus.INTERRUPTED,
    RunStatus.AWAITING_REVIEW,
)
#: a run in one of these will never change again
FINISHED_RUN_STATUSES: tuple[RunStatus, ...] = (
    RunStatus.COMMITTED,
    RunStatus.FAILED,
    RunStatus.CANCELLED,
)


class RunKind(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    REBUILD = "rebuild"
    IMPORT = "import"


class Action(StrEnum):
    """What a run proposes for one section."""

    KEEP = "keep"
    REVISE = "revise"
    EXTEND = "extend"
    ADD = "add"
    REMOVE = "remove"


class Decision(StrEnum):
    """The analyst's word on one proposal."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class ChangeKind(StrEnum):
    """How a source changed since the snapshot before it (core.domain.changes.classify_change).

    ``imported``: a reference read from an analyst's report, not fetched yet; ``gone``:
    the page no longer exists; ``error``: it could not be read this time (its text is kept
    and flagged; never the kind of a stored snapshot)."""

    NEW = "new"
    UNCHANGED = "unchanged"
    MINOR = "minor"
    MATERIAL = "material"
    CHANGED = "changed"
    GONE = "gone"
    IMPORTED = "imported"
    ERROR = "error"


#: the kinds a stored snapshot can have
SNAPSHOT_KINDS: tuple[ChangeKind, ...] = tuple(k for k in ChangeKind if k is not ChangeKind.ERROR)
#: the kinds whose text a claim rested on changed (its claims are checked again)
TEXT_CHANGES: frozenset[ChangeKind] = frozenset(
    {ChangeKind.CHANGED, ChangeKind.MATERIAL, ChangeKind.GONE}
)


class SectionStatus(StrEnum):
    """A committed section relative to the version before it."""

    NEW = "new"
    KEPT = "kept"
    REVISED = "revised"
    EXTENDED = "extended"
    ADDED = "added"


class ClaimState(StrEnum):
    """A cited sentence of a committed section against the snapshot it cites.

    supported: anchored in the cited snapshot; unsupported: no passage of it says this;
    unresolved: the cited snapshot has no text yet; stale: a newer snapshot no longer says
    this and the sentence was not revised (the claim keeps citing the older snapshot)."""

    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    UNRESOLVED = "unresolved"
    STALE = "stale"


class CheckOutcome(StrEnum):
    """What one look at a source found (core.engine.checks). fetched: the page was read;
    not_modified: the server answered 304 to a conditional request (no body); gone: the
    page no longer exists; error: it could not be read."""

    FETCHED = "fetched"
    NOT_MODIFIED = "not_modified"
    GONE = "gone"
    ERROR = "error"


class AnchorOutcome(StrEnum):
    """What became of one passage a claim rests on, in a newer text (core.domain.relocate)."""

    INTACT = "intact"
    MOVED = "moved"
    REWORDED = "reworded"
    EDITED = "edited"
    GONE = "gone"


#: outcomes after which the claim still holds (its sentence may stay as it is)
HOLDING_OUTCOMES: frozenset[AnchorOutcome] = frozenset(
    {AnchorOutcome.INTACT, AnchorOutcome.MOVED, AnchorOutcome.REWORDED}
)


class ClaimOutcome(StrEnum):
    """What a refresh found for one claim (core.engine.claims): its passages' fate (an
    AnchorOutcome, the worst of them); for a claim that had no support, ``anchored`` (the
    newer text supports it) or ``unsupported`` (still not); ``unchecked`` when its source
    could not be read this time."""

    INTACT = "intact"
    MOVED = "moved"
    REWORDED = "reworded"
    EDITED = "edited"
    GONE = "gone"
    ANCHORED = "anchored"
    UNSUPPORTED = "unsupported"
    UNCHECKED = "unchecked"


#: outcomes after which a claim's sentence must be revised (or it goes stale)
BROKEN_OUTCOMES: frozenset[ClaimOutcome] = frozenset({ClaimOutcome.EDITED, ClaimOutcome.GONE})
