"""The incremental update: refresh evidence → discover in the window → propose
keep / revise / extend / add / remove per section → (review) → commit.

A section whose evidence is unchanged or only minor, and that gets no new
evidence, is kept byte-identical with no writer call.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlmodel import Session

from core.anchors import sentence_key, stated_fields
from core.claim_words import short_title
from core.claims import ClaimPlan, check, cited_sentences, claims_of, needs_revision
from core.costs import CostMeter
from core.dates import as_utc, day, utcnow
from core.draft_check import DraftCheck, check_draft
from core.errors import EvergreenError
from core.evidence import Checked, Found, discover, pool_summary, refresh
from core.models import Report, SectionProposal, UpdateRun
from core.overview import DERIVED_KEYS
from core.prune import (
    Budget,
    SourcePlan,
    budget_of,
    drop_markers,
    fit_words,
    keep_fact_lines,
    merge_repeats,
    plan_sources,
    words,
)
from core.report_settings import settings_of
from core.report_state import SectionDoc, make_section_keys
from core.repository import citations_of, get_report, get_version, sections_of
from core.review import proposals_of
from core.runs import (
    RunCancelled,
    call_writer,
    checkpoint,
    run_work,
    start_run,
)
from core.sources.registry import Providers, providers_for
from core.states import Action, ChangeKind, ClaimOutcome, Decision, RunKind, RunStatus
from core.writers import get_writer
from core.writers.base import (
    BudgetExceeded,
    ClaimUpdate,
    EvidenceChange,
    Writer,
    WriterFailed,
    declared_news,
)

TEXT_CHANGES = ("changed", "material", "gone")


def propose(
    session: Session,
    report: Report,
    run: UpdateRun,
    meter: CostMeter,
    providers: Providers,
    writer: Writer,
) -> dict[str, Any]:
    cfg = settings_of(report.settings).model_dump()  # a plain dict of every setting
    base = get_version(session, report)
    sections = sections_of(session, base.id)
    cited = citations_of(session, base.id)
    force = bool((run.summary or {}).get("force_recheck"))

    def progress(text: str) -> None:
        checkpoint(session, run, text, meter)

    checked = refresh(
        session,
        report,
        dict(cited),
        base_as_of=base.as_of,
        as_of=run.as_of,
        fetcher=providers.fetcher,
        temporal=providers.temporal,
        meter=meter,
        run_id=run.id,
        tau=cfg["tau"],
        concurrency=cfg["concurrency"],
        progress=progress,
        force=force,
    )
    by_marker = {c.marker: c for c in checked}
    # Only window activity says something may be new for a section; a changed source
    # does not (refresh handles it), so it does not buy a search.
    flags: list[str] = []
    try:
        found = discover(
            session,
            report,
            question=report.query,
            sections=[(s.key, s.heading, s.body) for s in sections],
            hot_sections=set(),
            window=(as_utc(base.as_of), as_utc(run.as_of)),
            cited_sources={snap.source_id for snap in cited.values()},
            search=providers.search,
            fetcher=providers.fetcher,
            meter=meter,
            run_id=run.id,
            per_query=cfg["discover_results"],
            concurrency=cfg["concurrency"],
            progress=progress,
            temporal=providers.temporal,
            force=force,
        )
    except EvergreenError as exc:  # search down: the refreshed evidence still counts
        if isinstance(exc, RunCancelled):
            raise
        found = []
        flags.append(f"discovery failed, no new evidence searched: {exc}")
    if checked and all(c.kind == ChangeKind.GONE for c in checked) and not found:
        raise EvergreenError(
            f"All {len(checked)} sources of report {report.id} are gone as of {day(run.as_of)} "
            "and no new evidence was found; nothing to update from."
        )
    own = [s for s in sections if s.key not in DERIVED_KEYS]
    plan = plan_sources(
        report.query,
        {
            c.marker: (c.current.title or "", c.current.content)
            for c in checked
            if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
        },
        {
            c.marker: (c.previous.title or "", c.previous.content)
            for c in checked
            if c.kind in TEXT_CHANGES and c.previous is not None and c.previous.content
        },
        {f.evidence.marker: (f.evidence.title, f.evidence.content) for f in found},
        budget_of(cfg),
        [words(s.body) for s in own],
    )
    if plan.scores:  # the pages that would not make the report's cut go to no writer
        found = [f for f in found if f.evidence.marker in plan.admitted]
    assigned: dict[str | None, list[Found]] = {}
    for f in found:
        assigned.setdefault(f.section_key, []).append(f)
    writable = [s for s in own if s.level >= 1]
    orphans = assigned.pop(None, [])
    if len(orphans) == 1 and writable:  # one stray page: the closest section takes it
        target = _orphan_target(orphans[0], own)
        if target is not None:
            assigned.setdefault(target, []).append(orphans[0])
        orphans = []
    # A resumed run keeps the proposals it already wrote (no second writer call).
    done = {p.key: p for p in proposals_of(session, run.id)}
    proposals: list[SectionProposal] = []
    for k, section in enumerate(sections):
        if section.key in done:
            proposals.append(done[section.key])
            continue
        if section.key in DERIVED_KEYS:
            continue  # rebuilt from the other sections below
        progress(f"writing section {k + 1}/{len(sections)}")
        proposal = _propose_section(
            report,
            run,
            meter,
            writer,
            section,
            by_marker,
            assigned.get(section.key, []),
            k,
            claims_of(session, section, cited),
            plan,
            budget_of(cfg),
        )
        session.add(proposal)
        proposals.append(proposal)
    added = [p for p in done.values() if p.action == Action.ADD]
    if added:
        proposals.extend(added)
    elif orphans:
        progress("writing new sections")
        try:
            new_sections = _propose_added(report, run, meter, writer, orphans, sections, cfg)
        except (WriterFailed, BudgetExceeded) as exc:
            # adding sections is optional: the pages stay in the pool for a later update
            new_sections = []
            flags.append(
                f"needs attention: {len(orphans)} new page(s) fit no section and no new "
                f"section could be planned ({exc}); they stay in the evidence pool"
            )
        for proposal in new_sections:
            session.add(proposal)
            proposals.append(proposal)
    if plan.scores:  # something changed: state each fact once
        _merge_repeats([p for p in proposals if p.key not in done])
    progress("updating the overview")
    for proposal in _propose_derived(
        report.query,
        run,
        [s for s in sections if s.key in DERIVED_KEYS and s.key not in done],
        proposals,
        by_marker,
        found,
        {
            s.key: _check_claims(claims_of(session, s, cited), by_marker)
            for s in sections
            if s.key in DERIVED_KEYS
        },
        {s.key: k for k, s in enumerate(sections)},
    ):
        session.add(proposal)
        proposals.append(proposal)
    actions = dict.fromkeys(("keep", "revise", "extend", "add", "remove"), 0)
    for p in proposals:
        actions[p.action] += 1
    run.status = RunStatus.AWAITING_REVIEW
    run.progress = "awaiting review"
    run.summary = {
        "actions": actions,
        "evidence": pool_summary(checked, found),
        "checked": [c.as_dict() for c in checked],
        "flags": flags,
    }
    session.add(run)
    return {"actions": actions, "evidence": run.summary["evidence"]}


def _merge_repeats(proposals: list[SectionProposal]) -> None:
    """One fact, one sentence: a sentence that repeats an earlier one (in any section) is
    removed and its citation joins the earlier one's."""
    live = [p for p in proposals if p.action != Action.REMOVE and p.new_text and p.level >= 1]
    merged, n = merge_repeats({p.key: p.new_text or "" for p in live})
    if not n:
        return
    for p in live:
        text = merged[p.key]
        if text == p.new_text:
            continue
        note = (
            "A sentence repeated a fact stated elsewhere; it was removed and its citation "
            "joined the first."
        )
        p.new_text = text
        p.rationale = f"{p.rationale} {note}".strip()
        if not text.strip():
            p.action = Action.REMOVE
        elif p.action == Action.KEEP:
            p.action = Action.REVISE
        p.decision = Decision.PENDING


