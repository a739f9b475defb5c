"""One existing section's proposal in an update: keep it byte-identical, trim it to what
the source plan keeps, or have the writer revise or extend it — and say why, in plain
words, with the evidence behind it.

``propose_section`` reads the section's case first (``SectionCase``: its claims checked
against the newest copy of each source, what pruning takes out, what a changed page now
declares), calls the writer only when something is to be said, and checks the draft
against the pages before it becomes a proposal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from core.domain.citations import cited_markers
from core.domain.expectations import past_due_notes
from core.domain.keyfacts import declared_line
from core.domain.passages import sentence_key
from core.domain.prune import drop_markers, fit_words, keep_fact_lines
from core.domain.sentences import cited_sentences
from core.domain.source_plan import Budget, SourcePlan
from core.engine.claims import ClaimPlan
from core.engine.costs import CostMeter
from core.engine.draft_check import DraftCheck, check_draft
from core.engine.evidence import Checked, Found
from core.engine.rationales import (
    corrections,
    draft_flags,
    explain,
    shortened,
    sources_fit,
    unstated_news,
)
from core.engine.run_work import call_writer
from core.engine.section_evidence import (
    check_claims,
    claim_updates,
    evidence_row,
    found_row,
    page_texts,
    still_stale,
    title_of,
)
from core.states import TEXT_CHANGES, Action, ChangeKind, ClaimOutcome, Decision
from core.store.models import Report, SectionProposal, UpdateRun
from core.writers.base import (
    BudgetExceeded,
    ClaimUpdate,
    Draft,
    EvidenceChange,
    Extension,
    Writer,
    WriterFailed,
)
from core.writers.revision import settle_summaries


@dataclass(frozen=True)
class Drafting:
    """What every section of one update shares: the report and run, the writer and the
    meter its calls are counted on, the checked sources, the source plan and the budget."""

    report: Report
    run: UpdateRun
    meter: CostMeter
    writer: Writer
    by_marker: dict[int, Checked]
    plan: SourcePlan
    budget: Budget


@dataclass
class SectionCase:
    """A section as the update finds it, before any writer call."""

    section: Any
    order: int
    markers: list[int]  # every source it cites that was checked
    mine: list[Checked]  # those still cited once pruning has trimmed the section
    checks: list[dict[str, Any]]  # each claim against the newest copy of its source
    updates: list[ClaimUpdate]  # the claims to revise
    trimmed: str  # the section with what the source plan cuts taken out
    titles: dict[int, str]
    pruning: list[str]  # why sources were cut or trimmed
    changes: list[EvidenceChange]
    flags: list[str]
    unverifiable: list[int]  # changed sources with claims that have no passage there
    new: list[Found]  # new pages placed in this section
    news: list[str]  # declared facts that changed and no sentence states
    settled: list[ClaimUpdate]  # claims ``trimmed`` already revised (declared fields)
    as_of: date | None = None  # the update's date: a plan stated for before it is past

    @property
    def quiet(self) -> bool:
        """Nothing for a writer to say: no claim to revise, no new page, no news."""
        return not self.updates and not self.new and not self.news

    @property
    def gains_only(self) -> bool:
        """The writer only adds to it: no claim to revise and no cited page gone."""
        return (
            not self.quiet
            and not self.updates
            and all(c.kind != ChangeKind.GONE and c.new is not None for c in self.changes)
        )

    def extension(self) -> Extension:
        return Extension(
            self.section.heading, self.trimmed, self.changes, [f.evidence for f in self.new]
        )

    def proposal(self, **fields: Any) -> SectionProposal:
        evidence = [evidence_row(c) for c in self.mine if c.kind != ChangeKind.UNCHANGED]
        return SectionProposal(
            run_id=fields.pop("run_id"),
            key=self.section.key,
            heading=self.section.heading,
            level=self.section.level,
            order=self.order,
            old_text=self.section.body,
            flags=[*fields.pop("flags", self.flags), *self._past_due(fields.get("new_text"))],
            claims=self.checks,
            evidence=evidence + [found_row(f) for f in self.new],
            **fields,
        )

    def _past_due(self, text: str | None) -> list[str]:
        """A note for each sentence of the proposed ``text`` that states a plan whose date
        is over (the page may not have caught up): the analyst checks it."""
        return past_due_notes(text or "", self.as_of) if self.as_of else []


def propose_section(
    d: Drafting, case: SectionCase, drafted: Draft | None = None
) -> SectionProposal:
    """Keep, trim, revise, extend or remove one section (see the module's docstring).
    ``drafted``: the writer's draft for it, already made with others' (``extend_together``)."""
    if case.quiet:
        return _trimmed(d, case) if case.trimmed != case.section.body else _kept(d, case)
    if drafted is not None:
        return _from_draft(d, case, drafted)
    try:
        draft = _draft(d, case)
    except (WriterFailed, BudgetExceeded) as exc:
        return _writer_failed(d, case, exc)
    return _from_draft(d, case, draft)


def extend_together(d: Drafting, cases: list[SectionCase]) -> dict[str, Draft]:
    """section key → its draft, for the sections that only gain, asked of the writer at
    once (``Writer.extend_sections``) when there are two or more: each request repeats the
    rules, the question and the reply format. When the joint request fails, none is
    returned, and each section is drafted on its own."""
    gaining = [c for c in cases if c.gains_only]
    if len(gaining) < 2:
        return {}
    writer = d.writer
    try:
        drafts = call_writer(
            d.meter,
            "revise",
            writer.name,
            lambda: writer.extend_sections(d.report.query, [c.extension() for c in gaining]),
        )
    except (WriterFailed, BudgetExceeded):
        return {}
    return {c.section.key: draft for c, draft in zip(gaining, drafts, strict=True)}


def section_case(
    d: Drafting, section: Any, new: list[Found], order: int, plans: list[ClaimPlan]
) -> SectionCase:
    by_marker, plan = d.by_marker, d.plan
    markers = [m for m in cited_markers(section.body) if m in by_marker]
    mine = [by_marker[m] for m in markers]
    checks = check_claims(plans, by_marker)
    updates = claim_updates(checks, by_marker)
    # what the update takes out before any writer sees the section
    superseded = [m for m in markers if m in plan.superseded]
    trimmed = keep_fact_lines(
        drop_markers(section.body, [m for m in markers if m in plan.cuts]),
        superseded,
        {m: line for m in superseded if (line := _declared(by_marker[m])) is not None},
    )
    titles = {f.evidence.marker: f.evidence.title or f.evidence.url for f in new}
    titles |= {m: title_of(by_marker[m]) for m in markers}
    pruning = plan.reasons([m for m in markers if m in plan.cuts or m in plan.superseded], titles)
    if trimmed != section.body:
        left = {sentence_key(s) for _p, s, _m in cited_sentences(trimmed)}
        updates = [u for u in updates if sentence_key(u.sentence) in left]
        mine = [c for c in mine if c.marker in cited_markers(trimmed)]
    # a summary of declared fields takes the values its page declares now: no writer
    trimmed, updates, settled = settle_summaries(trimmed, updates)
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
    unverifiable = _unverifiable(checks, by_marker)
    return SectionCase(
        section=section,
        order=order,
        markers=markers,
        mine=mine,
        checks=checks,
        updates=updates,
        trimmed=trimmed,
        titles=titles,
        pruning=pruning,
        changes=changes,
        flags=_source_flags(mine, unverifiable),
        unverifiable=unverifiable,
        new=new,
        news=unstated_news(trimmed, changes),
        settled=settled,
        as_of=d.run.as_of.date(),
    )


def _declared(checked: Checked) -> str | None:
    """What a cited page declares of itself now, as one line (``declared_line``)."""
    ev = checked.evidence()
    return declared_line(ev.title or ev.url, ev.content) if ev is not None else None


def _unverifiable(checks: list[dict[str, Any]], by_marker: dict[int, Checked]) -> list[int]:
    """Changed sources with a claim that has no supporting passage there."""
    return sorted(
        {
            int(c["marker"])
            for c in checks
            if c["outcome"] == ClaimOutcome.UNSUPPORTED
            and by_marker.get(int(c["marker"])) is not None
            and by_marker[int(c["marker"])].kind not in (ChangeKind.UNCHANGED, ChangeKind.ERROR)
        }
    )


def _source_flags(mine: list[Checked], unverifiable: list[int]) -> list[str]:
    flags = [
        f"source [{c.marker}] unreachable: {c.error}" for c in mine if c.kind == ChangeKind.ERROR
    ]
    if unverifiable:
        flags.append(
            "needs attention: sources "
            + ", ".join(f"[{m}]" for m in unverifiable)
            + " changed, and some sentences citing them have no passage there that supports "
            "them, so Evergreen cannot tell whether they still hold"
        )
    return flags


def _trimmed(d: Drafting, case: SectionCase) -> SectionProposal:
    """Only pruning and settled declared fields changed the section: its cut sources'
    sentences go, its field summaries say what their pages declare, then the budget."""
    plan = d.plan
    body, cut = fit_words(case.trimmed, plan.scores, d.budget.words, plan.news, case.markers)
    return case.proposal(
        run_id=d.run.id,
        action=Action.REVISE if body.strip() else Action.REMOVE,
        new_text=body,
        rationale=" ".join(
            [explain(case.settled), *case.pruning, *shortened(cut, case.titles, d.budget)]
        ).strip(),
    )


def _kept(d: Drafting, case: SectionCase) -> SectionProposal:
    changed = [c for c in case.mine if c.kind not in (ChangeKind.UNCHANGED, ChangeKind.ERROR)]
    why = (
        "Every cited passage still says what the section says (checked again in the "
        "newest copy of each source), so the section stays as it is."
        if changed
        else "No cited source changed and nothing new was found, so the section stays as it is."
    )
    return case.proposal(
        run_id=d.run.id,
        action=Action.KEEP,
        new_text=case.section.body,
        decision=Decision.PENDING if case.unverifiable else Decision.APPROVED,
        rationale=why,
    )


def _draft(d: Drafting, case: SectionCase) -> Draft:
    # A rewritten page whose cited passages are gone still has something to say: its new
    # text is offered to the writer as evidence for the section.
    rewritten = [
        ev
        for m in dict.fromkeys(u.marker for u in case.updates if u.outcome == ClaimOutcome.GONE)
        if d.by_marker[m].kind != ChangeKind.GONE and (ev := d.by_marker[m].evidence()) is not None
    ]
    writer = d.writer
    return call_writer(
        d.meter,
        "revise",
        writer.name,
        lambda: writer.revise_section(
            d.report.query,
            case.section.heading,
            case.trimmed,
            case.changes,
            [f.evidence for f in case.new] + rewritten,
            case.updates,
        ),
    )


def _writer_failed(
    d: Drafting, case: SectionCase, exc: WriterFailed | BudgetExceeded
) -> SectionProposal:
    """Kept as it was, flagged; waiting for the analyst when a claim needs revising."""
    label = "writer failed" if isinstance(exc, WriterFailed) else "budget exhausted"
    updates = case.updates
    return case.proposal(
        run_id=d.run.id,
        flags=[*case.flags, f"needs attention: {label}: {exc}"],
        action=Action.KEEP,
        new_text=case.section.body,
        decision=Decision.PENDING if updates else Decision.APPROVED,
        rationale=(
            f"Kept unchanged: {label}. "
            + (
                explain(updates) + " Edit the section, or approve to keep it as is."
                if updates
                else "Its new evidence is listed for review."
            )
        ).strip(),
    )


def _checked_draft(d: Drafting, case: SectionCase, draft: Draft) -> tuple[DraftCheck, list[str]]:
    """The draft checked against the pages and fitted to the budget (``draft.body`` is
    replaced by the result); returns the check and what the budget cut."""
    quotes = list(draft.quotes)
    checked = check_draft(draft.body, case.section.body, page_texts(d.by_marker, case.new), quotes)
    plan = d.plan
    draft.body, cut = fit_words(checked.body, plan.scores, d.budget.words, plan.news, case.markers)
    return checked, shortened(cut, case.titles, d.budget)


def _from_draft(d: Drafting, case: SectionCase, draft: Draft) -> SectionProposal:
    """The writer's draft, checked, as a revise, extend, keep or remove proposal."""
    checked, cut = _checked_draft(d, case, draft)
    updates, body = case.updates, draft.body
    flags = [*case.flags, *draft.notes, *draft_flags(checked)]
    left = still_stale(body, updates)
    if left and not any(n.startswith("needs attention") for n in draft.notes):
        flags.append(
            f"needs attention: {len(left)} sentence(s) still say what their source no longer "
            "says; edit them before approving"
        )
    explanation = " ".join(
        [explain(case.settled + updates), *case.news, *corrections(checked), *case.pruning, *cut]
    ).strip()
    fields: dict[str, Any] = {"run_id": d.run.id, "flags": flags, "quotes": list(draft.quotes)}
    old = case.section.body
    if not body.strip():
        why = "Nothing this section says is still supported by its sources. " + explanation
        return case.proposal(**fields, action=Action.REMOVE, new_text="", rationale=why.strip())
    if body == old:
        why = (
            explanation + " The writer changed nothing; edit the section or approve to keep "
            "it as is."
            if updates
            else "Nothing new fits this section; kept unchanged."
        )
        decision = Decision.PENDING if updates else Decision.APPROVED
        return case.proposal(
            **fields, action=Action.KEEP, new_text=old, decision=decision, rationale=why.strip()
        )
    if body.startswith(old) and not updates:
        fit = [f"{sources_fit(len(case.new))} this section."] if case.new else []
        action, why = Action.EXTEND, " ".join([*case.news, *fit])
    else:
        action = Action.REVISE
        also = f" Also {sources_fit(len(case.new))} this section." if case.new else ""
        why = explanation + also
    return case.proposal(**fields, action=action, new_text=body, rationale=why.strip())
