"""The Review screen's section cards, each a Streamlit fragment: a decision reruns its
own card (and the small decision bars), never the whole page with every diff, evidence
table and chart.

The heavy part of a card — diffs, evidence and claim HTML — is a cached read model keyed
by its own proposal's contents (texts and analyst edits); decisions are read fresh from the
database on every card run and laid over it. The decision bars poll the run every few
seconds, so a decision or a commit made in another tab (or from the CLI) shows here too.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st

from core import config
from core.app import actions
from core.app.review_views import _stale_on_commit, review_card
from core.app.run_views import run_info
from core.app.view_text import esc
from core.domain.labels import decision_label
from core.engine import jobs
from core.engine.audit import DOORS
from core.engine.review import get_run, proposals_of
from core.errors import EvergreenError, StaleViewError
from core.states import Action, Decision, RunStatus
from core.store.db import session_scope
from pages._shared import actor, badge_html, run_action, show_error, unpin_versions

POLL_EVERY = 2.0  # seconds between the decision bars' looks at the run
SEEN_KEY = "eg_review_seen"  # (run, status, decisions) as this tab last showed them
FULL_RERUN_KEY = "eg_review_full_rerun"  # a decision changed what the whole page shows
ERROR_KEY = "eg_review_error"  # (section key or None, message) of a refused decision


# -- read models -----------------------------------------------------------------------------
def _contents(proposal: Any) -> str:
    """What a card's heavy HTML depends on — every field of its proposal but the decision,
    in this database — as one digest."""
    row = proposal.model_dump(exclude={"decision"})
    text = json.dumps([config.database_url(), row], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _decisions(proposals: list[Any]) -> tuple[tuple[str, str, bool], ...]:
    return tuple((p.key, p.decision, p.analyst_text is not None) for p in proposals)


@st.cache_resource(max_entries=256, show_spinner=False)
def _cached_card(
    run_id: int, key: str, contents: str, _session: Any, _proposal: Any, _as_of: Any
) -> dict[str, Any]:
    """One section's card as ``review_card`` builds it, once per content state of its own
    proposal (run, section and digest are the key: an edit rebuilds its card only). A
    resource: shared, never copied — callers copy a card before laying decisions over."""
    del run_id, key, contents  # the cache key
    return review_card(_session, _proposal, _as_of)


def current_cards(run_id: int) -> tuple[list[dict[str, Any]], str]:
    """The run's cards with today's decisions laid over the cached HTML, and the run's
    status, read in one transaction."""
    with session_scope() as session:
        run = get_run(session, run_id)
        status = run.status
        out = []
        for p in proposals_of(session, run_id):
            card = dict(_cached_card(run_id, p.key, _contents(p), session, p, run.as_of))
            card["decision"] = p.decision
            card["decision_label"] = decision_label(p.decision)
            card["edited"] = p.analyst_text is not None
            card["decided"] = decided_note(p)
            card["stale_on_commit"] = _stale_on_commit(p, card)
            out.append(card)
    return out, status


def decided_note(proposal: Any) -> str:
    """ " by ana (command line), 2026-12-08 00:10 UTC": who decided the section last."""
    if not proposal.decided_by or proposal.decided_at is None:
        return ""
    door = DOORS.get(proposal.decided_via or "", "")
    where = f" ({door})" if door else ""
    return f" by {proposal.decided_by}{where}, {proposal.decided_at:%Y-%m-%d %H:%M} UTC"


def remember(run_id: int, status: str, decisions: tuple[tuple[str, str, bool], ...]) -> None:
    """What the whole screen just drew (a full run)."""
    st.session_state[SEEN_KEY] = (run_id, status, decisions)


def drawn(run_id: int, c: dict[str, Any]) -> None:
    """What one card just drew. A decision counts as shown only once its card has redrawn
    it: a click whose callback ran in another fragment's run (the bars poll) leaves its
    card behind, and the bars' next look redraws the screen."""
    seen = st.session_state.get(SEEN_KEY)
    if seen is None or seen[0] != run_id:
        return
    mine = (c["key"], c["decision"], c["edited"])
    decisions = tuple(mine if d[0] == c["key"] else d for d in seen[2])
    st.session_state[SEEN_KEY] = (run_id, seen[1], decisions)


def _pending(cards: list[dict[str, Any]]) -> int:
    return sum(1 for c in cards if c["decision"] == Decision.PENDING)


# -- decisions -------------------------------------------------------------------------------
def _seen(cards: list[dict[str, Any]]) -> dict[str, tuple[str, bool]]:
    """Each section's state as drawn — handed back with a decision or a commit, which is
    refused if the section changed since (another tab, the command line)."""
    return {c["key"]: (str(c["decision"]), bool(c["edited"])) for c in cards}