def _propose_derived(
    question: str,
    run: UpdateRun,
    existing: list[Any],
    proposals: list[SectionProposal],
    by_marker: dict[int, Checked],
    found: list[Found],
    checks: dict[str, list[dict[str, Any]]],
    order: dict[str, int],
) -> list[SectionProposal]:
    """The overview and key-facts sections rebuilt from the proposed sections and the
    newest snapshots: kept when they come out the same, revised, added or removed."""
    from core.overview import derived_sections
    from core.relevance import Relevance

    quiet = all(p.action == Action.KEEP for p in proposals) and not found
    have = {s.key: s for s in existing}
    if quiet:  # nothing moved: nothing to rebuild (nor to add, on an imported report)
        return [
            _derived_proposal(run, s.key, s.heading, order[s.key], s.body, s.body, checks)
            for s in existing
        ]
    docs = [
        SectionDoc(p.key, p.heading, p.level, p.new_text or "")
        for p in sorted(proposals, key=lambda p: p.order)
        if p.action != Action.REMOVE and p.key not in DERIVED_KEYS
    ]
    pages = {
        m: (c.current.title or "", c.current.content)
        for m, c in by_marker.items()
        if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
    }
    pages.update({f.evidence.marker: (f.evidence.title, f.evidence.content) for f in found})
    built = {
        d.key: d
        for d in derived_sections(docs, pages, lambda h: Relevance(f"{h}: {question}").scores)
    }
    out = []
    for key in DERIVED_KEYS:
        old, new = have.get(key), built.get(key)
        if old is None and new is None:
            continue
        heading = (new or old).heading
        out.append(
            _derived_proposal(
                run,
                key,
                heading,
                order.get(key, 0),
                old.body if old else None,
                new.body if new else None,
                checks,
            )
        )
    return out


