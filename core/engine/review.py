"""Review: decisions on a run's proposals, then the commit of a new version.

Approved revisions (or the analyst's edit of them) replace the old text; a
rejected revision keeps the old text; every citation points at the newest
snapshot of its source. The commit is one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlmodel import Session, col, select

from core import faults
from core.dates import utcnow
from core.domain.metrics import continuity
from core.domain.report_state import SectionDoc
from core.engine.audit import APP_USER, Actor, record
from core.engine.claims import plan_commit
from core.engine.costs import run_cost
from core.engine.runs import set_status
from core.engine.version_commit import SectionDraft, commit_version
from core.errors import EvergreenError, NotFoundError, StaleViewError
from core.states import Action, Decision, RunStatus, SectionStatus
from core.store.models import Report, ReportVersion, SectionProposal, Snapshot, UpdateRun
from core.store.pool import pool_snapshots
from core.store.repository import get_version, load_doc, outline_of

STATUS_FOR = {
    Action.KEEP: SectionStatus.KEPT,
    Action.REVISE: SectionStatus.REVISED,
    Action.EXTEND: SectionStatus.EXTENDED,
    Action.ADD: SectionStatus.ADDED,
}


def proposals_of(session: Session, run_id: int) -> list[SectionProposal]:
    return list(
        session.exec(
            select(SectionProposal)
            .where(SectionProposal.run_id == run_id)
            .order_by(col(SectionProposal.order), col(SectionProposal.id))
        )
    )


def get_run(session: Session, run_id: int) -> UpdateRun:
    run = session.get(UpdateRun, int(run_id))
    if run is None:
        raise NotFoundError(f"No run {run_id}.")
    return run


#: a section's state as a view showed it: (decision, edited by the analyst)
Seen = tuple[str, bool]
_DOORS = {"app": "in the app", "cli": "from the command line"}


def state_of(proposal: SectionProposal) -> Seen:
    """A proposal's state as a view shows it, to be handed back with a decision."""
    return (str(proposal.decision), proposal.analyst_text is not None)


def decide(
    session: Session,
    run: UpdateRun,
    *,
    approve: Iterable[str] = (),
    reject: Iterable[str] = (),
    approve_all: bool = False,
    edits: dict[str, str] | None = None,
    seen: Mapping[str, Seen] | None = None,
    actor: Actor = APP_USER,
) -> list[SectionProposal]:
    """Approve, reject or edit proposals of a run awaiting review. ``seen``: the state of
    each section as the view the decision was made on showed it (``state_of``); if one
    of them changed since (another tab, the command line), nothing is decided and
    StaleViewError says what it is now, decided where and when. ``actor``: who decides
    and through which door, kept with each decision and in the audit trail."""
    if run.status != RunStatus.AWAITING_REVIEW:
        raise EvergreenError(
            f"Run {run.id} is {run.status}; only a run awaiting review is decided."
        )
    proposals = proposals_of(session, run.id)
    keys = {p.key for p in proposals}
    unknown = sorted((set(approve) | set(reject) | set(edits or {})) - keys)
    if unknown:
        raise EvergreenError(
            f"Run {run.id} has no proposal for {', '.join(unknown)} "
            f"(sections: {', '.join(sorted(keys))})."
        )
    refuse_if_stale(proposals, seen, "decision")
    now = utcnow()
    for p in proposals:
        before = state_of(p), p.analyst_text
        if p.key in set(reject):
            p.decision = Decision.REJECTED
        elif p.key in set(approve) or (approve_all and p.decision == Decision.PENDING):
            p.decision = Decision.APPROVED
        if edits and p.key in edits:
            p.analyst_text = edits[p.key]
            p.decision = Decision.APPROVED
        if (state_of(p), p.analyst_text) != before:
            p.decided_at, p.decided_via, p.decided_by = now, actor.via, actor.name
            action = "edit" if p.analyst_text != before[1] else str(p.decision)
            record(session, actor, action, report_id=run.report_id, run_id=run.id, section=p.key)
        session.add(p)
    session.flush()
    return proposals


def refuse_if_stale(
    proposals: Iterable[SectionProposal], seen: Mapping[str, Seen] | None, what: str
) -> None:
    """StaleViewError when a section's state differs from what ``seen`` says the view
    showed: the first such section, what it is now, decided where and when."""
    if not seen:
        return
    for p in proposals:
        shown = seen.get(p.key)
        if shown is None or tuple(shown) == state_of(p):
            continue
        now = str(p.decision) + (" with an edit" if p.analyst_text is not None else "")
        door = _DOORS.get(p.decided_via or "", "elsewhere")
        by = f" by {p.decided_by}" if p.decided_by else ""
        when = f"{by} {door} at {p.decided_at:%Y-%m-%d %H:%M} UTC" if p.decided_at else ""
        raise StaleViewError(
            f"\u201c{p.heading or p.key}\u201d was {now}{when}, after this page showed it "
            f"{shown[0]}: your {what} was not saved. The page now shows it as it is; "
            "decide again if you still want to."
        )