def _decide(run_id: int, **kwargs: Any) -> None:
    """A decision from a card's button (a callback: it runs before the card reruns).
    Refused on a stale view: the notice goes on the card it was made on (or the first),
    and the whole page redraws as the database has it."""
    try:
        done = actions.decide_on(run_id, actor=actor(), **kwargs)
    except StaleViewError as exc:
        seen = kwargs.get("seen") or {}
        st.session_state[ERROR_KEY] = (next(iter(seen)) if len(seen) == 1 else None, str(exc))
        st.session_state[FULL_RERUN_KEY] = True
        return
    except EvergreenError as exc:
        st.session_state[ERROR_KEY] = (None, str(exc))
        return
    if (done.pending_before == 0) != (done.pending_after == 0):  # Commit (im)possible now
        st.session_state[FULL_RERUN_KEY] = True


def _shown_error(key: str) -> None:
    """The notice of a refused decision, on the card it was made on (any card for one
    made in a bar)."""
    pending = st.session_state.get(ERROR_KEY)
    if pending and pending[0] in (None, key):
        del st.session_state[ERROR_KEY]
        show_error(EvergreenError(pending[1]))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _become(n: int) -> str:
    return "becomes" if n == 1 else "become"


def claims_block(c: dict[str, Any]) -> None:
    """The claims whose source passage changed, and how many would be left stale."""
    if not c["claim_changes"]:
        return
    kept, approved = c["stale_if_kept"], c["stale_if_approved"]
    line = f"⚠ {_plural(kept, 'stale claim')} if kept as is"
    if c["action"] == Action.REMOVE:
        line += " · removing the section drops them"
    elif c["changed"]:
        line += (
            f" · {approved} still unchanged in the new text"
            if approved
            else " · the new text revises all of them"
        )
    st.html(
        f'<div class="eg-stale-count">{esc(line)}</div>'
        f'<div class="eg-muted">Claims whose source passage changed:</div>'
        f"{c['claim_changes_html']}"
    )


def edit_box(run_id: int, c: dict[str, Any], *, primary: bool = False) -> None:
    key = c["key"]
    label = "Revised text" if c["action"] == Action.KEEP else "New text"
    st.text_area(
        f"{label} (Markdown; cite sources as [n])",
        value=c["proposed_text"],
        key=f"edit:{key}",
        height=220,
    )

    shown = _seen([c])

    def save() -> None:
        _decide(run_id, edits={key: st.session_state[f"edit:{key}"]}, seen=shown)

    kind = "primary" if primary else "secondary"
    st.button("Save edit and approve", key=f"save:{key}", type=kind, on_click=save)


def _decision_pair(run_id: int, c: dict[str, Any], approve: str, reject_help: str | None) -> None:
    """The card's two decisions side by side: approve (or keep) and reject."""
    key = c["key"]
    b1, b2, _ = st.columns([1, 1, 4])
    b1.button(
        approve,
        key=f"{'keep' if c['action'] == 'keep' else 'approve'}:{key}",
        disabled=c["decision"] == Decision.APPROVED,
        type="primary",
        on_click=_decide,
        args=(run_id,),
        kwargs={"approve": [key], "seen": _seen([c])},
    )
    b2.button(
        "Reject",
        key=f"reject:{key}",
        disabled=c["decision"] == Decision.REJECTED,
        help=reject_help,
        on_click=_decide,
        args=(run_id,),
        kwargs={"reject": [key], "seen": _seen([c])},
    )


def _buttons(run_id: int, c: dict[str, Any]) -> None:
    if c["action"] != Action.KEEP:
        _decision_pair(run_id, c, "Approve", None)
        if c["action"] != Action.REMOVE:
            with st.expander("Edit the new text"):
                edit_box(run_id, c)
        return
    # keep as is, or reject the keep: the analyst revises it by hand
    _decision_pair(run_id, c, "Keep as is", "Keeping it is wrong: revise this section by hand.")
    if c["decision"] == Decision.REJECTED and not c["edited"]:
        stale = c["stale_if_kept"]
        st.caption(
            "Type the revision below and save it. Committed without one, the section "
            "stays as it is"
            + (f" and {_plural(stale, 'claim')} {_become(stale)} stale." if stale else ".")
        )
        edit_box(run_id, c, primary=True)
    else:
        with st.expander("Edit this section"):
            edit_box(run_id, c)