def _derived_proposal(
    run: UpdateRun,
    key: str,
    heading: str,
    order: int,
    old: str | None,
    new: str | None,
    checks: dict[str, list[dict[str, Any]]],
) -> SectionProposal:
    if old is None:
        action, why = (
            "add",
            "New: built from the report's sections and its sources' declared facts.",
        )
    elif new is None:
        action, why = "remove", "No cited source declares a status any more."
    elif new == old:
        action, why = (
            "keep",
            "Unchanged: the sections and declared facts it is built from did not change.",
        )
    else:
        action, why = "revise", "Rebuilt from the revised sections and the newest declared facts."
    return SectionProposal(
        run_id=run.id,
        key=key,
        heading=heading,
        level=2,
        order=order,
        action=action,
        old_text=old,
        new_text=new if new is not None else "",
        decision=Decision.APPROVED if action == Action.KEEP else Decision.PENDING,
        rationale=why,
        claims=checks.get(key, []),
    )


def _orphan_target(orphan: Found, sections: list[Any]) -> str | None:
    """The section a single unplaced page fits best, if it fits any at all."""
    from core.evidence import _place

    ev = orphan.evidence
    placed = _place(
        [(ev.url, ev.title, ev.content[:4000])],
        [(s.key, s.heading, s.body) for s in sections],
        scored=True,
    )
    key, score = placed[ev.url]
    if key is None and score <= 0:
        return None
    if key is not None:
        return key
    return next((s.key for s in sections if s.heading), None)


def _markers(body: str) -> list[int]:
    from core.report_state import cited_markers

    return cited_markers(body)


def _evidence_row(c: Checked) -> dict[str, Any]:
    return c.as_dict()