def commit_run(
    session: Session,
    run: UpdateRun,
    *,
    approve_all: bool = False,
    seen: Mapping[str, Seen] | None = None,
    actor: Actor = APP_USER,
) -> Any:
    """Turn the run's decided proposals into the next immutable version. ``seen``: the
    decisions as the view the commit was asked on showed them; a commit on a view that
    has changed since is refused (StaleViewError), as a decision is.

    The run's move to committed is a compare-and-set on its status (awaiting review), in
    the same transaction as the version: if a cancel got there first the flush fails with
    StaleDataError and no version is written."""
    _hold(session, run)
    refuse_if_stale(proposals_of(session, run.id), seen, "commit")
    proposals = decide(session, run, approve_all=approve_all, actor=actor)
    _refuse_pending(proposals)
    report = session.get(Report, run.report_id)
    parent = _parent_of_run(session, report, run)
    newest = {
        m: session.get(Snapshot, sid)
        for m, sid in pool_snapshots(session, report.id, run.as_of).items()
    }
    drafts = _drafts(proposals, newest)
    version = commit_version(
        session,
        report,
        title=parent.title,
        drafts=drafts,
        as_of=run.as_of,
        markers={m: snap.id for m, snap in newest.items()},
        run=run,
        metrics=_continuity_metrics(session, parent, drafts),
        committed_by=actor.name,
    )
    run.status = RunStatus.COMMITTED
    run.finished_at = utcnow()
    run.progress = f"committed version {version.number}"
    record(session, actor, "commit", report_id=report.id, run_id=run.id, version=version.number)
    session.add(run)
    session.flush()
    faults.point("commit")  # the version exists only if this transaction ends well
    return version


def _refuse_pending(proposals: list[SectionProposal]) -> None:
    """A commit is refused while a proposal is still pending."""
    pending = [p.key for p in proposals if p.decision == Decision.PENDING]
    if pending:
        raise EvergreenError(
            f"{len(pending)} proposal(s) still pending ({', '.join(pending)}): approve or reject "
            "them, or use --approve-all."
        )


def _parent_of_run(session: Session, report: Report, run: UpdateRun) -> ReportVersion:
    """The report's latest version, refused when it is not the one the run started from."""
    parent = get_version(session, report)
    if run.base_version_id is not None and parent.id != run.base_version_id:
        raise EvergreenError(
            f"Report {report.id} moved on (version {parent.number}) since run {run.id} started; "
            "start a new update."
        )
    return parent


def _drafts(
    proposals: list[SectionProposal], newest: dict[int, Snapshot | None]
) -> list[SectionDraft]:
    """The sections of the new version: each decided proposal's text (the analyst's edit,
    the approved revision or the old text) with its status and its claims."""
    drafts: list[SectionDraft] = []
    for p in proposals:
        accepted = p.decision == Decision.APPROVED
        if p.action == Action.REMOVE and accepted:
            continue
        if p.action == Action.ADD and not accepted:
            continue
        if accepted and p.analyst_text is not None:
            text, status = (
                p.analyst_text,
                (SectionStatus.REVISED if p.action == Action.KEEP else STATUS_FOR[p.action]),
            )
        elif accepted and p.action not in (Action.KEEP, Action.REMOVE):
            text, status = p.new_text or "", STATUS_FOR[p.action]
        else:
            text, status = p.old_text or "", SectionStatus.KEPT
        claims = plan_commit(text, p.claims or [], newest, p.quotes or [])
        drafts.append(
            SectionDraft(SectionDoc(p.key, p.heading, p.level, text), status, claims=claims)
        )
    return drafts


def _continuity_metrics(
    session: Session, parent: ReportVersion, drafts: list[SectionDraft]
) -> dict[str, Any]:
    """How much of the parent's text and outline the new version keeps."""
    old_doc = load_doc(session, parent)
    new_sections = [d.doc for d in drafts]
    return continuity(
        _text(old_doc.sections),
        _text(new_sections),
        outline_of(old_doc.sections),
        outline_of(new_sections),
    ).as_dict()


def _hold(session: Session, run: UpdateRun) -> None:
    """Take the run's row for this commit before anything is written: a compare-and-set
    that keeps it awaiting review. A second committer or a cancel waits for this
    transaction and then finds the run moved on; if one of them got here first, this
    commit is refused with what happened."""
    if set_status(session, run.id, RunStatus.AWAITING_REVIEW, expect=(RunStatus.AWAITING_REVIEW,)):
        return
    status = session.exec(select(UpdateRun.status).where(UpdateRun.id == run.id)).one()
    if status == RunStatus.CANCELLED:
        raise EvergreenError(f"Run {run.id} was cancelled; nothing was committed.")
    if status == RunStatus.COMMITTED:
        raise EvergreenError(f"Run {run.id} is already committed; there is nothing to commit.")
    raise EvergreenError(
        f"Run {run.id} is {status}; only a run awaiting review is committed (nothing was)."
    )


def _text(sections: Iterable[SectionDoc]) -> str:
    parts = []
    for s in sections:
        if s.level >= 1:
            parts.append("#" * s.level + " " + s.heading)
        parts.append(s.body)
    return "\n\n".join(parts)


def run_result(
    session: Session, run_id: int, *, cost: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The CLI contract for `update` (and `review`)."""
    run = get_run(session, run_id)
    version = session.get(ReportVersion, run.version_id) if run.version_id else None
    summary = run.summary or {}
    totals = run_cost(session, run.id)
    cost = cost or {
        k: totals[k]
        for k in ("llm_calls", "tokens_in", "tokens_out", "searches", "fetches", "seconds")
    }
    return {
        "report_id": run.report_id,
        "run_id": run.id,
        "status": run.status,
        "version": version.number if version else None,
        "actions": summary.get("actions", {}),
        "evidence": summary.get("evidence", {}),
        "cost": cost,
        "writer_calls": summary.get("writer_calls", 0),
        "continuity": (version.metrics if version else None),
        "stale_citations": version.stale_citations if version else None,
        "stale_claims": version.stale_citations if version else None,
        "claims": (version.metrics or {}).get("claims") if version else None,
    }