def _head(c: dict[str, Any]) -> None:
    keep = c["action"] == Action.KEEP
    decision = c["decision_label"].lower() + (" (edited)" if c["edited"] else "")
    if keep and c["decision"] == Decision.REJECTED and not c["edited"]:
        decision += " (to be revised)"
    others = [f for f in c["flags"] if f not in c["attention"]]
    flags = "".join(f'<div class="eg-muted">⚑ {esc(f)}</div>' for f in others)
    stats = c["diff_stats"]
    words = f" · +{stats['words_inserted']} / −{stats['words_deleted']} words" if stats else ""
    st.html(
        f'<div class="eg-card-head">{badge_html(c["action_label"], c["action"])}'
        f"{esc(c['heading'])}</div>"
        f'<div class="eg-muted">decision: <b>{esc(decision)}</b>{esc(c.get("decided", ""))}'
        f"{esc(words)}</div>"
    )
    for flag in c["attention"]:  # e.g. the writer failed: the section was kept as it was
        st.warning(flag, icon="⚠️")
    st.html(f"<div>{esc(c['rationale'])}</div>{flags}")


def _body(c: dict[str, Any]) -> None:
    claims_block(c)
    if not c["changed"]:
        with st.expander("Unchanged text", expanded=False):
            st.html(f'<div style="white-space: pre-wrap">{esc(c["old_text"])}</div>')
    else:
        st.html(c["diff_html"])
    if c["evidence"]:
        with st.expander(f"Evidence behind it ({len(c['evidence'])})", expanded=c["changed"]):
            st.html(c["evidence_html"])


@st.fragment
def card(run_id: int, key: str, editable: bool) -> None:
    """One section's card; its buttons rerun only this fragment."""
    if st.session_state.pop(FULL_RERUN_KEY, False):
        st.rerun(scope="app")
    cards, status = current_cards(run_id)
    c = next((c for c in cards if c["key"] == key), None)
    if c is None:
        return
    drawn(run_id, c)
    editable = editable and status == RunStatus.AWAITING_REVIEW
    with st.container(border=True):
        _shown_error(key)
        _head(c)
        _body(c)
        if editable:
            _buttons(run_id, c)


# -- the bars around the cards ---------------------------------------------------------------
def _changed_elsewhere(run_id: int) -> tuple[list[dict[str, Any]], str]:
    """The cards as the database has them now; the whole page reruns when the run's
    status or its decisions differ from what this tab last showed (another tab, the CLI)."""
    seen = st.session_state.get(SEEN_KEY)
    with session_scope() as session:
        status = get_run(session, run_id).status
        decisions = _decisions(proposals_of(session, run_id))
    if seen is not None and seen != (run_id, status, decisions):
        st.rerun(scope="app")
    return [{"key": k, "decision": d, "edited": e} for k, d, e in decisions], status


@st.fragment(run_every=POLL_EVERY)
def top_bar(run_id: int) -> None:
    """Approve all pending, cancel the run, and how many sections are still pending."""
    decisions, _status = _changed_elsewhere(run_id)
    pending = _pending(decisions)
    c1, c2, c3 = st.columns([1, 1, 3])
    if c1.button("Approve all pending", key="approve_all", disabled=not pending):
        _decide(run_id, approve_all=True, seen=_seen(decisions))
        st.rerun(scope="app")
    if c2.button("Cancel this run", key="drop_run"):
        run_action(jobs.cancel, run_id)
    c3.caption(f"{pending} of {len(decisions)} section(s) still pending.")


@st.fragment(run_every=POLL_EVERY)
def commit_bar(run_id: int) -> None:
    """Commit version — possible once every section is decided — and what it leaves stale."""
    _changed_elsewhere(run_id)
    cards, _status = current_cards(run_id)
    pending = _pending(cards)
    if st.button("Commit version", key="commit", type="primary", disabled=bool(pending)):
        commit(run_id, _seen(cards))
    if pending:
        st.caption("Decide every pending section to commit.")
        return
    stale = sum(c["stale_on_commit"] or 0 for c in cards)
    st.caption(
        f"Committing with these decisions leaves {_plural(stale, 'claim')} stale."
        if stale
        else "Committing with these decisions leaves no claim stale."
    )


def commit(run_id: int, seen: dict[str, tuple[str, bool]]) -> None:
    """Commit the decisions as this page shows them (``seen``); if they changed since,
    nothing is committed and the page redraws with the notice."""
    try:
        number = actions.commit(run_id, seen=seen, actor=actor())
    except StaleViewError as exc:
        st.session_state[ERROR_KEY] = (None, str(exc))
        st.rerun(scope="app")
    except EvergreenError as exc:
        show_error(exc)
        return
    unpin_versions()  # the Report screen opens on the new version
    st.session_state["eg_flash"] = f"Committed version {number}."
    st.rerun(scope="app")


def sections(run_id: int, editable: bool) -> None:
    """The cards of a run, with the decision bars when it awaits review."""
    cards, status = current_cards(run_id)
    remember(run_id, status, tuple((c["key"], c["decision"], c["edited"]) for c in cards))
    if not cards:
        return
    st.subheader("Sections")
    if editable:
        top_bar(run_id)
    for c in cards:
        card(run_id, c["key"], editable)
    if editable:
        commit_bar(run_id)


__all__ = ["sections", "run_info"]