def _found_row(f: Found) -> dict[str, Any]:
    return {
        "marker": f.evidence.marker,
        "url": f.evidence.url,
        "title": f.evidence.title,
        "kind": "new",
        "similarity": None,
        "reasons": [],
        "claims": [],
        "old_snapshot_id": None,
        "new_snapshot_id": f.snapshot.id,
        "old_date": None,
        "new_date": day(f.snapshot.as_of),
        "fit": round(f.score, 3),
    }


def _check_claims(plans: list[ClaimPlan], by_marker: dict[int, Checked]) -> list[dict[str, Any]]:
    checks = []
    for plan in plans:
        c = by_marker.get(plan.marker)
        if c is None:
            checks.append(check(plan, "unchanged", None))
        else:
            checks.append(check(plan, c.kind, c.current))
    return checks


def _claim_updates(
    checks: list[dict[str, Any]], by_marker: dict[int, Checked]
) -> list[ClaimUpdate]:
    out = []
    for c in checks:
        if not needs_revision(c):
            continue
        src = by_marker.get(int(c["marker"]))
        title = ""
        if src is not None:
            snap = src.current or src.previous
            title = (snap.title if snap else "") or src.source.title or src.source.url
        passages = tuple((p["old"], p.get("new")) for p in c.get("passages", []))
        if not passages and c["outcome"] == ClaimOutcome.GONE:
            passages = tuple((s.get("exact", ""), None) for s in c.get("selectors", []))
        out.append(
            ClaimUpdate(
                sentence=str(c["sentence"]),
                marker=int(c["marker"]),
                outcome=str(c["outcome"]),
                passages=passages,
                differences=("the page no longer exists",)
                if src is not None and src.kind == ChangeKind.GONE
                else tuple(d for p in c.get("passages", []) for d in p["differences"]),
                title=title,
            )
        )
    return out


def _explain(updates: list[ClaimUpdate]) -> str:
    """One plain line per changed claim: what the source says now."""
    lines: list[str] = []
    for u in updates:
        if u.differences:
            said = "; ".join(_distinct(u.differences))
            stop = "" if said.endswith((".", ".”", "?”", "!”")) else "."
            line = f"{_named(u.title, u.marker)}: {said}{stop}"
        elif u.outcome == ClaimOutcome.GONE:
            line = f"{_named(u.title, u.marker)} no longer has the passage a sentence cites."
        else:
            line = f"{_named(u.title, u.marker)}: a passage a sentence rests on was rewritten."
        if line not in lines:
            lines.append(line)
    return " ".join(lines)


_ARTICLES = {"a", "an", "the"}


def _gist(side: str) -> str:
    words = [w for w in side.casefold().replace(":", " ").split() if w not in _ARTICLES]
    return " ".join(words)


def _distinct(differences: Iterable[str]) -> list[str]:
    """The differences to say, each once: "a proposed → an approved" goes unsaid beside
    "Status: Proposed → Approved" (the same change, an article apart)."""
    said = list(dict.fromkeys(str(d) for d in differences))
    pairs = [[_gist(side) for side in d.split(" → ")] for d in said]
    keep = []
    for i, d in enumerate(said):
        mine = pairs[i]
        covered = len(mine) == 2 and any(
            j != i
            and len(other) == 2
            and other != mine
            and all(m and f" {m} " in f" {o} " for m, o in zip(mine, other, strict=True))
            for j, other in enumerate(pairs)
        )
        if not covered:
            keep.append(d)
    return keep


def _named(title: str, marker: int) -> str:
    """A source as a rationale names it: its title without subtitle and its marker; a
    source known only by its address is "source [n]" (no raw URL in the text)."""
    name = short_title(title or "")
    if not name or "://" in name or name.startswith("www."):
        return f"source [{marker}]"
    return f"{name} [{marker}]"


def _sources_fit(n: int) -> str:
    """ "1 new source fits" / "3 new sources fit"."""
    return "1 new source fits" if n == 1 else f"{n} new sources fit"


