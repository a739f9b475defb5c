"""Display labels: the one home for the words the analyst reads for a stored state.

The database and the code keep short machine values (``awaiting_review``, ``revise``,
``material``); every screen and export shows the label from here instead, so a state
reads the same everywhere. Read models add these next to the raw values (``status`` and
``status_label``) — code keeps comparing the raw value.

Style: run statuses, decisions and change kinds are capitalised adjectives or phrases
("Awaiting review", "Approved", "Material change"); section actions are the past
participle of what the proposal does to the section ("Kept", "Revised", "Extended",
"Added", "Removed"), the same words a committed section's status uses.
"""

from __future__ import annotations

from core.states import (
    Action,
    ChangeKind,
    ClaimState,
    Decision,
    RunKind,
    RunStatus,
    SectionStatus,
)

RUN_STATUS_LABELS: dict[str, str] = {
    RunStatus.RUNNING: "Running",
    RunStatus.CANCELLING: "Cancelling",
    RunStatus.INTERRUPTED: "Interrupted",
    RunStatus.AWAITING_REVIEW: "Awaiting review",
    RunStatus.COMMITTED: "Committed",
    RunStatus.FAILED: "Failed",
    RunStatus.CANCELLED: "Cancelled",
}
RUN_KIND_LABELS: dict[str, str] = {
    RunKind.CREATE: "New report",
    RunKind.UPDATE: "Update",
    RunKind.REBUILD: "Rebuild from scratch",
    RunKind.IMPORT: "Import",
}
ACTION_LABELS: dict[str, str] = {
    Action.KEEP: "Kept",
    Action.REVISE: "Revised",
    Action.EXTEND: "Extended",
    Action.ADD: "Added",
    Action.REMOVE: "Removed",
}
DECISION_LABELS: dict[str, str] = {
    Decision.PENDING: "Pending",
    Decision.APPROVED: "Approved",
    Decision.REJECTED: "Rejected",
}
CHANGE_KIND_LABELS: dict[str, str] = {
    ChangeKind.UNCHANGED: "Unchanged",
    ChangeKind.MINOR: "Minor edit",
    ChangeKind.MATERIAL: "Material change",
    ChangeKind.CHANGED: "Rewritten",
    ChangeKind.GONE: "Gone",
    ChangeKind.NEW: "New",
    ChangeKind.IMPORTED: "Imported",
    ChangeKind.ERROR: "Unreachable",
}
SECTION_STATUS_LABELS: dict[str, str] = {
    SectionStatus.NEW: "New",
    SectionStatus.KEPT: "Kept",
    SectionStatus.REVISED: "Revised",
    SectionStatus.EXTENDED: "Extended",
    SectionStatus.ADDED: "Added",
    "removed": "Removed",  # a section the version left out (shown in diffs, never stored)
}
CLAIM_STATE_LABELS: dict[str, str] = {
    ClaimState.SUPPORTED: "Supported",
    ClaimState.UNSUPPORTED: "Unsupported",
    ClaimState.UNRESOLVED: "Not checked yet",
    ClaimState.STALE: "Stale",
}
#: a report's row status (core.app.services.report_rows) besides the run statuses
REPORT_STATUS_LABELS: dict[str, str] = {
    **RUN_STATUS_LABELS,
    "needs review": "Needs review",
    "new": "New",
}


def _fallback(value: str) -> str:
    """A value no table knows, made readable: "some_state" → "Some state"."""
    words = value.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else ""


def _label(table: dict[str, str], value: object) -> str:
    if value is None:
        return ""
    text = str(value)
    return table.get(text) or _fallback(text)


def run_status_label(status: object) -> str:
    """ "awaiting_review" → "Awaiting review"."""
    return _label(RUN_STATUS_LABELS, status)


def run_kind_label(kind: object) -> str:
    """ "rebuild" → "Rebuild from scratch"."""
    return _label(RUN_KIND_LABELS, kind)


def action_label(action: object) -> str:
    """ "revise" → "Revised"."""
    return _label(ACTION_LABELS, action)


def decision_label(decision: object) -> str:
    """ "pending" → "Pending"."""
    return _label(DECISION_LABELS, decision)


def change_kind_label(kind: object) -> str:
    """ "material" → "Material change"; "error" → "Unreachable"."""
    return _label(CHANGE_KIND_LABELS, kind)


def section_status_label(status: object) -> str:
    """ "extended" → "Extended"."""
    return _label(SECTION_STATUS_LABELS, status)


def claim_state_label(state: object) -> str:
    """ "unresolved" → "Not checked yet"."""
    return _label(CLAIM_STATE_LABELS, state)


def report_status_label(status: object) -> str:
    """A report row's status ("needs review", a run status or "new") as a label."""
    return _label(REPORT_STATUS_LABELS, status)