def _unstated_news(body: str, changes: list[EvidenceChange]) -> list[str]:
    """For each cited page whose declared status changed while no sentence citing it states
    that field: one line saying so (the writer is asked to state it)."""
    out = []
    for change in changes:
        labels = declared_news(change)
        if not labels:
            continue
        said = {
            label.casefold()
            for _pos, sentence, markers in cited_sentences(body)
            if change.marker in markers
            for label, _value in stated_fields(sentence)
        }
        missing = [label for label in labels if label.casefold() not in said]
        if missing:
            title = change.new.title if change.new else f"source [{change.marker}]"
            moves = [r.removeprefix("header ") for r in change.reasons if r.startswith("header ")]
            wanted = [m for m in moves if m.split(":", 1)[0].strip() in missing]
            out.append(
                f"{_named(title, change.marker)} now declares {'; '.join(wanted)}, which no "
                "sentence said; the new text states it."
            )
    return out


def _still_stale(body: str, updates: list[ClaimUpdate]) -> list[ClaimUpdate]:
    """Claims the draft still states unrevised (same sentence, still citing the source)."""
    cited = {
        (sentence_key(sentence), marker)
        for _pos, sentence, markers in cited_sentences(body)
        for marker in markers
    }
    return [u for u in updates if (sentence_key(u.sentence), u.marker) in cited]


def _contents(by_marker: dict[int, Checked], new: list[Found]) -> dict[int, str]:
    """marker → the text each cited or new page has now (gone pages left out)."""
    out = {
        m: c.current.content
        for m, c in by_marker.items()
        if c.kind != ChangeKind.GONE and c.current is not None and c.current.content
    }
    out.update({f.evidence.marker: f.evidence.content for f in new if f.evidence.content})
    return out


def _draft_flags(checked: DraftCheck) -> list[str]:
    if not checked.unsupported:
        return []
    markers = ", ".join(f"[{m}]" for m in dict.fromkeys(m for _s, m in checked.unsupported))
    return [
        f"needs attention: {len(checked.unsupported)} new or rewritten sentence(s) have no "
        f"passage in the page they cite ({markers}) that supports them; check them against "
        "the evidence before approving"
    ]


def _corrections(checked: DraftCheck) -> list[str]:
    if not checked.corrected:
        return []
    return [
        "The writer's draft stated a field its page declares otherwise; corrected to the "
        "page's value: " + "; ".join(checked.corrected) + "."
    ]


def _propose_section(
    report: Report,
    run: UpdateRun,
    meter: CostMeter,
    writer: Writer,
    section: Any,
    by_marker: dict[int, Checked],
    new: list[Found],
    order: int,
    plans: list[ClaimPlan],
    plan: SourcePlan,
    budget: Budget,
) -> SectionProposal:
    markers = [m for m in _markers(section.body) if m in by_marker]
    mine = [by_marker[m] for m in markers]
    checks = _check_claims(plans, by_marker)
    updates = _claim_updates(checks, by_marker)
    # what the update takes out before any writer sees the section
    trimmed = keep_fact_lines(
        drop_markers(section.body, [m for m in markers if m in plan.cuts]),
        [m for m in markers if m in plan.superseded],
    )
    titles = {m: _title_of(by_marker[m]) for m in markers}
    pruning = plan.reasons([m for m in markers if m in plan.cuts or m in plan.superseded], titles)
    if trimmed != section.body:
        left = {sentence_key(s) for _p, s, _m in cited_sentences(trimmed)}
        updates = [u for u in updates if sentence_key(u.sentence) in left]
        mine = [c for c in mine if c.marker in _markers(trimmed)]
    changes = [
        EvidenceChange(
            c.marker,
            c.kind,
            c.change.claims if c.change else (),
            c.change.reasons if c.change else (),
            c.evidence(),
        )
        for c in mine
        if c.kind in TEXT_CHANGES
    ]
    flags = [
        f"source [{c.marker}] unreachable: {c.error}" for c in mine if c.kind == ChangeKind.ERROR
    ]
    unverifiable = sorted(
        {
            int(c["marker"])
            for c in checks
            if c["outcome"] == ClaimOutcome.UNSUPPORTED
            and by_marker.get(int(c["marker"])) is not None
            and by_marker[int(c["marker"])].kind not in (ChangeKind.UNCHANGED, ChangeKind.ERROR)
        }
    )
    if unverifiable:
        flags.append(
            "needs attention: sources "
            + ", ".join(f"[{m}]" for m in unverifiable)
            + " changed, and some sentences citing them have no passage there that supports "
            "them, so Evergreen cannot tell whether they still hold"
        )
    base = dict(
        run_id=run.id,
        key=section.key,
        heading=section.heading,
        level=section.level,
        order=order,
        old_text=section.body,
        flags=flags,
        claims=checks,
    )
    evidence = [_evidence_row(c) for c in mine if c.kind != ChangeKind.UNCHANGED] + [
        _found_row(f) for f in new
    ]
    decision = Decision.PENDING if unverifiable else Decision.APPROVED
    news = _unstated_news(trimmed, changes)
    if not updates and not new and not news and trimmed != section.body:
        body, shortened = fit_words(trimmed, plan.scores, budget.words, plan.news, markers)
        pruning += _shortened(shortened, titles, budget)
        return SectionProposal(
            **base,
            action=Action.REVISE if body.strip() else Action.REMOVE,
            new_text=body,
            evidence=evidence,
            rationale=" ".join(pruning),
        )
    if not updates and not new and not news:
        changed = [c for c in mine if c.kind not in (ChangeKind.UNCHANGED, ChangeKind.ERROR)]
        why = (
            "Every cited passage still says what the section says (checked again in the "
            "newest copy of each source), so the section stays as it is."
            if changed
            else "No cited source changed and nothing new was found, so the section stays as it is."
        )
        return SectionProposal(
            **base,
            action=Action.KEEP,
            new_text=section.body,
            decision=decision,
            evidence=evidence,
            rationale=why,
        )
    # A rewritten page whose cited passages are gone still has something to say: its new
    # text is offered to the writer as evidence for the section.
    rewritten = [
        ev
        for m in dict.fromkeys(u.marker for u in updates if u.outcome == ClaimOutcome.GONE)
        if by_marker[m].kind != ChangeKind.GONE and (ev := by_marker[m].evidence()) is not None
    ]
    try:
        draft = call_writer(
            meter,
            "revise",
            writer.name,
            lambda: writer.revise_section(
                report.query,
                section.heading,
                trimmed,
                changes,
                [f.evidence for f in new] + rewritten,
                updates,
            ),
        )
    except (WriterFailed, BudgetExceeded) as exc:
        label = "writer failed" if isinstance(exc, WriterFailed) else "budget exhausted"
        base["flags"] = [*flags, f"needs attention: {label}: {exc}"]
        return SectionProposal(
            **base,
            action=Action.KEEP,
            new_text=section.body,
            decision=Decision.PENDING if updates else Decision.APPROVED,
            evidence=evidence,
            rationale=(
                f"Kept unchanged: {label}. "
                + (
                    _explain(updates) + " Edit the section, or approve to keep it as is."
                    if updates
                    else "Its new evidence is listed for review."
                )
            ).strip(),
        )
    flags += draft.notes
    quotes = list(draft.quotes)
    checked = check_draft(draft.body, section.body, _contents(by_marker, new), quotes)
    draft.body, shortened = fit_words(checked.body, plan.scores, budget.words, plan.news, markers)
    pruning += _shortened(shortened, titles, budget)
    flags += _draft_flags(checked)
    left = _still_stale(draft.body, updates)
    if left and not any(n.startswith("needs attention") for n in draft.notes):
        flags.append(
            f"needs attention: {len(left)} sentence(s) still say what their source no longer "
            "says; edit them before approving"
        )
    explanation = " ".join([_explain(updates), *news, *_corrections(checked), *pruning]).strip()
    if not draft.body.strip():
        return SectionProposal(
            **base,
            action=Action.REMOVE,
            new_text="",
            evidence=evidence,
            quotes=quotes,
            rationale=(
                "Nothing this section says is still supported by its sources. " + explanation
            ).strip(),
        )
    if draft.body == section.body:
        return SectionProposal(
            **base,
            action=Action.KEEP,
            new_text=section.body,
            decision=Decision.PENDING if updates else Decision.APPROVED,
            evidence=evidence,
            quotes=quotes,
            rationale=(
                explanation + " The writer changed nothing; edit the section or approve to keep "
                "it as is."
                if updates
                else "Nothing new fits this section; kept unchanged."
            ).strip(),
        )
    if draft.body.startswith(section.body) and not updates:
        action, why = "extend", f"{_sources_fit(len(new))} this section."
    else:
        action = Action.REVISE
        why = explanation + (f" Also {_sources_fit(len(new))} this section." if new else "")
    return SectionProposal(
        **base,
        action=action,
        new_text=draft.body,
        evidence=evidence,
        quotes=quotes,
        rationale=why.strip(),
    )


def _title_of(c: Checked) -> str:
    snap = c.current or c.previous
    return (snap.title if snap else "") or c.source.title or c.source.url


def _shortened(markers: list[int], titles: dict[int, str], budget: Budget) -> list[str]:
    if not markers:
        return []
    names = ", ".join(f"{titles.get(m) or 'source'} [{m}]" for m in markers)
    return [
        f"Shortened to the section's budget of {budget.words} words: dropped sentences of "
        f"its least relevant sources ({names})."
    ]


def _propose_added(
    report: Report,
    run: UpdateRun,
    meter: CostMeter,
    writer: Writer,
    orphans: list[Found],
    sections: list[Any],
    cfg: dict[str, Any],
) -> list[SectionProposal]:
    bundle = [f.evidence for f in orphans]
    outline = call_writer(
        meter,
        "outline",
        writer.name,
        lambda: writer.propose_outline(report.query, bundle, max(1, len(orphans) // 3)),
    )
    existing = [s.heading for s in sections]
    keys = make_section_keys(existing + [item.heading for item in outline])[len(existing) :]
    out = []
    for n, (key, item) in enumerate(zip(keys, outline, strict=True)):
        mine = [e for e in bundle if e.marker in item.markers]
        try:
            draft = call_writer(
                meter,
                "write",
                writer.name,
                lambda item=item, mine=mine: writer.write_section(report.query, item.heading, mine),
            )
        except (WriterFailed, BudgetExceeded):
            continue  # the new pages stay in the pool; a later update can place them
        checked = check_draft(
            draft.body, "", {e.marker: e.content for e in mine}, list(draft.quotes)
        )
        if not checked.body.strip():
            continue
        out.append(
            SectionProposal(
                run_id=run.id,
                key=key,
                heading=item.heading,
                level=item.level,
                order=len(sections) + n,
                action=Action.ADD,
                old_text=None,
                new_text=checked.body,
                flags=_draft_flags(checked),
                evidence=[_found_row(f) for f in orphans if f.evidence.marker in item.markers],
                quotes=list(draft.quotes),
                rationale=" ".join(
                    [f"{_sources_fit(len(mine))} no existing section.", *_corrections(checked)]
                ),
            )
        )
    return out


def begin_update(
    report_ref: int | str, *, as_of: datetime | None = None, force_recheck: bool = False
) -> int:
    """Validate and register an update run; returns its id at once (work not started).

    ``force_recheck``: fetch every cited source again even when the shared evidence pool
    holds a check of it that is still fresh (another report's, within the freshness window).
    """
    from core.db import session_scope
    from core.validation import check_as_of

    with session_scope() as session:
        report = get_report(session, report_ref)
        base = get_version(session, report)
        when = check_as_of(as_of) or utcnow()
        if as_utc(when) < as_utc(base.as_of):
            raise EvergreenError(
                f"As-of {day(when)} is earlier than the current version's ({day(base.as_of)}); "
                "an update moves forward in time (use `rebuild` for a report at an earlier date)."
            )
        report_id, base_id = report.id, base.id
    options = {"force_recheck": True} if force_recheck else None
    return start_run(report_id, "update", when, base_id, summary=options)


def execute_update(
    run_id: int, *, approve_all: bool = False, lease: int | None = None
) -> dict[str, Any]:
    """Do the work of a registered run: refresh, discover, propose (and commit if asked).

    Safe to call from a background thread or process; progress is committed as it goes.
    ``lease``: the one a take-over (``begin_resume``) won; the work is refused if another
    process took the run over since.
    """
    from core.db import session_scope
    from core.review import commit_run, run_result

    with session_scope() as session:
        run = session.get(UpdateRun, run_id)
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        report = session.get(Report, run.report_id)
        source, writer_name = report.source, settings_of(report.settings).writer
    providers: Providers | None = None
    try:
        with run_work(run_id, lease) as (session, run, meter):
            providers = providers_for(source)  # a provider failure fails the run, visibly
            report = session.get(Report, run.report_id)
            propose(session, report, run, meter, providers, get_writer(writer_name))
            if approve_all:
                commit_run(session, run, approve_all=True)
    finally:
        if providers is not None:
            providers.close()
    with session_scope() as session:
        return run_result(session, run_id, cost=meter.totals())


def update_report(
    report_ref: int | str,
    *,
    as_of: datetime | None = None,
    approve_all: bool = False,
    force_recheck: bool = False,
) -> dict[str, Any]:
    """Propose an update as of ``as_of``; with approve_all, commit it too (CLI `update`)."""
    run_id = begin_update(report_ref, as_of=as_of, force_recheck=force_recheck)
    return execute_update(run_id, approve_all=approve_all)


def begin_resume(run_id: int) -> int:
    """Check that a killed, interrupted or failed update run can continue and take it over
    (status running, this process as its worker). Refusals raise at once, before any work;
    the take-over is one compare-and-set, so of two processes resuming at once one wins.
    Returns the lease this process now holds on the run."""
    from core.db import session_scope
    from core.runs import RESUMABLE, busy_error, open_run_for, take_over, worker_alive

    with session_scope() as session:
        run = session.get(UpdateRun, int(run_id))
        if run is None:
            raise EvergreenError(f"No run {run_id}.")
        if run.kind != RunKind.UPDATE:
            raise EvergreenError(
                f"Run {run.id} is a {run.kind}; only updates resume (start it again instead)."
            )
        if run.status not in RESUMABLE:
            raise EvergreenError(f"Run {run.id} is {run.status}: there is nothing to resume.")
        if run.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and worker_alive(run):
            raise EvergreenError(
                f"Run {run.id} is still being worked on by {run.worker}; watch it instead."
            )
        other = open_run_for(session, run.report_id)
        if other is not None and other.id != run.id:
            raise busy_error(other)
        report = session.get(Report, run.report_id)
        base = get_version(session, report)
        if run.base_version_id is not None and base.id != run.base_version_id:
            raise EvergreenError(
                f"Report {report.id} moved on to version {base.number} since run {run.id} "
                "started; start a new update."
            )
        return take_over(session, run)


def resume_run(run_id: int, *, approve_all: bool = False) -> dict[str, Any]:
    """Continue an update run that was killed, interrupted or failed, reusing the snapshots
    and section proposals it already has (CLI `resume`, and offered in the app)."""
    lease = begin_resume(run_id)
    return execute_update(run_id, approve_all=approve_all, lease=lease)
